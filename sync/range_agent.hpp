// SPDX-License-Identifier: MIT
#pragma once
// PURE: the server's side of a byte range that `backup` fetches (the range `push` sends is
// range_write_command in sync/push_agent.hpp). POSIX sh plus coreutils' dd and tee.
//
//   stdout: exactly the bytes [offset, offset + length) of the file (fewer when it shrank);
//   stderr: ... "gpurent-range\0" DD_STATUS "\0" SHA256 "\0" last, the SHA-256 the server computed
//           of the bytes it sent (tee into a FIFO read by openssl, sha256sum or shasum: no second
//           read), empty without a hashing tool; DD_STATUS "missing" when the file is gone or
//           unreadable.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

// The shell lines that set $H to the first SHA-256 tool that works ("" when none).
[[nodiscard]] std::string_view pick_hash_lines();

[[nodiscard]] std::string range_read_command(std::string_view path, std::uint64_t offset, std::uint64_t length);

struct RangeReadReport {
  bool missing = false;  // the file was gone or unreadable
  int dd_status = 0;
  std::string sha256;    // empty: no hashing tool on the server
};
// The command's stderr (other lines before the report are ignored). Errc::invalid_input when
// there is no report (the shell or dd was killed).
[[nodiscard]] Result<RangeReadReport> parse_range_read_report(std::string_view err);

}  // namespace gpurent
