// SPDX-License-Identifier: MIT
// Fuzz target for the readers of the one-channel backup protocol (sync/backup_agent.hpp): any
// bytes from a server, in any chunking, give the same listing or error, never a crash or a
// sanitizer report, and the copy reader never claims hashes for names it was not asked.
// The first byte seeds the chunk sizes; the rest is the agent's stdout.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sync/backup_agent.hpp"

namespace {

struct Discard final : gpurent::FileStreamHandler {
  gpurent::Result<void> begin_file(const std::string&, std::uint64_t) override { return {}; }
  gpurent::Result<void> file_data(const char*, std::size_t) override { return {}; }
  gpurent::Result<void> end_file() override { return {}; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const unsigned seed = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  gpurent::AgentListingReader whole;
  const bool whole_ok = whole.feed(text).has_value();
  gpurent::AgentListingReader pieces;
  bool pieces_ok = true;
  std::size_t pos = 0;
  std::size_t step = 1 + seed % 17;
  while (pos < text.size() && pieces_ok && !pieces.done()) {
    const std::size_t n = std::min(step, text.size() - pos);
    pieces_ok = pieces.feed(text.substr(pos, n)).has_value();
    pos += n;
    step = 1 + (step * 7 + seed) % 61;
  }
  if (whole_ok && whole.done()) {
    const auto a = whole.result();
    if (pieces.done() && pieces_ok) {
      const auto b = pieces.result();
      if (a.has_value() != b.has_value() || (a && *a != *b)) {
        std::abort();  // the chunking changed the listing
      }
    }
  }

  Discard discard;
  gpurent::AgentCopyReader copy(discard);
  if (copy.feed(text.data(), text.size())) {
    const std::vector<std::string> asked{"a", "b/c", "d\ne"};
    if (const auto report = copy.finish(asked)) {
      for (const auto& [name, hex] : report->hashes.sums) {
        if (name != "a" && name != "b/c" && name != "d\ne") {
          std::abort();
        }
        if (hex.size() != 64) {
          std::abort();
        }
      }
    }
  }
  return 0;
}
