// SPDX-License-Identifier: MIT
#pragma once
// PURE: an incremental reader of the tar stream that `tar -cf -` (GNU tar, ustar/gnu/pax
// formats) writes, so many small files travel in one exec channel. Regular files are handed
// to the handler in pieces; directories, links and other members are skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

using TarHandler = FileStreamHandler;  // sync/transport.hpp

class TarReader {
public:
  explicit TarReader(TarHandler& h) : m_handler(h) {}
  // Feed any number of bytes; errors on a malformed stream or a handler error.
  [[nodiscard]] Result<void> feed(const char* data, std::size_t size);
  // True once the end-of-archive blocks were seen.
  [[nodiscard]] bool finished() const noexcept { return m_finished; }
  // The stream ended: true when it ended on a member boundary.
  [[nodiscard]] bool complete() const noexcept { return m_state == State::header && m_header_fill == 0; }
  // What followed the end-of-archive blocks (tar's zero padding to its record size, then
  // whatever the remote command printed after tar), kept up to `limit` bytes.
  [[nodiscard]] const std::string& after_end() const noexcept { return m_after_end; }
  void keep_after_end(std::size_t limit) noexcept { m_after_end_limit = limit; }
  [[nodiscard]] bool after_end_truncated() const noexcept { return m_after_end_truncated; }

private:
  enum class State { header, data, padding, meta };
  Result<void> on_header();

  TarHandler& m_handler;
  State m_state = State::header;
  char m_header[512]{};
  std::size_t m_header_fill = 0;
  std::uint64_t m_left = 0;     // bytes left in the current member's data
  std::uint64_t m_pad = 0;      // padding bytes after it
  bool m_regular = false;       // current member is a regular file given to the handler
  char m_meta_type = 0;         // 'L' (GNU long name) or 'x' (pax header) being collected
  std::string m_meta;
  std::string m_long_name;      // name for the next member
  std::uint64_t m_pax_size = 0;
  bool m_has_pax_size = false;
  int m_zero_blocks = 0;
  bool m_finished = false;
  std::string m_after_end;
  std::size_t m_after_end_limit = 0;
  bool m_after_end_truncated = false;
};

// Size fields: octal (NUL/space terminated) or GNU base-256 (high bit set).
[[nodiscard]] std::optional<std::uint64_t> parse_tar_number(std::string_view field) noexcept;
// For tests and fakes: a GNU-format archive of the given regular files (long names use 'L').
[[nodiscard]] std::string make_tar(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace gpurent
