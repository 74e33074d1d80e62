# SPDX-License-Identifier: MIT
# The linker. The 2-core CI links some 40 executables per build (the test binaries, the fuzz
# targets), twice (docs/benchmarks.md "CI time"):
# - g++: GNU gold (part of binutils, so no extra package) links in about half the time of the
#   default BFD linker.
# - clang (the sanitizer build with the libFuzzer targets, and scripts/fuzz.sh): LLVM's lld where
#   installed (lld-19, which `scripts/deps.sh --fuzz` installs with clang-19); gold warns on every
#   link against clang-19's sanitizer runtimes, so clang never uses it.
# Where the compiler cannot use the faster linker, the default stays.
include(CheckLinkerFlag)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  check_linker_flag(CXX -fuse-ld=gold GPURENT_HAVE_GOLD)
  if(GPURENT_HAVE_GOLD)
    add_link_options(-fuse-ld=gold)
    # A section per function, so that gold can place the code a start runs side by side
    # (cmake/start_order.txt, written by scripts/start_order.py; docs/benchmarks.md, "Issue #40:
    # the code a start runs, side by side").
    add_compile_options(-ffunction-sections)
  endif()
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  check_linker_flag(CXX -fuse-ld=lld GPURENT_HAVE_LLD)
  if(GPURENT_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
