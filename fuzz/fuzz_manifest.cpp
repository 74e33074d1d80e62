// SPDX-License-Identifier: MIT
// Fuzz target for the backup manifest reader (sync/manifest.hpp): the JSON file a backup left
// in its destination, read back by the next run (it may be damaged, hand-edited or written by
// another version). Any bytes give a manifest or an invalid_input error, never an escaping
// exception, a crash or a sanitizer report; a manifest rendered and read back keeps every path,
// kind, size, time and mode, the hashes of files and the targets of links (what the format
// holds), and a second round changes nothing. The same bytes are read as a range ledger
// (sync/range_plan.hpp, FILE.gpurent-partial.ranges beside a partial copy): a ledger or an
// invalid_input error; one that is read renders and reads back equal, and its ranges are in
// order, inside the file and not overlapping.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sync/manifest.hpp"
#include "sync/range_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto l = gpurent::parse_range_ledger(text); !l) {
    if (l.error().code != gpurent::Errc::invalid_input || l.error().message.empty()) {
      std::abort();
    }
  } else {
    const auto back = gpurent::parse_range_ledger(gpurent::render_range_ledger(*l));
    if (!back || *back != *l) {
      std::abort();
    }
    std::uint64_t end = 0;
    for (const auto& r : l->done) {
      if (r.span.offset < end || r.span.offset > l->size || r.span.length > l->size - r.span.offset) {
        std::abort();
      }
      end = r.span.offset + r.span.length;
    }
  }
  const auto m = gpurent::parse_manifest(text);
  if (!m) {
    if (m.error().code != gpurent::Errc::invalid_input || m.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  const auto again = gpurent::parse_manifest(gpurent::render_manifest(*m));
  if (!again || again->host != m->host || again->finished_unix != m->finished_unix ||
      again->entries.size() != m->entries.size()) {
    std::abort();  // render and parse disagree
  }
  for (auto a = m->entries.begin(), b = again->entries.begin(); a != m->entries.end(); ++a, ++b) {
    const auto& x = a->second;
    const auto& y = b->second;
    if (a->first != b->first || x.kind != y.kind || x.size != y.size || x.mtime_ns != y.mtime_ns || x.mode != y.mode ||
        (x.kind == gpurent::EntryKind::file && x.sha256 != y.sha256) ||
        (x.kind == gpurent::EntryKind::symlink && x.link_target != y.link_target)) {
      std::abort();
    }
  }
  const auto third = gpurent::parse_manifest(gpurent::render_manifest(*again));
  if (!third || *third != *again) {
    std::abort();
  }
  (void)gpurent::is_valid_utf8(text);
  return 0;
}
