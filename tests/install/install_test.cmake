cmake_minimum_required(VERSION 3.23)
# ctest driver (cmake -P): installs the track_gen package of BUILD_DIR into a scratch prefix,
# then configures, builds and runs the consumer in consumer/ against that prefix: host-only by
# default, the GPU consumer with -DCUDA=ON (-DCUDA_COMPILER, -DCUDA_ARCHITECTURES; reported as
# skipped when it exits 77, i.e. without a GPU).
#
# Variables: BUILD_DIR, WORK_DIR, CONSUMER_DIR, GENERATOR, CXX_COMPILER, RANDOM123_ROOT, VERSION,
#            INCLUDEDIR and CMAKEDIR (install destinations relative to the prefix).

foreach(var BUILD_DIR WORK_DIR CONSUMER_DIR GENERATOR CXX_COMPILER VERSION INCLUDEDIR CMAKEDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_test.cmake: ${var} is not set")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("---- ${what}\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")

run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component track_gen)

# The package must be complete and header-only: headers and CMake files, nothing compiled.
file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
foreach(required ${INCLUDEDIR}/track_gen/track_gen.hpp ${INCLUDEDIR}/track_gen/course.hpp ${CMAKEDIR}/track_genConfig.cmake
                 ${CMAKEDIR}/track_genConfigVersion.cmake ${CMAKEDIR}/track_genTargets.cmake)
  if(NOT "${required}" IN_LIST installed)
    message(FATAL_ERROR "install: ${required} missing; installed: ${installed}")
  endif()
endforeach()
foreach(file IN LISTS installed)
  string(FIND "${file}" "${INCLUDEDIR}/track_gen/" in_include)
  string(FIND "${file}" "${CMAKEDIR}/" in_cmake)
  if(NOT ((in_include EQUAL 0 AND file MATCHES "\\.(hpp|cuh)$") OR (in_cmake EQUAL 0 AND file MATCHES "\\.cmake$")))
    message(FATAL_ERROR "install: unexpected file ${file}")
  endif()
endforeach()

# Random123 is re-found by the consumer's find_package through the RANDOM123_ROOT environment
# variable (empty when it is in a default location).
set(ENV{RANDOM123_ROOT} "${RANDOM123_ROOT}")
# A clean environment: the consumer must not pick up CUDA or the source tree by accident.
unset(ENV{CPATH})
unset(ENV{CPLUS_INCLUDE_PATH})
unset(ENV{CMAKE_PREFIX_PATH})
set(cuda_args)
set(exe track_gen_consumer)
if(CUDA)
  set(cuda_args -DCONSUMER_CUDA=ON -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES})
  set(exe track_gen_consumer_cuda)
endif()
run("configure the consumer" ${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
    -DTRACK_GEN_EXPECTED_PREFIX=${prefix} -DTRACK_GEN_EXPECTED_VERSION=${VERSION} ${cuda_args})
run("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --verbose)
execute_process(COMMAND "${WORK_DIR}/build/${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("---- run the consumer\n${out}")
if(rc EQUAL 77)
  message("SKIP: the consumer was built; it needs a GPU to run")
  message(FATAL_ERROR "skipped")  # turned into a skip by SKIP_REGULAR_EXPRESSION
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "run the consumer failed (${rc})")
endif()
