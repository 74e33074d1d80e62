// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/heap_pages.hpp"

namespace {

// The VmFlags of the mapping that holds `at`, from /proc/self/smaps ("" when none does).
std::string vm_flags_at(std::uintptr_t at)
{
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0;
    unsigned long hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.starts_with("VmFlags:")) {
      return line;
    }
  }
  return "";
}

bool kernel_has_thp()
{
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(f, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

}  // namespace

TEST_CASE("the heap grows into huge pages, once", "[heap_pages]")
{
  const auto h = gpurent::back_heap_with_huge_pages();
  const auto again = gpurent::back_heap_with_huge_pages();
  CHECK_FALSE(again.advised);
  CHECK_FALSE(again.skipped.empty());
  if (!h.advised) {
    // The sanitizers' allocators, or a kernel without THP: nothing was changed, and it says why.
    INFO(h.skipped);
    CHECK_FALSE(h.skipped.empty());
    CHECK(h.bytes == 0);
    return;
  }
  CHECK(again.skipped == "already done");  // a second call changes nothing
  CHECK(h.begin % (2U << 20U) == 0);
  CHECK(h.bytes == (4U << 20U));
  if (kernel_has_thp()) {
    CHECK(vm_flags_at(h.begin).find(" hg") != std::string::npos);
  }
  // A block the free lists cannot serve comes from the advised span, and is usable.
  auto* block = static_cast<unsigned char*>(std::malloc(512U << 10U));
  REQUIRE(block != nullptr);
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  CHECK(at >= h.begin);
  CHECK(at < h.begin + h.bytes);
  for (std::size_t i = 0; i < (512U << 10U); i += 4096) {
    block[i] = static_cast<unsigned char>(i / 4096);
  }
  CHECK(block[4096] == 1);
  CHECK(block[(100U << 12U)] == 100);
  std::free(block);
}
