// SPDX-License-Identifier: MIT
#pragma once
// The input of push's channels, read from the local disk as the channel asks for it (never a
// whole archive in memory): a tar stream of many files, or a byte range of one large file. Each
// hashes exactly the bytes it sends, so the server's SHA-256 can be compared with it.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/local_tree.hpp"
#include "sync/sha256.hpp"
#include "sync/tar_stream.hpp"

namespace gpurent {

// The push agent's input for some entries: the preamble (the paths to hash), then the archive.
class TarSource {
public:
  TarSource(std::filesystem::path root, const std::vector<LocalEntry>& local, std::vector<std::size_t> items,
            std::atomic<std::uint64_t>& bytes_done);
  TarSource(const TarSource&) = delete;
  TarSource& operator=(const TarSource&) = delete;
  ~TarSource();

  // The DataSource: fills up to `cap` bytes; 0 at the end.
  [[nodiscard]] Result<std::size_t> read(char* buf, std::size_t cap);
  // The regular files in this stream (the server hashes these), in order.
  [[nodiscard]] const std::vector<std::string>& files() const noexcept { return m_files; }
  // path -> SHA-256 of the bytes sent for it (complete once read() returned 0).
  [[nodiscard]] const std::map<std::string, std::string>& sent_hashes() const noexcept { return m_hashes; }
  // Files that changed, shrank or could not be read while they were sent (with why).
  [[nodiscard]] const std::map<std::string, std::string>& troubled() const noexcept { return m_troubled; }

private:
  [[nodiscard]] Result<void> next_member();
  [[nodiscard]] Result<void> end_file();

  std::filesystem::path m_root;
  const std::vector<LocalEntry>& m_local;
  std::vector<std::size_t> m_items;
  std::atomic<std::uint64_t>& m_bytes_done;
  std::vector<std::string> m_files;
  std::map<std::string, std::string> m_hashes;
  std::map<std::string, std::string> m_troubled;
  std::string m_pending;            // preamble, headers, padding, trailer not yet handed out
  std::size_t m_pending_pos = 0;
  std::size_t m_next = 0;           // next item
  const LocalEntry* m_file = nullptr;
  int m_fd = -1;
  std::uint64_t m_left = 0;         // bytes of the current file still to send
  std::unique_ptr<TarStreamWriter> m_tar;
  Sha256 m_hash;
  bool m_ended = false;
};

// `length` bytes of a file from `offset`, hashed as they are read.
class RangeSource {
public:
  RangeSource(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length, std::atomic<std::uint64_t>& bytes_done);
  RangeSource(const RangeSource&) = delete;
  RangeSource& operator=(const RangeSource&) = delete;
  ~RangeSource();
  [[nodiscard]] Result<std::size_t> read(char* buf, std::size_t cap);
  [[nodiscard]] std::string sha256() { return m_hash.finish_hex(); }
  // Empty unless the file could not be read whole (shrank, I/O error).
  [[nodiscard]] const std::string& trouble() const noexcept { return m_trouble; }

private:
  int m_fd = -1;
  std::uint64_t m_offset;
  std::uint64_t m_left;
  std::atomic<std::uint64_t>& m_bytes_done;
  Sha256 m_hash;
  std::string m_trouble;
};

// SHA-256 of a whole local file; Errc::internal when it cannot be read.
[[nodiscard]] Result<std::string> hash_local_file(const std::filesystem::path& file);
// SHA-256 of `length` bytes from `offset` (k_to_the_end: to the end of the file); Errc::internal
// when it cannot be read or is shorter.
inline constexpr std::uint64_t k_to_the_end = ~std::uint64_t{0};
[[nodiscard]] Result<std::string> hash_local_range(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length);

}  // namespace gpurent
