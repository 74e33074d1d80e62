// SPDX-License-Identifier: MIT
#include "common/heap_pages.hpp"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GPURENT_OWN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define GPURENT_OWN_ALLOCATOR 1
#endif
#endif

namespace gpurent {

namespace {

HeapPages skipped(std::string_view why) noexcept
{
  HeapPages h;
  h.skipped = why;
  return h;
}

}  // namespace

HeapPages back_heap_with_huge_pages() noexcept
{
#if defined(GPURENT_OWN_ALLOCATOR)
  return skipped("a sanitizer's allocator");
#elif !defined(__GLIBC__)
  return skipped("not glibc's allocator");
#else
  static bool done = false;
  if (done) {
    return skipped("already done");
  }
  done = true;
  constexpr std::uintptr_t huge_page = 2U << 20U;
  constexpr std::uintptr_t span = 2 * huge_page;  // plan's heap peaks at 1.7 MiB (massif)
  constexpr std::uintptr_t slack = 4096;          // the top chunk's header stays below the boundary
  // A block up to 32 MiB from the heap (glibc's default maps each one over 128 KiB on its own: the
  // market's offers and the options, 4 KiB faults each); freed tops kept up to 64 MiB.
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) == 0 || mallopt(M_TRIM_THRESHOLD, 64 << 20) == 0) {
    return skipped("mallopt refused");
  }
  // The top chunk (the heap's unused end) runs from `top` to the program break.
  const auto brk_before = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t top = brk_before - mallinfo2().keepcost;
  const std::uintptr_t boundary = (top + slack + huge_page - 1) & ~(huge_page - 1);
  // Extend the heap past boundary + span without writing to it: a block from `top` to there,
  // freed at once (it merges back into the top chunk; no trim below 64 MiB). Only its first and
  // last words are written, both outside [boundary, boundary + span).
  void* reach = std::malloc(boundary + span + slack - top);
  if (reach == nullptr) {
    return skipped("no memory");
  }
  const auto reach_at = reinterpret_cast<std::uintptr_t>(reach);
  std::free(reach);
  if (reach_at < top || reach_at > top + slack || reinterpret_cast<std::uintptr_t>(sbrk(0)) < boundary + span) {
    return skipped("the heap is not glibc's contiguous main arena");
  }
  if (madvise(reinterpret_cast<void*>(boundary), span, MADV_HUGEPAGE) != 0) {
    return skipped("the kernel has no transparent huge pages");
  }
  // Below the boundary: one block held for good, its pages never touched (no memory is used), so
  // that the next allocation starts at the boundary.
  static void* below = std::malloc(boundary - top - 2 * sizeof(std::size_t));
  if (below == nullptr) {
    return skipped("no memory");
  }
  HeapPages h;
  h.advised = true;
  h.begin = boundary;
  h.bytes = span;
  return h;
#endif
}

}  // namespace gpurent
