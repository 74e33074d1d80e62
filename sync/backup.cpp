// SPDX-License-Identifier: MIT
// The imperative shell of a backup: list, plan (pure), copy, verify, publish, record.
#include "sync/backup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include "sync/backup_plan.hpp"
#include "sync/manifest.hpp"
#include "sync/sha256.hpp"

namespace gpurent {
namespace {

struct Source {
  std::string root;       // the directory `rel` is relative to (the parent, for a single-file root)
  std::string rel;        // relative to root
  std::string user_root;  // the remote path as the user gave it (keys the backup channel)
};

struct Copied {
  RemoteEntry entry;        // as listed before the copy
  std::string sha256;
  std::uint64_t bytes = 0;  // size of the local copy
};

std::string join_remote(const std::string& root, const std::string& rel)
{
  if (root.empty() || root == ".") {
    return rel;
  }
  return root.back() == '/' ? root + rel : root + "/" + rel;
}

std::string last_component(std::string root)
{
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  const auto slash = root.rfind('/');
  std::string base = slash == std::string::npos ? root : root.substr(slash + 1);
  return (base.empty() || base == "." || base == "~" || base == "..") ? std::string("home") : base;
}

bool is_disk_full(int e)
{
  return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

Error disk_error(const std::filesystem::path& p, int e)
{
  if (is_disk_full(e)) {
    return Error{Errc::internal, "writing " + p.string() + ": the local disk is full (" + std::strerror(e) +
                                    "); free space and re-run: the previous copy and manifest are unchanged, and the copy resumes"};
  }
  return Error{Errc::internal, "writing " + p.string() + ": " + std::strerror(e) + "; check the destination directory"};
}

// Every ancestor of rel under dest must be a real directory (never a symlink).
bool parents_are_dirs(const std::filesystem::path& dest, const std::string& rel)
{
  std::string prefix;
  std::size_t start = 0;
  while (true) {
    const auto slash = rel.find('/', start);
    if (slash == std::string::npos) {
      return true;
    }
    prefix = rel.substr(0, slash);
    struct stat st {};
    if (::lstat((dest / prefix).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return false;
    }
    start = slash + 1;
  }
}

Result<void> ensure_dir(const std::filesystem::path& dest, const std::string& rel)
{
  const auto p = dest / rel;
  if (!parents_are_dirs(dest, rel)) {
    return fail(Errc::refused, "a parent of " + rel + " is not a directory locally; not written");
  }
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return {};
    }
    if (::unlink(p.c_str()) != 0) {  // a file or link where the server now has a directory
      return fail(Errc::internal, "cannot replace " + p.string() + " by a directory: " + std::strerror(errno));
    }
  }
  if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::unexpected(disk_error(p, errno));
  }
  return {};
}

Result<void> make_symlink(const std::filesystem::path& dest, const RemoteEntry& e)
{
  if (!parents_are_dirs(dest, e.path)) {
    return fail(Errc::refused, "a parent is not a directory locally; not written");
  }
  const auto p = dest / e.path;
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      if (std::filesystem::read_symlink(p, ec).string() == e.link_target && !ec) {
        return {};
      }
    } else if (S_ISDIR(st.st_mode)) {
      return fail(Errc::refused, "a local directory is in the way; not replaced");
    }
  }
  const auto tmp = p.string() + std::string(k_partial_suffix);
  ::unlink(tmp.c_str());
  if (::symlink(e.link_target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), p.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return std::unexpected(disk_error(p, err));
  }
  return {};
}

// Hash of the first `size` bytes already in a partial file.
Result<std::string> hash_prefix(int fd, std::uint64_t size, Sha256& h)
{
  std::vector<char> buf(1 << 20);
  std::uint64_t left = size;
  while (left > 0) {
    const auto n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
    if (n <= 0) {
      return fail(Errc::internal, "cannot read back a partial file: " + std::string(n == 0 ? "short" : std::strerror(errno)));
    }
    h.update(buf.data(), static_cast<std::size_t>(n));
    left -= static_cast<std::uint64_t>(n);
  }
  return std::string{};
}

// Size of a partial copy left by an interrupted run that a new copy can resume from; 0: none.
std::uint64_t resumable_bytes(const std::filesystem::path& dest, const RemoteEntry& e)
{
  const std::string partial = (dest / e.path).string() + std::string(k_partial_suffix);
  struct stat st {};
  if (::lstat(partial.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > e.size) {
    return 0;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

class Runner {
public:
  Runner(SshSession& s, const BackupRequest& r, BackupObserver& o) : m_session(s), m_req(r), m_obs(o) {}

  Result<BackupReport> run();

private:
  class StreamSink;
  Result<void> stream_whole_files(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied, bool allow_resume);
  // Lists every root; with `open_channels`, through one backup channel per root where the
  // server can run it (kept open in m_channels for the copy), else with list_tree.
  Result<std::vector<RemoteEntry>> list_all(bool open_channels);
  Result<void> missing_root(const std::string& root, const Error& e);
  Result<void> add_root(const std::string& root, std::vector<RemoteEntry> entries, bool root_is_file,
                        std::vector<RemoteEntry>& all);
  // The first round's copy through the open channels: files stream and the server hashes them
  // in the same channel. Closes every channel. What was delivered leaves `to_copy`.
  Result<void> copy_through_channels(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied,
                                     std::map<std::string, std::string>& remote_sums, std::set<std::string>& tools,
                                     bool& have_sums);
  Result<Copied> copy_one(const RemoteEntry& e, bool allow_resume);
  void warn(std::string msg)
  {
    m_obs.on_warning(msg);
    m_report.warnings.push_back(std::move(msg));
  }

  SshSession& m_session;
  const BackupRequest& m_req;
  BackupObserver& m_obs;
  BackupReport m_report;
  std::vector<std::string> m_roots;
  std::set<std::string> m_missing_roots;  // given but not on the server (several roots only)
  std::map<std::string, Source> m_sources;  // destination-relative path -> where it comes from
  std::map<std::string, std::unique_ptr<BackupChannel>> m_channels;  // user root -> open channel
  BackupProgress m_progress;
  bool m_use_stream = true;
  bool m_recheck = false;  // list again after the copy: the server saw changes, or SFTP was used
};

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
    m_r.m_progress.current = m_entry->path;
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
    m_r.m_progress.bytes_done += n;
    m_r.m_report.bytes_copied += n;
    m_r.m_obs.on_progress(m_r.m_progress);
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
    ++m_r.m_progress.files_done;
    m_r.m_obs.on_progress(m_r.m_progress);
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

Result<std::vector<RemoteEntry>> Runner::list_all(bool open_channels)
{
  std::vector<RemoteEntry> all;
  m_sources.clear();
  m_channels.clear();
  for (const auto& root : m_roots) {
    if (m_missing_roots.contains(root)) {
      continue;
    }
    if (open_channels) {
      auto channel = m_session.open_backup_channel(root);
      if (channel) {
        auto listing = (*channel)->listing();
        if (!listing) {
          TRY(missing_root(root, listing.error()));
          continue;
        }
        std::vector<RemoteEntry> entries = std::move(*listing);
        const bool is_file = (*channel)->root_is_file();
        m_channels[root] = std::move(*channel);
        TRY(add_root(root, std::move(entries), is_file, all));
        continue;
      }
      if (channel.error().code != Errc::unsupported) {
        TRY(missing_root(root, channel.error()));
        continue;
      }
    }
    auto listed = m_session.list_tree(root);
    if (!listed) {
      TRY(missing_root(root, listed.error()));
      continue;
    }
    std::vector<RemoteEntry> entries = std::move(*listed);
    bool is_file = false;
    if (entries.empty()) {
      // Nothing below it: an empty directory, or a single file given as the remote path.
      TRY_ASSIGN(auto st, m_session.stat(root));
      if (st.kind == EntryKind::file) {
        st.path = last_component(root);
        entries.push_back(std::move(st));
        is_file = true;
      }
    }
    TRY(add_root(root, std::move(entries), is_file, all));
  }
  return all;
}

// Listing `root` failed with `e`. One of several remote paths that does not exist is reported
// as failed (exit 4) and the others are still backed up; a single remote path that does not
// exist, and any other error, fails the run.
Result<void> Runner::missing_root(const std::string& root, const Error& e)
{
  if (e.code != Errc::not_found) {
    return std::unexpected(e);
  }
  if (m_roots.size() == 1) {
    return fail(Errc::not_found, "remote path " + root + " does not exist on the server; check the path (e.g. `gpurent ssh NAME -- ls`)");
  }
  m_missing_roots.insert(root);
  m_report.failed.push_back(FailedFile{root, "does not exist on the server; nothing was copied from it"});
  return {};
}

Result<void> Runner::add_root(const std::string& root, std::vector<RemoteEntry> entries, bool root_is_file,
                              std::vector<RemoteEntry>& all)
{
  if (root_is_file) {
    if (entries.size() != 1) {
      return fail(Errc::invalid_input, "remote path " + root + ": expected one file, the server listed " + std::to_string(entries.size()));
    }
    const std::string name = last_component(root);
    const auto slash = root.find_last_of('/');
    const std::string parent = slash == std::string::npos ? std::string(".") : (slash == 0 ? "/" : root.substr(0, slash));
    entries[0].path = name;
    m_sources[name] = Source{parent, name, root};
    all.push_back(std::move(entries[0]));
    return {};
  }
  const std::string prefix = m_roots.size() == 1 ? std::string{} : last_component(root);
  if (!prefix.empty()) {
    all.push_back(RemoteEntry{prefix, EntryKind::directory, 0, 0, 0755, {}});
  }
  for (auto& e : entries) {
    const std::string rel = e.path;
    e.path = prefix.empty() ? rel : prefix + "/" + rel;
    m_sources[e.path] = Source{root, rel, root};
    all.push_back(std::move(e));
  }
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
  m_progress.bytes_done += offset;
  m_progress.current = e.path;
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
    m_progress.bytes_done += n;
    m_obs.on_progress(m_progress);
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
  ++m_progress.files_done;
  m_obs.on_progress(m_progress);
  return Copied{e, h.finish_hex(), offset + *got};
}

// Publishes a verified partial: mode, mtime, then an atomic rename over the old copy.
Result<void> publish(const std::filesystem::path& dest, const RemoteEntry& e)
{
  const auto final_path = dest / e.path;
  const std::string partial = final_path.string() + std::string(k_partial_suffix);
  ::chmod(partial.c_str(), e.mode & 07777);
  const timespec times[2] = {{e.mtime_ns / 1'000'000'000LL, e.mtime_ns % 1'000'000'000LL},
                             {e.mtime_ns / 1'000'000'000LL, e.mtime_ns % 1'000'000'000LL}};
  ::utimensat(AT_FDCWD, partial.c_str(), times, AT_SYMLINK_NOFOLLOW);
  if (::rename(partial.c_str(), final_path.c_str()) != 0) {
    return fail(Errc::internal, "cannot rename into place: " + std::string(std::strerror(errno)));
  }
  return {};
}

Result<BackupReport> Runner::run()
{
  const auto t0 = std::chrono::steady_clock::now();
  m_roots = m_req.remote_paths.empty() ? std::vector<std::string>{"."} : m_req.remote_paths;
  for (auto& r : m_roots) {
    while (r.size() > 1 && r.back() == '/') {
      r.pop_back();
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(m_req.dest, ec);
  if (ec) {
    return fail(Errc::internal, "cannot create " + m_req.dest.string() + ": " + ec.message() + "; choose another --to");
  }
  m_report.manifest = m_req.dest / k_manifest_name;
  TRY_ASSIGN(const Manifest old, load_manifest(m_report.manifest));
  TRY_ASSIGN(const auto remote, list_all(true));

  std::map<std::string, LocalFile> local;
  for (const auto& [path, entry] : old.entries) {
    struct stat st {};
    if (entry.kind == EntryKind::file && ::lstat((m_req.dest / path).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      local[path] = LocalFile{static_cast<std::uint64_t>(st.st_size), st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec};
    }
  }
  const BackupPlan plan = plan_backup(remote, old, local, Filters{m_req.include, m_req.exclude});
  for (const auto& r : plan.rejected) {
    warn(r);
  }
  m_report.files_total = plan.files_total;
  m_report.bytes_total = plan.bytes_total;
  m_progress.files_total = plan.files_to_copy;
  m_progress.bytes_total = plan.bytes_to_copy;

  Manifest next = old;
  for (const auto& f : plan.forgotten) {
    // What a missing root held stays in the manifest: its copies are still here.
    const bool under_missing = std::any_of(m_missing_roots.begin(), m_missing_roots.end(), [&](const std::string& root) {
      const std::string prefix = last_component(root);
      return f == prefix || f.starts_with(prefix + "/");
    });
    if (!under_missing) {
      next.entries.erase(f);
    }
  }
  std::vector<RemoteEntry> to_copy;
  std::vector<const RemoteEntry*> dirs;
  for (const auto& a : plan.actions) {
    const auto& e = a.entry;
    switch (a.kind) {
    case ActionKind::make_dir:
      if (auto r = ensure_dir(m_req.dest, e.path); !r) {
        m_report.failed.push_back(FailedFile{e.path, r.error().message});
      } else {
        next.entries[e.path] = ManifestEntry{EntryKind::directory, 0, e.mtime_ns, e.mode, {}, {}};
        dirs.push_back(&e);
      }
      break;
    case ActionKind::make_symlink:
      if (a.link_outside) {
        warn(e.path + " -> " + e.link_target + ": the link points outside the backup; kept as a link, not followed");
      }
      if (auto r = make_symlink(m_req.dest, e); !r) {
        m_report.failed.push_back(FailedFile{e.path, r.error().message});
      } else {
        next.entries[e.path] = ManifestEntry{EntryKind::symlink, 0, e.mtime_ns, e.mode, {}, e.link_target};
      }
      break;
    case ActionKind::skip:
      ++m_report.files_skipped;
      next.entries[e.path].mode = e.mode;
      break;
    case ActionKind::copy: to_copy.push_back(e); break;
    }
  }

  std::set<std::string> tools;  // the servers' hashing tools used
  bool size_only = false;
  bool allow_resume = true;
  for (int round = 0; round < 3 && (round == 0 || !to_copy.empty()); ++round) {
    std::vector<Copied> copied;
    std::map<std::string, std::string> remote_sums;  // root + '\0' + rel -> hex
    bool have_sums = true;
    if (round == 0) {
      // The channels the listing opened carry the first copy and its hashes (and are closed
      // even when there is nothing to copy).
      TRY(copy_through_channels(to_copy, copied, remote_sums, tools, have_sums));
    }
    // What is left (servers without GNU tar or find, partial files to resume, retries): start
    // the server-side hashes first so they run while the data flows.
    std::map<std::string, std::vector<std::string>> by_root;
    for (const auto& e : to_copy) {
      const auto& s = m_sources.at(e.path);
      by_root[s.root].push_back(s.rel);
    }
    std::vector<std::pair<std::string, std::unique_ptr<RemoteHashJob>>> jobs;
    for (const auto& [root, rels] : by_root) {
      TRY_ASSIGN(auto job, m_session.start_sha256(root, rels));
      jobs.emplace_back(root, std::move(job));
    }
    TRY(stream_whole_files(to_copy, copied, allow_resume));
    m_recheck = m_recheck || !to_copy.empty();  // a file read by SFTP has no check of its own for changes
    for (const auto& e : to_copy) {
      auto c = copy_one(e, allow_resume);
      if (!c) {
        if (c.error().code == Errc::unavailable || c.error().code == Errc::timeout || c.error().code == Errc::internal) {
          return std::unexpected(c.error());  // connection lost or disk full: stop, a re-run resumes
        }
        m_report.failed.push_back(FailedFile{e.path, c.error().message});
        continue;
      }
      copied.push_back(std::move(*c));
    }
    for (auto& [root, job] : jobs) {
      TRY_ASSIGN(const auto hashes, job->wait());
      if (hashes.tool == "none") {
        have_sums = false;
        continue;
      }
      tools.insert(hashes.tool);
      for (const auto& [rel, hex] : hashes.sums) {
        remote_sums[root + '\0' + rel] = hex;
      }
    }
    size_only = size_only || !have_sums;
    const auto hash_ok = [&](const Copied& c) {
      const auto& s = m_sources.at(c.entry.path);
      const auto sum = remote_sums.find(s.root + '\0' + s.rel);
      return have_sums && sum != remote_sums.end() && sum->second == c.sha256;
    };
    // One more listing tells whether a file changed on the server while it was copied. It is
    // skipped only when it cannot tell anything new: every file came through the tar stream,
    // tar saw no file change while reading it, and every copy has the listed size and the
    // SHA-256 the server computed. That spares a clean run one channel and one remote shell.
    const bool need_listing = !have_sums || m_recheck || std::any_of(copied.begin(), copied.end(), [&](const Copied& c) {
      return !hash_ok(c) || c.bytes != c.entry.size;
    });
    std::vector<RemoteEntry> after;
    if (need_listing) {
      TRY_ASSIGN(after, list_all(false));
    }
    std::map<std::string, const RemoteEntry*> after_by_path;
    for (const auto& e : after) {
      after_by_path[e.path] = &e;
    }
    std::vector<RemoteEntry> again;
    for (const auto& c : copied) {
      const auto& e = c.entry;
      if (!need_listing) {
        if (auto r = publish(m_req.dest, e); !r) {
          m_report.failed.push_back(FailedFile{e.path, r.error().message});
          continue;
        }
        ++m_report.files_copied;
        next.entries[e.path] = ManifestEntry{EntryKind::file, e.size, e.mtime_ns, e.mode, c.sha256, {}};
        continue;
      }
      const auto now = after_by_path.find(e.path);
      if (now == after_by_path.end()) {
        m_report.failed.push_back(FailedFile{e.path, "removed on the server during the backup"});
        continue;
      }
      const bool changed = now->second->size != e.size || now->second->mtime_ns != e.mtime_ns || c.bytes != e.size;
      if (changed || (have_sums && !hash_ok(c))) {
        if (round == 2) {
          m_report.failed.push_back(FailedFile{e.path, changed ? "kept changing on the server during the backup; re-run when it is idle"
                                                               : "SHA-256 differs from the server's after 3 tries"});
        } else {
          again.push_back(*now->second);
        }
        continue;
      }
      if (auto r = publish(m_req.dest, e); !r) {
        m_report.failed.push_back(FailedFile{e.path, r.error().message});
        continue;
      }
      ++m_report.files_copied;
      next.entries[e.path] = ManifestEntry{EntryKind::file, e.size, e.mtime_ns, e.mode, have_sums ? c.sha256 : std::string{}, {}};
    }
    to_copy = std::move(again);
    allow_resume = false;  // a retry starts from byte 0
  }
  // Directory modes and times last, so writing into them was never blocked.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    const auto p = m_req.dest / (*it)->path;
    ::chmod(p.c_str(), ((*it)->mode & 07777) | 0700);
  }
  next.finished_unix = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  TRY(save_manifest(m_report.manifest, next));
  std::string method = size_only ? "size-only" : "";
  for (const auto& t : size_only ? std::set<std::string>{} : tools) {
    method += (method.empty() ? "" : "+") + t;
  }
  m_report.verify_method = method.empty() ? "nothing copied" : method;
  m_report.verified = !size_only && m_report.failed.empty();
  if (size_only) {
    warn("no openssl, sha256sum or shasum on the server: copies were checked by size only");
  }
  m_report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m_report;
}

}  // namespace

Result<BackupReport> run_backup(SshSession& session, const BackupRequest& request, BackupObserver& observer)
{
  Runner r(session, request, observer);
  return r.run();
}

}  // namespace gpurent
