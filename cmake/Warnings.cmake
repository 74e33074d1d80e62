# SPDX-License-Identifier: MIT
# gpurent::warnings — every first-party target links this INTERFACE target.
add_library(gpurent_warnings INTERFACE)
add_library(gpurent::warnings ALIAS gpurent_warnings)
target_compile_options(gpurent_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion -Wnull-dereference
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(gpurent_warnings INTERFACE -Wmisleading-indentation -Wduplicated-cond
    -Wlogical-op)
endif()
if(GPURENT_WERROR)
  target_compile_options(gpurent_warnings INTERFACE -Werror)
endif()
