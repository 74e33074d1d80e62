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
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  # GCC 12 reports std::string concatenation/copies inlined at -O2 as out of bounds (GCC bugs
  # 105329, 105651, 107138: false positives in libstdc++'s char_traits). Keep them as warnings.
  target_compile_options(gpurent_warnings INTERFACE -Wno-error=array-bounds -Wno-error=restrict
    -Wno-error=stringop-overflow -Wno-error=stringop-overread)
endif()
if(GPURENT_WERROR)
  target_compile_options(gpurent_warnings INTERFACE -Werror)
endif()
