// SPDX-License-Identifier: MIT
#pragma once
// The tar streams that carry many small files through one SSH channel: `backup` reads what the
// server's `tar -cf - --format=gnu` writes, `push` writes what the server's `tar -x` reads. The
// format work is libarchive's (sync/tar_archive.cpp, in the IO module, so `plan` never loads it);
// this header is the interface the pure code uses, and its table comes through sync/io_tables.hpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

inline constexpr std::size_t k_tar_block = 512;
// GNU tar reads and writes records of 20 blocks; the written stream is padded to a whole one.
inline constexpr std::size_t k_tar_record = 20 * k_tar_block;

struct TarMember {
  std::string path;                 // relative, '/'-separated, no trailing '/'
  EntryKind kind = EntryKind::file; // file, directory or symlink
  std::uint64_t size = 0;           // files only
  std::int64_t mtime_s = 0;         // seconds since the epoch (negative: written as 0)
  std::uint32_t mode = 0644;        // permission bits (07777)
  std::string link_target;          // symlinks
};

// Reads a tar stream fed in pieces as it arrives. Regular files go to the handler in pieces
// (holes of sparse members as zeros); directories, links and other members are skipped.
class TarStreamReader {
public:
  virtual ~TarStreamReader() = default;
  // Any number of bytes; an error for a malformed stream or the handler's error (then every
  // later call returns it too). Small pieces may be held (up to 1 MiB) and read later.
  [[nodiscard]] virtual Result<void> feed(const char* data, std::size_t size) = 0;
  // Reads what feed() held: call it at the end of the input, before finished() and after_end().
  [[nodiscard]] virtual Result<void> flush() = 0;
  // True once the end-of-archive blocks were read.
  [[nodiscard]] virtual bool finished() const noexcept = 0;
  // What followed the end-of-archive blocks (tar's zero padding to its record size, then whatever
  // the remote command printed after tar), up to the limit given to make_reader.
  [[nodiscard]] virtual const std::string& after_end() const noexcept = 0;
  [[nodiscard]] virtual bool after_end_truncated() const noexcept = 0;
};

// Writes a GNU-format tar stream (long names and link targets as 'L'/'K' records, sizes of 8 GiB
// and more in base-256; owner 0 with no names, as the server extracts with --no-same-owner). The
// caller holds the bytes: headers and padding are appended to a string, a member's data is the
// caller's own buffer (tar stores it verbatim, so nothing is copied).
class TarStreamWriter {
public:
  virtual ~TarStreamWriter() = default;
  // Appends to `out` every block before the member's data (long-name records, the header).
  [[nodiscard]] virtual Result<void> begin_member(const TarMember& m, std::string& out) = 0;
  // `size` bytes of the current file's data, which the caller sends as they are.
  [[nodiscard]] virtual Result<void> member_data(const char* data, std::size_t size) = 0;
  // Appends the padding after the member's data (all of its declared size must have been given).
  [[nodiscard]] virtual Result<void> end_member(std::string& out) = 0;
  // Appends the end of the archive: two zero blocks, then zeros to a whole record.
  [[nodiscard]] virtual Result<void> finish(std::string& out) = 0;
};

struct TarEngine {
  std::unique_ptr<TarStreamReader> (*make_reader)(FileStreamHandler& handler, std::size_t keep_after_end);
  std::unique_ptr<TarStreamWriter> (*make_writer)();
};

// The IO module's table, loaded on first use (sync/io_tables.hpp); throws when it cannot be.
[[nodiscard]] const TarEngine& tar_engine();

}  // namespace gpurent
