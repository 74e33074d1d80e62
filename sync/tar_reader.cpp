// SPDX-License-Identifier: MIT
// Tar layout from POSIX.1-2017 pax/ustar (512-byte headers: name 0..100, size 124..136,
// typeflag 156, magic 257, prefix 345..500) and GNU tar's 'L' long-name members.
#include "sync/tar_reader.hpp"

#include "sync/tar_writer.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace gpurent {
namespace {

constexpr std::size_t k_block = 512;

std::string_view field(const char* h, std::size_t off, std::size_t len)
{
  std::string_view f(h + off, len);
  const auto nul = f.find('\0');
  return nul == std::string_view::npos ? f : f.substr(0, nul);
}

std::uint64_t padding_for(std::uint64_t size)
{
  return (k_block - size % k_block) % k_block;
}

// pax records: "<len> key=value\n"
void parse_pax(std::string_view text, std::string& path, std::uint64_t& size, bool& has_size)
{
  while (!text.empty()) {
    const auto sp = text.find(' ');
    if (sp == std::string_view::npos) {
      return;
    }
    std::size_t n = 0;
    for (const char c : text.substr(0, sp)) {
      if (c < '0' || c > '9') {
        return;
      }
      n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    if (n <= sp + 1 || n > text.size()) {
      return;
    }
    std::string_view rec = text.substr(sp + 1, n - sp - 1);
    if (!rec.empty() && rec.back() == '\n') {
      rec.remove_suffix(1);
    }
    const auto eq = rec.find('=');
    if (eq != std::string_view::npos) {
      const auto key = rec.substr(0, eq);
      const auto value = rec.substr(eq + 1);
      if (key == "path") {
        path = std::string(value);
      } else if (key == "size") {
        std::uint64_t v = 0;
        bool ok = !value.empty();
        for (const char c : value) {
          ok = ok && c >= '0' && c <= '9';
          v = v * 10 + static_cast<std::uint64_t>(c - '0');
        }
        if (ok) {
          size = v;
          has_size = true;
        }
      }
    }
    text.remove_prefix(n);
  }
}

}  // namespace

std::optional<std::uint64_t> parse_tar_number(std::string_view f) noexcept
{
  if (!f.empty() && (static_cast<unsigned char>(f.front()) & 0x80) != 0) {
    std::uint64_t v = static_cast<unsigned char>(f.front()) & 0x7F;
    for (std::size_t i = 1; i < f.size(); ++i) {
      if (v > (UINT64_MAX >> 8)) {
        return std::nullopt;
      }
      v = (v << 8) | static_cast<unsigned char>(f[i]);
    }
    return v;
  }
  std::uint64_t v = 0;
  bool digits = false;
  for (const char c : f) {
    if (c == '\0' || (c == ' ' && digits)) {
      break;
    }
    if (c == ' ') {
      continue;
    }
    if (c < '0' || c > '7' || v > (UINT64_MAX >> 3)) {
      return std::nullopt;
    }
    v = v * 8 + static_cast<std::uint64_t>(c - '0');
    digits = true;
  }
  if (!digits) {
    return std::nullopt;
  }
  return v;
}

Result<void> TarReader::on_header()
{
  if (std::all_of(m_header, m_header + k_block, [](char c) { return c == '\0'; })) {
    if (++m_zero_blocks >= 2) {
      m_finished = true;
    }
    return {};
  }
  m_zero_blocks = 0;
  // Checksum: sum of all bytes with the checksum field taken as spaces.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < k_block; ++i) {
    sum += (i >= 148 && i < 156) ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(m_header[i]);
  }
  const auto stored = parse_tar_number(std::string_view(m_header + 148, 8));
  if (!stored || *stored != sum) {
    return fail(Errc::invalid_input, "tar stream: bad header checksum; the transfer was corrupted or is not tar");
  }
  auto size = parse_tar_number(std::string_view(m_header + 124, 12));
  if (!size) {
    return fail(Errc::invalid_input, "tar stream: bad size field");
  }
  const char type = m_header[156];
  if (type == 'L' || type == 'x') {
    m_meta_type = type;
    m_meta.clear();
    m_left = *size;
    m_pad = padding_for(*size);
    if (*size > (1U << 20)) {
      return fail(Errc::invalid_input, "tar stream: oversized extended header");
    }
    m_state = m_left > 0 ? State::meta : (m_pad > 0 ? State::padding : State::header);
    return {};
  }
  std::string name;
  if (!m_long_name.empty()) {
    name = std::move(m_long_name);
    m_long_name.clear();
  } else {
    const auto prefix = field(m_header, 345, 155);
    const auto base = field(m_header, 0, 100);
    const bool ustar = std::memcmp(m_header + 257, "ustar", 5) == 0;
    name = (ustar && !prefix.empty() && std::memcmp(m_header + 257, "ustar\0", 6) == 0) ? std::string(prefix) + "/" + std::string(base)
                                                                                       : std::string(base);
  }
  if (m_has_pax_size) {
    size = m_pax_size;
    m_has_pax_size = false;
  }
  m_left = *size;
  m_pad = padding_for(*size);
  m_regular = type == '0' || type == '\0' || type == '7';
  if (type == '5' || type == '2' || type == '1') {
    m_left = 0;  // no data for directories and links
    m_pad = 0;
  }
  if (m_regular) {
    TRY(m_handler.begin_file(name, m_left));
    if (m_left == 0) {
      TRY(m_handler.end_file());
      m_regular = false;
    }
  }
  m_state = m_left > 0 ? State::data : (m_pad > 0 ? State::padding : State::header);
  return {};
}

Result<void> TarReader::feed(const char* data, std::size_t size)
{
  while (size > 0) {
    if (m_finished) {
      // Zero padding to tar's record size, then what the remote command printed after tar.
      const std::size_t room = m_after_end_limit - std::min(m_after_end_limit, m_after_end.size());
      m_after_end.append(data, std::min(size, room));
      m_after_end_truncated = m_after_end_truncated || size > room;
      return {};
    }
    switch (m_state) {
    case State::header: {
      const std::size_t take = std::min(size, k_block - m_header_fill);
      std::memcpy(m_header + m_header_fill, data, take);
      m_header_fill += take;
      data += take;
      size -= take;
      if (m_header_fill == k_block) {
        m_header_fill = 0;
        TRY(on_header());
      }
      break;
    }
    case State::data:
    case State::meta: {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_left));
      if (m_state == State::meta) {
        m_meta.append(data, take);
      } else if (m_regular) {
        TRY(m_handler.file_data(data, take));
      }
      data += take;
      size -= take;
      m_left -= take;
      if (m_left == 0) {
        if (m_state == State::meta) {
          if (m_meta_type == 'L') {
            m_long_name = m_meta.substr(0, m_meta.find('\0'));
          } else {
            std::string path;
            parse_pax(m_meta, path, m_pax_size, m_has_pax_size);
            if (!path.empty()) {
              m_long_name = path;
            }
          }
        } else if (m_regular) {
          TRY(m_handler.end_file());
          m_regular = false;
        }
        m_state = m_pad > 0 ? State::padding : State::header;
      }
      break;
    }
    case State::padding: {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_pad));
      data += take;
      size -= take;
      m_pad -= take;
      if (m_pad == 0) {
        m_state = State::header;
      }
      break;
    }
    }
  }
  return {};
}

std::string make_tar(const std::vector<std::pair<std::string, std::string>>& files)
{
  std::string out;
  for (const auto& [name, data] : files) {
    out += tar_header(TarMember{name, EntryKind::file, data.size(), 0, 0644, {}});
    out += data;
    out.append(tar_padding(data.size()), '\0');
  }
  out.append(2 * k_block, '\0');
  return out;
}

}  // namespace gpurent
