# Decides whether the CUDA microbenchmarks are built (ROOFLINE_HAVE_CUDA).
# The host library and the CLI never need nvcc.
set(ROOFLINE_HAVE_CUDA OFF)
if(NOT ROOFLINE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # sm_90a: Hopper with wgmma; the kernels that need it check __CUDA_ARCH_FEAT_SM90_ALL.
      set(CMAKE_CUDA_ARCHITECTURES 90a)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # C++17 for device code: CMake 3.25 (Debian 12, CI) knows no CUDA20 dialect for nvcc and
    # refuses to generate; the kernels need nothing newer.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(ROOFLINE_HAVE_CUDA ON)
    message(STATUS "roofline: CUDA microbenchmarks enabled (${CMAKE_CUDA_COMPILER}, sm_${CMAKE_CUDA_ARCHITECTURES})")
  elseif(ROOFLINE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ROOFLINE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER or CUDACXX)")
  else()
    message(STATUS "roofline: no CUDA compiler found; the microbenchmarks are skipped")
  endif()
endif()
