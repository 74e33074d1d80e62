// SPDX-License-Identifier: MIT
#pragma once
// PURE: what a push sends, from the local tree and the server's listing of the destination,
// and how the work is split over channels. A file is sent when the server lacks it, holds
// something else there, or its size or modification second differs (tar keeps whole seconds);
// a directory when the server lacks it; a symlink when the server's differs. Nothing on the
// server is deleted here (`push --delete` is sync/push_delete.hpp).
#include <chrono>
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

// The stream cut into at most `parts` consecutive groups by weight (bytes plus 1 KiB per entry for
// its header and the per-file work on the server); none empty. The first group gets `first_share`
// of the weight (0: an equal share), the others equal shares of the rest.
[[nodiscard]] std::vector<std::vector<std::size_t>> split_stream(const std::vector<std::size_t>& stream,
                                                                 const std::vector<LocalEntry>& local, std::size_t parts,
                                                                 double first_share = 0);

// The share of a stream the first connection should carry when `parts` connections send it: it
// starts at once, each other one `setup` later (connect, authentication, its shell), so with the
// whole stream taking `windowed` over one connection they end together when the first carries
// T = (windowed + (parts - 1) x setup) / parts of it and each other T - setup. Between 1/parts
// and 0.9; 1/parts when nothing is known.
[[nodiscard]] double first_stream_share(std::chrono::duration<double> windowed, std::chrono::duration<double> setup, std::size_t parts);

// The receive window sshd grants each channel (OpenSSH channels.h: CHAN_SES_WINDOW_DEFAULT, 64
// packets of 32 KiB): a channel carries at most this much to the server per round trip.
inline constexpr std::uint64_t k_sshd_channel_window = 2ULL * 1024 * 1024;

// The SSH connections a push opens when --streams does not say (docs/benchmarks.md, "Issue #43:
// ... the connections a push opens"). Sending `bytes` over one connection takes at least
// W = bytes x round_trip / window (each channel waits for the server's window); every connection
// after the first starts `setup` later (its connect, key exchange, authentication and the shell
// that runs its command, as the first one took) while the first sends, so n of them end together
// after (W + (n - 1) x setup) / n, and each also costs the shared CPUs a quarter of its set-up.
// The n in [1, most] with the least time: one on a fast link or for little data; more only where
// the window, not the set-up, bounds the transfer. A round trip of zero (unknown) gives 1.
[[nodiscard]] std::size_t choose_push_sessions(std::uint64_t bytes, std::chrono::duration<double> round_trip,
                                               std::chrono::duration<double> setup, std::size_t most,
                                               std::uint64_t window = k_sshd_channel_window);

struct ByteRange {
  std::size_t entry = 0;  // index into the local entries
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
// Each big file cut into ranges of at most `range_size` bytes, leaving out what `done` holds for
// it (the spans a killed push left verified on the server; sync/range_plan.hpp, spans_to_fetch);
// an empty file with nothing done: one empty range. `first_range` (0: none) is the length of the
// very first range, where the first file has nothing done: the range the connection that sends at
// once takes, longer than the others (first_stream_share), the rest of that file then cut as usual.
[[nodiscard]] std::vector<ByteRange> split_ranges(const std::vector<std::size_t>& big, const std::vector<LocalEntry>& local,
                                                  std::uint64_t range_size,
                                                  const std::map<std::size_t, std::vector<Span>>& done = {},
                                                  std::uint64_t first_range = 0);

}  // namespace gpurent
