# MPI for the cluster test (tests/mpi) and example (examples/mpi_hybrid.cpp).
# Optional: the library never uses MPI. Sets WEFT_MPI to TRUE when MPI for
# C++ and an Open MPI mpiexec are found; otherwise WEFT_MPI_MISSING says why,
# and the callers register a test that reports it and is skipped. Only Open
# MPI is accepted because the runner passes mpirun flags that are its own.
set(MPI_CXX_SKIP_MPICXX ON)  # the C API only: the C++ bindings are deprecated
find_package(MPI COMPONENTS CXX QUIET)
find_package(Python3 COMPONENTS Interpreter QUIET)
set(WEFT_MPI FALSE)
if(MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE weft_mpiexec_version ERROR_QUIET
                  TIMEOUT 30)
  string(REGEX MATCH "^[^\n]*" weft_mpiexec_version "${weft_mpiexec_version}")
endif()
if(NOT MPI_CXX_FOUND OR NOT MPIEXEC_EXECUTABLE)
  set(WEFT_MPI_MISSING "MPI not found (apt-get install openmpi-bin libopenmpi-dev)")
elseif(NOT weft_mpiexec_version MATCHES "Open MPI|OpenRTE")  # mpiexec: "OpenRTE", mpirun: "Open MPI"
  set(WEFT_MPI_MISSING "${MPIEXEC_EXECUTABLE} is '${weft_mpiexec_version}', but the runner knows only Open MPI's flags")
elseif(NOT Python3_Interpreter_FOUND)
  set(WEFT_MPI_MISSING "python3 not found (it runs mpirun and checks the ranks)")
else()
  set(WEFT_MPI TRUE)
endif()
set(WEFT_MPIRUN ${PROJECT_SOURCE_DIR}/tests/mpi/mpirun_check.py)

# A ctest test NAME with LABELS that prints why the MPI tests cannot run
# here and is reported as skipped (by its output: echo exits 0).
function(weft_mpi_skipped_test name labels)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E echo "skipped: ${WEFT_MPI_MISSING}")
  set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: " LABELS "${labels}")
endfunction()
