// SPDX-License-Identifier: MIT
#pragma once
// PURE: what a push sends, from the local tree and the server's listing of the destination,
// and how the work is split over channels. A file is sent when the server lacks it, holds
// something else there, or its size or modification second differs (tar keeps whole seconds);
// a directory when the server lacks it; a symlink when the server's differs. Nothing on the
// server is deleted here (`push --delete` is sync/push_delete.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sync/local_tree.hpp"
#include "sync/range_plan.hpp"
#include "sync/transport.hpp"

namespace gpurent {

struct PushPlan {
  std::vector<std::size_t> stream;  // indices into the local entries, in order: through tar
  std::vector<std::size_t> big;     // files of at least the threshold: byte ranges over several channels
  std::uint64_t files_total = 0;    // regular files in the local tree
  std::uint64_t bytes_total = 0;
  std::uint64_t files_to_send = 0;
  std::uint64_t bytes_to_send = 0;
};

[[nodiscard]] PushPlan plan_push(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote,
                                 std::uint64_t big_threshold);

// The stream cut into at most `parts` consecutive groups of about equal weight (bytes plus 1 KiB
// per entry for its header and the per-file work on the server); none empty.
[[nodiscard]] std::vector<std::vector<std::size_t>> split_stream(const std::vector<std::size_t>& stream,
                                                                 const std::vector<LocalEntry>& local, std::size_t parts);

struct ByteRange {
  std::size_t entry = 0;  // index into the local entries
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
// Each big file cut into ranges of at most `range_size` bytes, leaving out what `done` holds for
// it (the spans a killed push left verified on the server; sync/range_plan.hpp, spans_to_fetch);
// an empty file with nothing done: one empty range.
[[nodiscard]] std::vector<ByteRange> split_ranges(const std::vector<std::size_t>& big, const std::vector<LocalEntry>& local,
                                                  std::uint64_t range_size,
                                                  const std::map<std::size_t, std::vector<Span>>& done = {});

}  // namespace gpurent
