// SPDX-License-Identifier: MIT
// The heap on transparent huge pages: a short command's fresh heap in one 2 MiB page fault instead
// of one fault per 4 KiB (docs/benchmarks.md "Issue #40: the heap on huge pages").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpurent {

struct HeapPages {
  bool advised = false;       // [begin, begin + bytes) is marked MADV_HUGEPAGE and the heap grows into it
  std::uintptr_t begin = 0;   // 2 MiB aligned
  std::size_t bytes = 0;
  std::string_view skipped;   // why not, when !advised
};

// glibc's main arena: large blocks kept in the heap (not one mmap each), the heap extended to the
// next two 2 MiB boundaries, that span marked for huge pages, and the few kilobytes below the
// first boundary left to a block that is never touched, so that every later allocation lands in
// the huge pages. Does nothing (and says why) under the sanitizers' or another allocator, when the
// kernel refuses, or when called a second time. No memory is touched that was not before.
HeapPages back_heap_with_huge_pages() noexcept;

}  // namespace gpurent
