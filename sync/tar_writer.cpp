// SPDX-License-Identifier: MIT
// Header layout from POSIX.1-2017 ustar (name 0..100, mode 100, uid 108, gid 116, size 124,
// mtime 136, checksum 148, typeflag 156, linkname 157..257, magic 257) with GNU tar's magic
// "ustar  " and its 'L'/'K' long-name records.
#include "sync/tar_writer.hpp"

#include <algorithm>
#include <cstring>

namespace gpurent {
namespace {

// An octal field of `len` bytes: len-1 digits and a NUL.
void put_octal(char* h, std::size_t len, std::uint64_t v)
{
  for (std::size_t i = len - 1; i-- > 0;) {
    h[i] = static_cast<char>('0' + (v & 7U));
    v >>= 3;
  }
  h[len - 1] = '\0';
}

// A size: octal while it fits in 11 digits, else GNU base-256 (high bit of the first byte set).
void put_size(char* h, std::uint64_t v)
{
  if (v < (std::uint64_t{1} << 33)) {
    put_octal(h, 12, v);
    return;
  }
  h[0] = static_cast<char>(0x80);
  for (std::size_t i = 11; i >= 1; --i) {
    h[i] = static_cast<char>(v & 0xFFU);
    v >>= 8;
  }
}

std::string block(std::string_view name, std::uint64_t size, std::int64_t mtime, std::uint32_t mode, char type,
                  std::string_view link)
{
  std::string h(k_tar_block, '\0');
  std::memcpy(h.data(), name.data(), std::min<std::size_t>(name.size(), 100));
  put_octal(h.data() + 100, 8, mode & 07777U);
  put_octal(h.data() + 108, 8, 0);
  put_octal(h.data() + 116, 8, 0);
  put_size(h.data() + 124, size);
  put_octal(h.data() + 136, 12, static_cast<std::uint64_t>(std::max<std::int64_t>(mtime, 0)) & 077777777777ULL);
  h[156] = type;
  if (!link.empty()) {
    std::memcpy(h.data() + 157, link.data(), std::min<std::size_t>(link.size(), 100));
  }
  std::memcpy(h.data() + 257, "ustar  ", 8);
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (const char c : h) {
    sum += static_cast<unsigned char>(c);
  }
  put_octal(h.data() + 148, 7, sum);
  h[155] = ' ';
  return h;
}

// A GNU long-name ('L') or long-link ('K') record holding `text`.
std::string long_record(char type, std::string_view text)
{
  std::string out = block("././@LongLink", text.size() + 1, 0, 0644, type, {});
  out += text;
  out.push_back('\0');
  out.append(tar_padding(text.size() + 1), '\0');
  return out;
}

}  // namespace

std::string tar_header(const TarMember& m)
{
  std::string name = m.path;
  char type = '0';
  std::uint64_t size = m.size;
  if (m.kind == EntryKind::directory) {
    name += '/';
    type = '5';
    size = 0;
  } else if (m.kind == EntryKind::symlink) {
    type = '2';
    size = 0;
  }
  std::string out;
  if (m.kind == EntryKind::symlink && m.link_target.size() >= 100) {
    out += long_record('K', m.link_target);
  }
  if (name.size() >= 100) {
    out += long_record('L', name);
  }
  out += block(name, size, m.mtime_s, m.mode, type, m.kind == EntryKind::symlink ? std::string_view(m.link_target) : std::string_view{});
  return out;
}

std::string tar_trailer(std::uint64_t written)
{
  const std::uint64_t end = written + 2 * k_tar_block;
  const std::uint64_t pad = (k_tar_record - end % k_tar_record) % k_tar_record;
  return std::string(static_cast<std::size_t>(2 * k_tar_block + pad), '\0');
}

}  // namespace gpurent
