# What `cmake --install` puts under the prefix, and the Debian package CPack makes of it
# (docs/install.md): the binary, the reports' schemas and the bundled data (share/roofline/), the
# CMake package of the core library (find_package(roofline): roofline::core), and the Python
# module (python/CMakeLists.txt).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS roofline RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)

# The binary embeds the bundled data; the installed copies are for reading and as templates for
# --hardware-dir and --models-dir files.
set(roofline_data_dir "${CMAKE_INSTALL_DATADIR}/roofline")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/schema/" DESTINATION "${roofline_data_dir}/schema" COMPONENT runtime
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/hardware/" DESTINATION "${roofline_data_dir}/hardware" COMPONENT runtime
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/models/" DESTINATION "${roofline_data_dir}/models" COMPONENT runtime
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/calibrations/" DESTINATION "${roofline_data_dir}/calibrations"
        COMPONENT runtime FILES_MATCHING PATTERN "*.json")

# The core library and its headers (core includes nothing of the areas above it).
set_target_properties(roofline_core PROPERTIES EXPORT_NAME core)
install(TARGETS roofline_core EXPORT rooflineTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT dev)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/roofline/core/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/roofline/core"
        COMPONENT dev)
install(FILES "${PROJECT_BINARY_DIR}/src/generated/include/roofline/core/version.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/roofline/core" COMPONENT dev)
set(roofline_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/roofline")
install(EXPORT rooflineTargets NAMESPACE roofline:: DESTINATION "${roofline_cmake_dir}" COMPONENT dev)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/rooflineConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/rooflineConfig.cmake" INSTALL_DESTINATION "${roofline_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/rooflineConfigVersion.cmake" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/rooflineConfig.cmake" "${PROJECT_BINARY_DIR}/rooflineConfigVersion.cmake"
        DESTINATION "${roofline_cmake_dir}" COMPONENT dev)

# cpack -G DEB: one package under /usr, its library dependencies found by dpkg-shlibdeps; with the
# Python module, the interpreter version it was built for.
set(CPACK_PACKAGE_NAME roofline)
set(CPACK_PACKAGE_VENDOR "roofline")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "roofline maintainers")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(ROOFLINE_HAVE_PYTHON)
  math(EXPR roofline_python_next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${roofline_python_next_minor})")
endif()
include(CPack)
