// SPDX-License-Identifier: MIT
#pragma once
// PURE: GNU-format tar headers, the writing side of sync/tar_reader.hpp: `gpurent push` streams a
// working tree to the server's `tar -x` through one channel. Names and link targets longer than
// 100 bytes get GNU 'L'/'K' records; sizes of 8 GiB and more are written in GNU base-256. The
// owner is always 0 with no names: the server extracts with --no-same-owner.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sync/transport.hpp"

namespace gpurent {

inline constexpr std::size_t k_tar_block = 512;
// GNU tar reads and writes records of 20 blocks; the stream is padded to a whole one.
inline constexpr std::size_t k_tar_record = 20 * k_tar_block;

struct TarMember {
  std::string path;                 // relative, '/'-separated, no trailing '/'
  EntryKind kind = EntryKind::file; // file, directory or symlink
  std::uint64_t size = 0;           // files only
  std::int64_t mtime_s = 0;         // seconds since the epoch (negative: written as 0)
  std::uint32_t mode = 0644;        // permission bits (07777)
  std::string link_target;          // symlinks
};

// Every block that comes before the member's data: GNU long-name/long-link records, then the
// header. The data follows, padded with tar_padding(size) zero bytes.
[[nodiscard]] std::string tar_header(const TarMember& m);
[[nodiscard]] constexpr std::size_t tar_padding(std::uint64_t size) noexcept
{
  return static_cast<std::size_t>((k_tar_block - size % k_tar_block) % k_tar_block);
}
// The end of the archive after `written` bytes: two zero blocks, then zeros to a whole record.
[[nodiscard]] std::string tar_trailer(std::uint64_t written);

}  // namespace gpurent
