// SPDX-License-Identifier: MIT
#include "sync/push_sources.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sync/push_agent.hpp"

namespace gpurent {
namespace {

std::int64_t mtime_of(const struct stat& st)
{
  return st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
}

}  // namespace

TarSource::TarSource(std::filesystem::path root, const std::vector<LocalEntry>& local, std::vector<std::size_t> items,
                     std::atomic<std::uint64_t>& bytes_done)
    : m_root(std::move(root)), m_local(local), m_items(std::move(items)), m_bytes_done(bytes_done), m_tar(tar_engine().make_writer())
{
  for (const auto i : m_items) {
    if (m_local[i].kind == EntryKind::file) {
      m_files.push_back(m_local[i].path);
    }
  }
  m_pending = push_agent_preamble(m_files);
}

TarSource::~TarSource()
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Result<void> TarSource::next_member()
{
  while (m_next < m_items.size()) {
    const LocalEntry& e = m_local[m_items[m_next++]];
    TarMember m{e.path, e.kind, e.size, e.mtime_ns / 1'000'000'000LL, e.mode, e.link_target};
    if (e.kind == EntryKind::file) {
      const auto full = m_root / e.path;
      m_fd = ::open(full.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (m_fd < 0) {
        m_troubled[e.path] = std::string("cannot read it: ") + std::strerror(errno);
        continue;  // not in the archive; the server's hash of it will not match
      }
      m_file = &e;
      m_left = e.size;
      m_hash = Sha256{};
    }
    m_pending.clear();
    m_pending_pos = 0;
    TRY(m_tar->begin_member(m, m_pending));
    if (e.kind != EntryKind::file) {
      TRY(m_tar->end_member(m_pending));
    }
    return {};
  }
  m_pending.clear();
  m_pending_pos = 0;
  TRY(m_tar->finish(m_pending));
  m_ended = true;
  return {};
}

Result<void> TarSource::end_file()
{
  struct stat st {};
  if (::fstat(m_fd, &st) == 0 && (static_cast<std::uint64_t>(st.st_size) != m_file->size || mtime_of(st) != m_file->mtime_ns)) {
    m_troubled.emplace(m_file->path, "changed while it was pushed; push again once it is written");
  }
  ::close(m_fd);
  m_fd = -1;
  m_hashes[m_file->path] = m_hash.finish_hex();
  m_pending.clear();
  m_pending_pos = 0;
  m_file = nullptr;
  return m_tar->end_member(m_pending);
}

Result<std::size_t> TarSource::read(char* buf, std::size_t cap)
{
  std::size_t n = 0;
  while (n < cap) {
    if (m_pending_pos < m_pending.size()) {
      const std::size_t k = std::min(cap - n, m_pending.size() - m_pending_pos);
      std::memcpy(buf + n, m_pending.data() + m_pending_pos, k);
      m_pending_pos += k;
      n += k;
      continue;
    }
    if (m_file != nullptr && m_left > 0) {
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(cap - n, m_left));
      auto got = ::read(m_fd, buf + n, want);
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got <= 0) {
        // Shrunk or unreadable: the header promised the size, so zeros make up the rest.
        m_troubled.emplace(m_file->path, got == 0 ? std::string("changed while it was pushed; push again once it is written")
                                                  : std::string("read error: ") + std::strerror(errno));
        std::memset(buf + n, 0, want);
        got = static_cast<ssize_t>(want);
      }
      const auto k = static_cast<std::size_t>(got);
      m_hash.update(buf + n, k);
      TRY(m_tar->member_data(buf + n, k));
      m_left -= k;
      n += k;
      m_bytes_done.fetch_add(k, std::memory_order_relaxed);
      continue;
    }
    if (m_file != nullptr) {
      TRY(end_file());
      continue;
    }
    if (m_ended) {
      break;
    }
    TRY(next_member());
  }
  return n;
}

RangeSource::RangeSource(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length,
                         std::atomic<std::uint64_t>& bytes_done)
    : m_offset(offset), m_left(length), m_bytes_done(bytes_done)
{
  m_fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (m_fd < 0) {
    m_trouble = std::string("cannot read it: ") + std::strerror(errno);
  }
}

RangeSource::~RangeSource()
{
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

Result<std::size_t> RangeSource::read(char* buf, std::size_t cap)
{
  if (m_left == 0) {
    return std::size_t{0};
  }
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(cap, m_left));
  ssize_t got = -1;
  if (m_fd >= 0) {
    do {
      got = ::pread(m_fd, buf, want, static_cast<off_t>(m_offset));
    } while (got < 0 && errno == EINTR);
  }
  if (got <= 0) {
    if (m_trouble.empty()) {
      m_trouble = got == 0 ? std::string("changed while it was pushed; push again once it is written")
                           : std::string("read error: ") + std::strerror(errno);
    }
    std::memset(buf, 0, want);
    got = static_cast<ssize_t>(want);
  }
  const auto k = static_cast<std::size_t>(got);
  m_hash.update(buf, k);
  m_offset += k;
  m_left -= k;
  m_bytes_done.fetch_add(k, std::memory_order_relaxed);
  return k;
}

Result<std::string> hash_local_range(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length)
{
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return fail(Errc::internal, "cannot read " + file.string() + ": " + std::strerror(errno));
  }
  std::vector<char> buf(1 << 20);
  Sha256 h;
  std::uint64_t at = offset;
  const std::uint64_t end = length == k_to_the_end ? ~std::uint64_t{0} : offset + length;
  while (at < end) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), end - at));
    const auto n = ::pread(fd, buf.data(), want, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return fail(Errc::internal, "cannot read " + file.string() + ": " + why);
    }
    if (n == 0) {
      if (length != k_to_the_end) {
        ::close(fd);
        return fail(Errc::internal, file.string() + " is shorter than " + std::to_string(end) + " bytes");
      }
      break;
    }
    h.update(buf.data(), static_cast<std::size_t>(n));
    at += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return h.finish_hex();
}

Result<std::string> hash_local_file(const std::filesystem::path& file)
{
  return hash_local_range(file, 0, k_to_the_end);
}

}  // namespace gpurent
