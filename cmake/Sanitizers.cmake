# SPDX-License-Identifier: MIT
if(GPURENT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # Sanitized executables are linked as fixed-position programs: UBSan's check data is ~100 MB of
  # pointers per test binary, and as a position-independent executable every one of them (3.8
  # million) is relocated at each start, ~0.5 s a process on CI's machine, paid by each of the
  # suite's several hundred test processes. The release build stays PIE; the IO module stays PIC.
  string(APPEND CMAKE_EXE_LINKER_FLAGS " -no-pie")
endif()
