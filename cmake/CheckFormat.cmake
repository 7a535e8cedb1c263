# cmake -DCLANG_FORMAT=... -DSOURCE_DIR=... -P CheckFormat.cmake
# Fails when any C++ or CUDA source of the project is not clang-format clean.
if(NOT CLANG_FORMAT)
  message(FATAL_ERROR "clang-format not found: install Debian's clang-format")
endif()
file(GLOB_RECURSE sources
  "${SOURCE_DIR}/include/*.hpp" "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp"
  "${SOURCE_DIR}/kernels/*.cu" "${SOURCE_DIR}/kernels/*.cuh" "${SOURCE_DIR}/kernels/*.hpp" "${SOURCE_DIR}/kernels/*.cpp"
  "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/tests/*.hpp" "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/fuzz/*.cpp"
  "${SOURCE_DIR}/python/*.cpp")
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror ${sources}
                RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message("${errors}")
  message(FATAL_ERROR "unformatted sources: run clang-format -i on the files above")
endif()
list(LENGTH sources count)
message(STATUS "${count} files are clang-format clean")
