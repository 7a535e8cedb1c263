# Decides whether the Python module (python/) is built (ROOFLINE_HAVE_PYTHON): wherever Python 3's
# headers and pybind11 are found (Debian: python3-dev, pybind11-dev), skipped with one status line
# otherwise. The top-level CMakeLists.txt then builds the libraries position-independent: the
# module is a shared object that links them.
set(ROOFLINE_PYTHON "AUTO" CACHE STRING "Build the Python module: AUTO (where pybind11 and Python 3 headers are found), ON (required), OFF")
set_property(CACHE ROOFLINE_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(ROOFLINE_HAVE_PYTHON OFF)

if(ROOFLINE_PYTHON STREQUAL "OFF")
  message(STATUS "roofline: Python module off (ROOFLINE_PYTHON=OFF)")
elseif(ROOFLINE_SANITIZE OR ROOFLINE_FUZZ)
  # A sanitized extension needs the sanitizer runtime preloaded into the interpreter.
  message(STATUS "roofline: no Python module in a sanitizer build")
else()
  # Debian's pybind11 and pytest are packages of the system interpreter; a pyenv or conda python3
  # earlier on PATH has neither. -DPython3_EXECUTABLE=... picks another.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  set(roofline_python_required "")
  if(ROOFLINE_PYTHON STREQUAL "ON")
    set(roofline_python_required REQUIRED)
  endif()
  find_package(Python3 3.8 ${roofline_python_required} QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 2.6 CONFIG ${roofline_python_required} QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(ROOFLINE_HAVE_PYTHON ON)
    message(STATUS "roofline: Python module for ${Python3_EXECUTABLE} ${Python3_VERSION} (pybind11 ${pybind11_VERSION})")
  else()
    message(STATUS "roofline: no Python module (needs Python 3 headers and pybind11: apt install python3-dev pybind11-dev)")
  endif()
endif()
