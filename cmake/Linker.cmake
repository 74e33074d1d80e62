# SPDX-License-Identifier: MIT
# The linker. GNU gold (part of binutils, so no extra package) links gpurent's executables in
# about half the time of the default BFD linker: the 2-core CI links some 40 executables per build
# (the test binaries, the fuzz targets' replay drivers), twice (docs/benchmarks.md "CI time").
# g++ builds only: clang-19's sanitizer runtimes make gold warn on every link (the fuzz build keeps
# its default), and where g++ cannot use gold the default stays.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=gold GPURENT_HAVE_GOLD)
  if(GPURENT_HAVE_GOLD)
    add_link_options(-fuse-ld=gold)
  endif()
endif()
