// SPDX-License-Identifier: MIT
// Fuzz target for the readers of what the backup's remote commands print
// (sync/remote_listing.hpp): the NUL-separated `find -printf` listing, its epoch times and the
// hashing script's output, then the backup plan made from the listing (sync/backup_plan.hpp).
// Any bytes give entries or an invalid_input error, never a crash or a sanitizer report; a
// listing read back renders to the same entries; every path the plan acts on stays inside the
// destination; hashes are claimed only for names asked.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sync/backup_plan.hpp"
#include "sync/remote_listing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const auto entries = gpurent::parse_find_listing(text);
  if (!entries) {
    if (entries.error().code != gpurent::Errc::invalid_input || entries.error().message.empty()) {
      std::abort();
    }
  } else {
    const auto again = gpurent::parse_find_listing(gpurent::render_find_listing(*entries));
    if (!again || *again != *entries) {
      std::abort();  // render and parse disagree
    }
    const auto plan = gpurent::plan_backup(*entries, gpurent::Manifest{}, {}, gpurent::Filters{});
    for (const auto& a : plan.actions) {
      if (!gpurent::is_safe_relative_path(a.entry.path)) {
        std::abort();  // a remote name would be written outside the destination
      }
      if (a.kind == gpurent::ActionKind::make_symlink && !a.link_outside &&
          !gpurent::link_stays_inside(a.entry.path, a.entry.link_target)) {
        std::abort();
      }
    }
  }

  // Every NUL-separated field as a find time.
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find('\0', start);
    const auto field = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (const auto ns = gpurent::parse_epoch_ns(field); ns && (*ns > 9'001'000'000'000'000'000LL || *ns < -9'001'000'000'000'000'000LL)) {
      std::abort();
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }

  const std::vector<std::string> asked{"a", "b/c", "d\ne", "-dash", "back\\slash"};
  const auto hashes = gpurent::parse_hash_output(text, asked);
  if (hashes) {
    for (const auto& [name, hex] : hashes->sums) {
      bool was_asked = false;
      for (const auto& a : asked) {
        was_asked = was_asked || a == name;
      }
      if (!was_asked || hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
        std::abort();  // a hash for a name not asked, or not a SHA-256
      }
    }
  }
  return 0;
}
