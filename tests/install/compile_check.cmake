cmake_minimum_required(VERSION 3.23)
# ctest driver (cmake -P): compiles host_tu.cpp with the C++ compiler alone (no nvcc), links it,
# and runs it. Two modes:
#   EXPECT_CUDA_RUNTIME=0: include paths are the library and Random123 only; the CUDA toolkit
#     must be invisible (the backend::host promise: plain C++ without the toolkit).
#   EXPECT_CUDA_RUNTIME=1: the toolkit's include paths (runtime + CCCL) are visible as well, so
#     config.hpp takes cuda::stream_ref and the host backend must still work.
#
# With EXPECT_ERROR (a regex) the compilation must fail instead, with a diagnostic matching it.
#
# Variables: CXX_COMPILER, SOURCE, WORK_DIR, INCLUDE_DIRS ('|'-separated), EXPECT_CUDA_RUNTIME,
#            DEFINES ('|'-separated, optional), EXPECT_ERROR (optional).

foreach(var CXX_COMPILER SOURCE WORK_DIR INCLUDE_DIRS EXPECT_CUDA_RUNTIME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "compile_check.cmake: ${var} is not set")
  endif()
endforeach()

# Compiler-wide include variables would smuggle paths in: the check is about the command line.
unset(ENV{CPATH})
unset(ENV{CPLUS_INCLUDE_PATH})
unset(ENV{C_INCLUDE_PATH})
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The compiler's default include directories, in search order.
execute_process(COMMAND ${CXX_COMPILER} -xc++ -E -v - INPUT_FILE /dev/null OUTPUT_QUIET ERROR_VARIABLE verbose)
string(REGEX MATCH "#include <\\.\\.\\.> search starts here:\n(.*)End of search list" _ "${verbose}")
string(REGEX REPLACE "\n" ";" listed "${CMAKE_MATCH_1}")
set(default_dirs)
foreach(dir IN LISTS listed)
  string(STRIP "${dir}" dir)
  if(NOT dir STREQUAL "")
    list(APPEND default_dirs "${dir}")
  endif()
endforeach()

set(system_flags)
if(NOT EXPECT_CUDA_RUNTIME)
  # Some machines put the toolkit's headers on the compiler's default path (symlinks in
  # /usr/local/include, Debian's nvidia-cuda-toolkit in /usr/include). Hide those directories:
  # drop the default search list (-nostdinc) and give back every other directory, in order.
  set(kept)
  set(hidden)
  foreach(dir IN LISTS default_dirs)
    if(EXISTS "${dir}/cuda_runtime_api.h" OR EXISTS "${dir}/cuda/stream_ref" OR EXISTS "${dir}/vector_types.h")
      list(APPEND hidden "${dir}")
    else()
      list(APPEND kept "${dir}")
    endif()
  endforeach()
  if(hidden)
    message("hiding the CUDA headers in the compiler's default include directories: ${hidden}")
    set(system_flags -nostdinc)
    foreach(dir IN LISTS kept)
      list(APPEND system_flags -isystem "${dir}")
    endforeach()
  endif()
  # If the toolkit is still reachable, the promise cannot be shown here: report a skip.
  file(WRITE "${WORK_DIR}/probe.cpp" "#include <cuda_runtime_api.h>\nint main() { return 0; }\n")
  execute_process(COMMAND ${CXX_COMPILER} ${system_flags} -fsyntax-only "${WORK_DIR}/probe.cpp"
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(probe_rc EQUAL 0)
    message("SKIP: ${CXX_COMPILER} finds <cuda_runtime_api.h> without any -I; the no-CUDA check cannot be made here")
    message(FATAL_ERROR "skipped")  # turned into a skip by SKIP_REGULAR_EXPRESSION
  endif()
endif()

set(flags ${system_flags} -std=c++17 -O2 -Wall -Wextra -DTRACK_GEN_EXPECT_CUDA_RUNTIME=${EXPECT_CUDA_RUNTIME})
string(REPLACE "|" ";" INCLUDE_DIRS "${INCLUDE_DIRS}")
list(REMOVE_DUPLICATES INCLUDE_DIRS)
foreach(dir IN LISTS INCLUDE_DIRS)
  # A default directory (e.g. /usr/include for Debian's Random123) is already searched, and an
  # -I for it would move it ahead of the C++ library's directories (breaking #include_next).
  if(dir STREQUAL "" OR dir IN_LIST default_dirs)
    continue()
  endif()
  list(APPEND flags "-I${dir}")
endforeach()
if(DEFINED DEFINES)
  string(REPLACE "|" ";" DEFINES "${DEFINES}")
  foreach(def IN LISTS DEFINES)
    list(APPEND flags "-D${def}")
  endforeach()
endif()
set(exe "${WORK_DIR}/host_tu")
string(REPLACE ";" " " shown "${CXX_COMPILER} ${flags} ${SOURCE} -o ${exe}")
message("compile: ${shown}")
execute_process(COMMAND ${CXX_COMPILER} ${flags} "${SOURCE}" -o "${exe}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(DEFINED EXPECT_ERROR)
  if(rc EQUAL 0)
    message(FATAL_ERROR "the compilation succeeded; it must fail with a diagnostic matching '${EXPECT_ERROR}'")
  endif()
  if(NOT out MATCHES "${EXPECT_ERROR}")
    message(FATAL_ERROR "the compilation failed without the expected diagnostic '${EXPECT_ERROR}'")
  endif()
  message("failed as expected, with the expected diagnostic")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compilation failed (${rc})")
endif()
execute_process(COMMAND "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "host_tu failed (${rc})")
endif()
