# Decides whether MPI is used (ROOFLINE_HAVE_MPI): the collectives suite then runs one rank per
# GPU under mpirun, NCCL bootstrapped through MPI. Optional: without it bench runs the suite on
# the GPUs of one host only. AUTO uses it only in builds with CUDA: the collectives suite is the
# only user, and a host-only build linking Open MPI would pay its libraries' loading (1.5-2 ms, a
# third of an `op` query: docs/results/2026-12-01-startup.md) on every command.
set(ROOFLINE_MPI "AUTO" CACHE STRING "Use MPI for multi-host collectives: AUTO (where found, in builds with CUDA), ON (required), OFF")
set_property(CACHE ROOFLINE_MPI PROPERTY STRINGS AUTO ON OFF)
set(ROOFLINE_HAVE_MPI OFF)
if(ROOFLINE_MPI STREQUAL "ON" OR (ROOFLINE_MPI STREQUAL "AUTO" AND ROOFLINE_HAVE_CUDA))
  if(ROOFLINE_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(ROOFLINE_HAVE_MPI ON)
    find_program(ROOFLINE_MPIEXEC NAMES mpirun mpiexec HINTS ${MPI_CXX_COMPILER_DIR})
    message(STATUS "roofline: MPI enabled (${MPI_CXX_LIBRARIES}; launcher ${MPIEXEC_EXECUTABLE})")
  else()
    message(STATUS "roofline: no MPI found; bench --mpi is unavailable")
  endif()
elseif(ROOFLINE_MPI STREQUAL "AUTO")
  message(STATUS "roofline: a host-only build: no MPI (bench --mpi needs a CUDA build)")
endif()
