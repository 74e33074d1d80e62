// SPDX-License-Identifier: MIT
#pragma once
// PURE: the remote side of `gpurent push`, POSIX sh plus coreutils and GNU tar (like the backup
// agent, sync/backup_agent.hpp), and readers of what it prints.
//
// The push agent, one exec channel per stream of small files:
//   stdout: the backup agent's listing ("gpurent-agent-1\0d\0", find records, "END\0" STATUS
//           "\0"; with `list` false no records), so AgentListingReader reads it;
//   stdin:  "<N>\n", N bytes of NUL-separated paths to hash once extracted, then a tar archive;
//   stdout: "gpurent-push\0" TAR_STATUS "\0" and the hash script's output (tool "\0" records);
//   stderr: tar's complaints.
//   Errors: "gpurent-agent-error\0" WHAT "\0" (mkdir, cd, tar, mktemp, protocol) and exit 3.
// Large files go as byte ranges, several channels at once (sshd grants each channel a 2 MiB
// window, about 40 MB/s at 50 ms): each range channel writes its bytes into FILE.gpurent-partial
// with dd and prints the SHA-256 the server computed of the bytes it received; one finishing command then
// hashes each whole file, and only when it matches renames it into place with its mode and time.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {

[[nodiscard]] std::string push_agent_command(std::string_view dir, bool list);
// What the client writes before the archive.
[[nodiscard]] std::string push_agent_preamble(const std::vector<std::string>& hash_paths);

struct PushTrailer {
  int tar_status = 0;  // 0: tar extracted everything
  HashOutput hashes;   // tool "none": no hashing tool on the server
};
// The agent's stdout after the listing.
[[nodiscard]] Result<PushTrailer> parse_push_trailer(std::string_view out, const std::vector<std::string>& asked);

// Writes stdin at `offset` of REL.gpurent-partial under `dir`, hashing it as it arrives; when
// exactly `length` bytes arrived and were hashed, appends "OFFSET LENGTH SHA256\n" to the range
// ledger REL.gpurent-partial.ranges (what a killed push's successor need not send again, once
// it has checked the SHA-256 against its own bytes).
[[nodiscard]] std::string range_write_command(std::string_view dir, std::string_view rel, std::uint64_t offset, std::uint64_t length);

// Prints, for each REL whose partial file and range ledger exist under `dir`, REL "\0" and the
// ledger's text (at most 1 MiB) "\0".
[[nodiscard]] std::string push_ledger_command(std::string_view dir, const std::vector<std::string>& rels);
struct PushLedgerRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string sha256;
  auto operator<=>(const PushLedgerRange&) const = default;
};
// rel -> the ledger's well-formed lines (others are skipped: a line cut by a kill, a foreign
// one). Errc::invalid_input when the output is not REL/TEXT pairs.
[[nodiscard]] Result<std::map<std::string, std::vector<PushLedgerRange>>> parse_push_ledgers(std::string_view out);
struct RangeResult {
  int dd_status = 0;
  std::string sha256;  // empty: no hashing tool on the server
};
[[nodiscard]] Result<RangeResult> parse_range_result(std::string_view out);

struct BigFileFinal {
  std::string rel;
  std::uint64_t size = 0;
  std::string sha256;  // the local file's, lowercase hex
  std::uint32_t mode = 0644;
  std::int64_t mtime_s = 0;
};
// Checks each REL.gpurent-partial (size, then SHA-256) and renames the good ones into place.
[[nodiscard]] std::string finalize_command(std::string_view dir, const std::vector<BigFileFinal>& files);
struct FinalResult {
  bool renamed = false;
  std::string sha256;  // what the server computed (empty: no tool; the size was checked)
};
// rel -> result, for the files the command reported.
[[nodiscard]] Result<std::map<std::string, FinalResult>> parse_finalize_output(std::string_view out);

}  // namespace gpurent
