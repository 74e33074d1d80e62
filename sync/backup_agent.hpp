// SPDX-License-Identifier: MIT
#pragma once
// PURE: the one-channel backup protocol. One remote POSIX-shell script per source root lists
// the tree, waits for the NUL-separated paths to copy on its stdin, then streams them through
// GNU tar while it hashes them, and prints the hashes after the archive. One exec channel, so
// one remote shell start for a whole backup (rented images often run `conda init` or
// `pyenv init` from .bashrc on every channel), and no round trip per file.
//
// stdout, in order:
//   "gpurent-agent-1\0" KIND "\0"           KIND "d" (a directory) or "f" (a single file)
//   find records (6 NUL-terminated fields each, see find_listing_command)
//   "END\0" FIND_STATUS "\0"
//   -- the client sends the paths to copy and EOF --
//   a GNU tar archive of those paths, padded with zeros to tar's record size
//   "gpurent-sums\0" TAR_STATUS "\0" then hash_command's output (tool "\0" records)
// or "gpurent-agent-error\0" WHAT "\0" (missing, cd, mktemp, find, tar) and exit 3.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/tar_stream.hpp"
#include "sync/transport.hpp"

namespace gpurent {

// The script for `root` ("~"-relative paths as remote_shell_path takes them).
[[nodiscard]] std::string backup_agent_command(std::string_view root);
// The agent's stdin: the paths to copy, each followed by a NUL.
[[nodiscard]] std::string agent_path_list(const std::vector<std::string>& rel_paths);
// PURE: WHAT of an agent's "gpurent-agent-error\0" WHAT "\0" at the start of `out` (this agent's,
// and the push agent's, which stops the same way); nullopt when `out` does not start with it whole.
[[nodiscard]] std::optional<std::string_view> agent_error_word(std::string_view out);

// Reads the listing part of the agent's stdout, fed in pieces as it arrives.
class AgentListingReader {
public:
  // Bytes of stdout; returns an error for output that is not the agent's.
  [[nodiscard]] Result<void> feed(std::string_view data);
  // True once "END" and the find status were read (or the agent reported an error).
  [[nodiscard]] bool done() const noexcept { return m_done; }
  // Errc::unsupported for "missing a tool", Errc::not_found for a missing root; else the
  // entries, relative to the root (for a single file: one entry named after the file).
  [[nodiscard]] Result<std::vector<RemoteEntry>> result() const;
  [[nodiscard]] bool root_is_file() const noexcept { return m_kind == "f"; }

private:
  [[nodiscard]] Result<void> scan();

  std::string m_buf;
  std::size_t m_pos = 0;           // start of the first record not yet scanned
  std::size_t m_records_begin = 0; // where find's records start in m_buf
  std::size_t m_records_end = 0;
  std::string m_kind;
  std::string m_error;             // the agent's own error word
  bool m_header = false;
  bool m_done = false;
};

// Reads the copy part: the tar archive (to a FileStreamHandler) and the trailer after it.
class AgentCopyReader {
public:
  explicit AgentCopyReader(FileStreamHandler& handler);
  [[nodiscard]] Result<void> feed(const char* data, std::size_t size) { return m_tar->feed(data, size); }
  // After the channel's EOF: what tar saw and the server's hashes of `asked`, in order asked.
  [[nodiscard]] Result<BulkCopyReport> finish(const std::vector<std::string>& asked) const;

private:
  std::unique_ptr<TarStreamReader> m_tar;
};

}  // namespace gpurent
