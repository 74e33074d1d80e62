// SPDX-License-Identifier: MIT
// The copies of a backup (sync/backup_detail.hpp): whole files in one tar stream per root or
// through the backup channels the listing opened (the server hashing them in the same channel),
// and single files over SFTP, resumed from a partial copy.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

#include "sync/backup_detail.hpp"

namespace gpurent::backup_detail {

std::string join_remote(const std::string& root, const std::string& rel)
{
  if (root.empty() || root == ".") {
    return rel;
  }
  return root.back() == '/' ? root + rel : root + "/" + rel;
}

// Writes the files of a tar stream to their partial names, hashing as it goes.
class Runner::StreamSink final : public FileStreamHandler {
public:
  StreamSink(Runner& r, std::map<std::string, const RemoteEntry*> by_rel) : m_r(r), m_by_rel(std::move(by_rel)) {}
  StreamSink(const StreamSink&) = delete;
  StreamSink& operator=(const StreamSink&) = delete;
  ~StreamSink() override
  {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }

  Result<void> begin_file(const std::string& rel, std::uint64_t) override
  {
    const auto it = m_by_rel.find(rel);
    m_entry = it == m_by_rel.end() ? nullptr : it->second;
    if (m_entry == nullptr || !parents_are_dirs(m_r.m_req.dest, m_entry->path)) {
      m_entry = nullptr;  // not asked for, or no safe place for it: skip its data
      return {};
    }
    m_partial = (m_r.m_req.dest / m_entry->path).string() + std::string(k_partial_suffix);
    m_fd = ::open(m_partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (m_fd < 0) {
      return std::unexpected(disk_error(m_partial, errno));
    }
    m_hash = Sha256{};
    m_bytes = 0;
    m_r.advance(0, 0, m_entry->path);
    return {};
  }
  Result<void> file_data(const char* data, std::size_t n) override
  {
    if (m_entry == nullptr) {
      return {};
    }
    std::size_t done = 0;
    while (done < n) {
      const auto w = ::write(m_fd, data + done, n - done);
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w < 0) {
        const int err = errno;
        ::close(m_fd);
        m_fd = -1;
        if (is_disk_full(err)) {
          ::unlink(m_partial.c_str());
        }
        return std::unexpected(disk_error(m_partial, err));
      }
      done += static_cast<std::size_t>(w);
    }
    m_hash.update(data, n);
    m_bytes += n;
    m_r.m_report.bytes_copied += n;
    m_r.advance(n, 0, {});
    if (m_r.cancelled()) {
      ::close(m_fd);
      m_fd = -1;
      return std::unexpected(interrupted_error("copying " + m_entry->path + " (kept as a partial file: a re-run resumes it)"));
    }
    return {};
  }
  Result<void> end_file() override
  {
    if (m_entry == nullptr) {
      return {};
    }
    ::close(m_fd);
    m_fd = -1;
    copied.push_back(Copied{*m_entry, m_hash.finish_hex(), m_bytes});
    delivered.insert(m_entry->path);
    m_r.advance(0, 1, {});
    m_entry = nullptr;
    return {};
  }

  std::vector<Copied> copied;
  std::set<std::string> delivered;

private:
  Runner& m_r;
  std::map<std::string, const RemoteEntry*> m_by_rel;
  const RemoteEntry* m_entry = nullptr;
  std::string m_partial;
  int m_fd = -1;
  Sha256 m_hash;
  std::uint64_t m_bytes = 0;
};

// Whole files travel in one tar stream per root: one channel, no per-file round trips, and no
// SFTP subsystem to start. Files with a partial copy to resume go by SFTP from their offset
// instead. What was delivered leaves `to_copy`.
Result<void> Runner::stream_whole_files(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied, bool allow_resume)
{
  if (!m_use_stream) {
    return {};
  }
  std::map<std::string, std::map<std::string, const RemoteEntry*>> by_root;
  for (const auto& e : to_copy) {
    if (!allow_resume || resumable_bytes(m_req.dest, e) == 0) {
      const auto& src = m_sources.at(e.path);
      by_root[src.root][src.rel] = &e;
    }
  }
  std::set<std::string> delivered;
  for (auto& [root, files] : by_root) {
    std::vector<std::string> rels;
    for (const auto& [rel, e] : files) {
      rels.push_back(rel);
    }
    StreamSink sink(*this, files);
    auto r = m_session.stream_files(root, rels, sink);
    if (!r && r.error().code == Errc::unsupported) {
      m_use_stream = false;
      return {};
    }
    // Keep what arrived complete, even when the stream broke afterwards.
    for (auto& c : sink.copied) {
      copied.push_back(std::move(c));
    }
    delivered.insert(sink.delivered.begin(), sink.delivered.end());
    if (!r) {
      return std::unexpected(r.error());
    }
    m_recheck = m_recheck || r->changed_while_read;
  }
  std::erase_if(to_copy, [&](const RemoteEntry& e) { return delivered.contains(e.path); });
  return {};
}

Result<void> Runner::copy_through_channels(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied,
                                           std::map<std::string, std::string>& remote_sums, std::set<std::string>& tools,
                                           bool& have_sums)
{
  std::map<std::string, std::map<std::string, const RemoteEntry*>> by_root;  // user root -> rel -> entry
  for (const auto& e : to_copy) {
    const auto& src = m_sources.at(e.path);
    if (m_channels.contains(src.user_root) && resumable_bytes(m_req.dest, e) == 0) {
      by_root[src.user_root][src.rel] = &e;
    }
  }
  std::set<std::string> delivered;
  auto channels = std::move(m_channels);
  m_channels.clear();
  for (auto& [root, channel] : channels) {
    const auto& files = by_root[root];
    std::vector<std::string> rels;
    for (const auto& [rel, e] : files) {
      rels.push_back(rel);
    }
    StreamSink sink(*this, files);
    auto r = channel->copy(rels, sink);
    for (auto& c : sink.copied) {  // keep what arrived complete, even when the stream broke
      copied.push_back(std::move(c));
    }
    delivered.insert(sink.delivered.begin(), sink.delivered.end());
    if (!r) {
      return std::unexpected(r.error());
    }
    if (rels.empty()) {
      continue;
    }
    m_recheck = m_recheck || r->stream.changed_while_read;
    if (r->hashes.tool == "none") {
      have_sums = false;
      continue;
    }
    tools.insert(r->hashes.tool);
    const std::string& dir = m_sources.at(files.begin()->second->path).root;  // where the channel's tar ran
    for (const auto& [rel, hex] : r->hashes.sums) {
      remote_sums[dir + '\0' + rel] = hex;
    }
  }
  std::erase_if(to_copy, [&](const RemoteEntry& e) { return delivered.contains(e.path); });
  return {};
}

Result<Copied> Runner::copy_one(const RemoteEntry& e, bool allow_resume)
{
  if (!parents_are_dirs(m_req.dest, e.path)) {
    return fail(Errc::refused, "a parent is not a directory locally; not written");
  }
  const auto final_path = m_req.dest / e.path;
  const std::string partial = final_path.string() + std::string(k_partial_suffix);
  const int fd = ::open(partial.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return std::unexpected(disk_error(partial, errno));
  }
  Sha256 h;
  std::uint64_t offset = 0;
  struct stat st {};
  if (allow_resume && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) <= e.size) {
    offset = static_cast<std::uint64_t>(st.st_size);
    if (auto r = hash_prefix(fd, offset, h); !r) {
      offset = 0;
      h = Sha256{};
    }
  }
  if (offset == 0 && ::ftruncate(fd, 0) != 0) {
    const int err = errno;
    ::close(fd);
    return std::unexpected(disk_error(partial, err));
  }
  ::lseek(fd, static_cast<off_t>(offset), SEEK_SET);
  advance(offset, 0, e.path);
  int write_errno = 0;
  const auto& src = m_sources.at(e.path);
  auto got = m_session.read_file(join_remote(src.root, src.rel), offset, [&](const char* data, std::size_t n) -> Result<void> {
    std::size_t done = 0;
    while (done < n) {
      const auto w = ::write(fd, data + done, n - done);
      if (w < 0) {
        if (errno == EINTR) {
          continue;
        }
        write_errno = errno;
        return std::unexpected(disk_error(partial, errno));
      }
      done += static_cast<std::size_t>(w);
    }
    h.update(data, n);
    advance(n, 0, {});
    if (cancelled()) {
      return std::unexpected(interrupted_error("copying " + e.path + " (kept as a partial file: a re-run resumes it)"));
    }
    return {};
  });
  ::close(fd);
  if (!got) {
    if (is_disk_full(write_errno)) {
      ::unlink(partial.c_str());  // give the space back; the previous copy is untouched
    }
    return std::unexpected(got.error());
  }
  m_report.bytes_copied += *got;
  advance(0, 1, {});
  return Copied{e, h.finish_hex(), offset + *got};
}

}  // namespace gpurent::backup_detail
