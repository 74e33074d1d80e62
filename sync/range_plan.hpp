// SPDX-License-Identifier: MIT
#pragma once
// PURE: large files as byte ranges over several SSH connections (`backup` and `push`).
//
// One TCP connection carries at most its socket buffer per round trip (Linux's ceiling is 6 MiB,
// so ~60 MiB/s at 100 ms whatever the link); N connections can carry N times that where the
// CPUs keep up (--streams N; measurements in docs/benchmarks.md, "Parallel streams").
// Which bytes: the gaps a range ledger leaves (a ledger records the ranges a killed run finished
// and verified, so a re-run fetches only the rest), cut into pieces of about two per connection.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

inline constexpr std::uint64_t k_range_mib = 1024 * 1024;
// Files at least this large travel as byte ranges; smaller ones keep the one tar stream.
inline constexpr std::uint64_t k_range_threshold = 64 * k_range_mib;
struct Span {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  auto operator<=>(const Span&) const = default;
};

// One connection's share of a copy, for the report (--json "per_stream").
struct StreamStat {
  std::uint64_t bytes = 0;
  double seconds = 0;        // time its channels were open
  std::uint64_t ranges = 0;  // units it carried: byte ranges (and, for push, tar streams)
};

// The receive window of each range channel when `streams` connections fetch at once: together
// they may hold k_range_window_budget bytes the client has not read yet (so memory stays the
// same whatever N), each at least 256 KiB and at most 16 MiB. Each connection then carries at
// most its window per round trip; N of them the whole budget (16 MiB: 160 MB/s at 100 ms).
inline constexpr std::uint64_t k_range_window_budget = 16 * k_range_mib;
[[nodiscard]] std::uint32_t range_window(std::size_t streams);

// The piece size: about `per_stream` pieces per connection (backup: two, so they end together;
// push: one, each piece costing an exec, its shell and two or three round trips, issue #43), at
// least 8 MiB (one channel set-up per piece) and at most `most`.
[[nodiscard]] std::uint64_t piece_size(std::uint64_t range_bytes, std::size_t streams, std::uint64_t most, std::size_t per_stream = 2);

// The bytes of [0, size) no span of `done` covers, cut into pieces of at most `piece` bytes, in
// order. An empty file gives one empty span when nothing is done (it still has to be created).
[[nodiscard]] std::vector<Span> spans_to_fetch(std::uint64_t size, const std::vector<Span>& done, std::uint64_t piece);

// What a killed copy of one large file had finished: the remote file it was copying (size and
// modification time, so a changed file starts over) and each range that arrived and matched the
// SHA-256 the sending side computed.
struct LedgerRange {
  Span span;
  std::string sha256;  // lowercase hex
  auto operator<=>(const LedgerRange&) const = default;
};
struct RangeLedger {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::vector<LedgerRange> done;  // sorted by offset, not overlapping, inside [0, size)
  auto operator<=>(const RangeLedger&) const = default;
};

// A range ledger is the partial file's name plus this (FILE.gpurent-partial.ranges): JSON for
// backup (below), "OFFSET LENGTH SHA256" lines written by the server for push.
inline constexpr std::string_view k_range_ledger_suffix = ".ranges";

// JSON text <-> ledger. Errc::invalid_input for anything that is not a ledger this version
// writes (ranges out of order, overlapping or past the end are refused, not repaired).
[[nodiscard]] std::string render_range_ledger(const RangeLedger& l);
[[nodiscard]] Result<RangeLedger> parse_range_ledger(std::string_view json_text);
// The finished spans of a ledger.
[[nodiscard]] std::vector<Span> done_spans(const RangeLedger& l);

}  // namespace gpurent
