// SPDX-License-Identifier: MIT
#include "sync/git_index.hpp"

#include <cstdint>

namespace gpurent {
namespace {

constexpr std::size_t k_header = 12;
constexpr std::uint16_t k_extended = 0x4000;
constexpr std::uint16_t k_skip_worktree = 0x4000;  // in the extended flags

std::uint32_t be32(std::string_view b, std::size_t at)
{
  return (std::uint32_t{static_cast<unsigned char>(b[at])} << 24) | (std::uint32_t{static_cast<unsigned char>(b[at + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(b[at + 2])} << 8) | std::uint32_t{static_cast<unsigned char>(b[at + 3])};
}

std::uint16_t be16(std::string_view b, std::size_t at)
{
  return static_cast<std::uint16_t>((static_cast<unsigned>(static_cast<unsigned char>(b[at])) << 8) |
                                    static_cast<unsigned char>(b[at + 1]));
}

Error bad(const std::string& why)
{
  return Error{Errc::invalid_input, "git index: " + why};
}

// Entries with object names of `hash_size` bytes (20: SHA-1, 32: SHA-256).
Result<std::vector<std::string>> parse_entries(std::string_view b, std::uint32_t version, std::uint32_t count, std::size_t hash_size)
{
  // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the object name, flags (2).
  const std::size_t fixed = 40 + hash_size + 2;
  std::vector<std::string> paths;
  std::string previous;
  std::size_t pos = k_header;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t start = pos;
    if (b.size() < pos + fixed) {
      return std::unexpected(bad("entry " + std::to_string(i) + " is cut short"));
    }
    const std::uint16_t flags = be16(b, pos + fixed - 2);
    pos += fixed;
    bool skip = false;
    if ((flags & k_extended) != 0) {
      if (version < 3 || b.size() < pos + 2) {
        return std::unexpected(bad("entry " + std::to_string(i) + " has extended flags it cannot have"));
      }
      skip = (be16(b, pos) & k_skip_worktree) != 0;
      pos += 2;
    }
    std::string path;
    if (version == 4) {
      // Path compression: a varint of bytes to drop from the previous path, then the rest.
      std::uint64_t drop = 0;
      unsigned char c = 0;
      int bytes = 0;
      do {
        if (pos >= b.size() || ++bytes > 9) {
          return std::unexpected(bad("entry " + std::to_string(i) + " has a bad path prefix"));
        }
        c = static_cast<unsigned char>(b[pos++]);
        drop = bytes == 1 ? (c & 0x7FU) : (((drop + 1) << 7) | (c & 0x7FU));
      } while ((c & 0x80U) != 0);
      if (drop > previous.size()) {
        return std::unexpected(bad("entry " + std::to_string(i) + " drops more than the previous path"));
      }
      const auto nul = b.find('\0', pos);
      if (nul == std::string_view::npos) {
        return std::unexpected(bad("entry " + std::to_string(i) + " has no end"));
      }
      path = previous.substr(0, previous.size() - drop);
      path.append(b.substr(pos, nul - pos));
      pos = nul + 1;
    } else {
      const auto nul = b.find('\0', pos);
      if (nul == std::string_view::npos) {
        return std::unexpected(bad("entry " + std::to_string(i) + " has no end"));
      }
      path = std::string(b.substr(pos, nul - pos));
      // 1 to 8 NULs pad the entry to a multiple of 8 bytes.
      const std::size_t len = nul - start;
      pos = start + ((len + 8) & ~std::size_t{7});
      if (pos > b.size()) {
        return std::unexpected(bad("entry " + std::to_string(i) + " is cut short"));
      }
    }
    if (path.empty()) {
      return std::unexpected(bad("entry " + std::to_string(i) + " has an empty path"));
    }
    previous = path;
    if (!skip) {
      paths.push_back(std::move(path));
    }
  }
  // What follows: extensions (4-byte signature, 4-byte size, data), then the checksum.
  while (b.size() >= pos + 8 + hash_size) {
    const std::uint32_t size = be32(b, pos + 4);
    if (b.size() - pos - 8 < size) {
      return std::unexpected(bad("an extension is cut short"));
    }
    pos += 8 + size;
  }
  if (b.size() != pos + hash_size) {
    return std::unexpected(bad("trailing bytes after the entries"));
  }
  return paths;
}

}  // namespace

Result<std::vector<std::string>> parse_git_index(std::string_view b)
{
  if (b.size() < k_header || b.substr(0, 4) != "DIRC") {
    return std::unexpected(bad("not an index (no DIRC signature)"));
  }
  const std::uint32_t version = be32(b, 4);
  if (version < 2 || version > 4) {
    return std::unexpected(bad("version " + std::to_string(version) + " is not one this gpurent reads (2, 3, 4)"));
  }
  const std::uint32_t count = be32(b, 8);
  if (count > b.size() / 62) {
    return std::unexpected(bad("more entries than bytes"));
  }
  auto sha1 = parse_entries(b, version, count, 20);
  if (sha1) {
    return sha1;
  }
  auto sha256 = parse_entries(b, version, count, 32);
  return sha256 ? sha256 : sha1;
}

}  // namespace gpurent
