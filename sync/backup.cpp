// SPDX-License-Identifier: MIT
// The imperative shell of a backup: list, plan (pure), copy, verify, publish, record.
// The copies are in backup_copy.cpp, the local side in backup_local.cpp (sync/backup_detail.hpp).
#include "sync/backup.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>

#include "sync/backup_detail.hpp"
#include "sync/backup_plan.hpp"
#include "sync/manifest.hpp"
#include "sync/range_plan.hpp"

namespace gpurent {
namespace backup_detail {

std::string last_component(std::string root)
{
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  const auto slash = root.rfind('/');
  std::string base = slash == std::string::npos ? root : root.substr(slash + 1);
  return (base.empty() || base == "." || base == "~" || base == "..") ? std::string("home") : base;
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

// How many connections carry the large files: as the request says (--streams), when there are
// any and more connections can be opened. Not chosen automatically yet: on the 2-core build
// machine, where client, server and delay proxy share the CPUs, every extra connection made a
// copy slower at 0, 50 and 100 ms (docs/benchmarks.md, "Parallel streams").
std::size_t Runner::choose_backup_streams(const std::vector<RemoteEntry>& to_copy) const
{
  const bool any = std::any_of(to_copy.begin(), to_copy.end(), [&](const RemoteEntry& e) { return e.size >= m_req.range_threshold; });
  return any && m_req.more_sessions ? std::max<std::size_t>(m_req.streams, 1) : 1;
}

// Starts the server's SHA-256 of these files, one job per root, without waiting for it.
Result<void> Runner::start_hash_jobs(const std::vector<RemoteEntry>& files, HashJobs& jobs)
{
  std::map<std::string, std::vector<std::string>> by_root;
  for (const auto& e : files) {
    const auto& s = m_sources.at(e.path);
    by_root[s.root].push_back(s.rel);
  }
  for (const auto& [root, rels] : by_root) {
    TRY_ASSIGN(auto job, m_session.start_sha256(root, rels));
    jobs.emplace_back(root, std::move(job));
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

  const std::size_t streams = choose_backup_streams(to_copy);
  std::set<std::string> tools;  // the servers' hashing tools used
  bool size_only = false;
  bool allow_resume = true;
  for (int round = 0; round < 3 && (round == 0 || !to_copy.empty()); ++round) {
    std::vector<Copied> copied;
    std::map<std::string, std::string> remote_sums;  // root + '\0' + rel -> hex
    bool have_sums = true;
    // The large files as byte ranges: the other connections start on them at once, and the
    // server hashes them whole meanwhile.
    std::vector<RemoteEntry> big;
    if (streams > 1) {
      const auto small_end = std::stable_partition(to_copy.begin(), to_copy.end(),
                                                   [&](const RemoteEntry& e) { return e.size < m_req.range_threshold; });
      big.assign(std::make_move_iterator(small_end), std::make_move_iterator(to_copy.end()));
      to_copy.erase(small_end, to_copy.end());
    }
    HashJobs jobs;
    if (!big.empty()) {
      TRY(start_hash_jobs(big, jobs));
      TRY(start_ranges(big, streams, allow_resume));
    }
    if (round == 0) {
      // The channels the listing opened carry the first copy and its hashes (and are closed
      // even when there is nothing to copy).
      TRY(copy_through_channels(to_copy, copied, remote_sums, tools, have_sums));
    }
    // What is left (servers without GNU tar or find, partial files to resume, retries): start
    // the server-side hashes first so they run while the data flows.
    TRY(start_hash_jobs(to_copy, jobs));
    TRY(stream_whole_files(to_copy, copied, allow_resume));
    m_recheck = m_recheck || !to_copy.empty();  // a file read by SFTP has no check of its own for changes
    for (const auto& e : to_copy) {
      auto c = copy_one(e, allow_resume);
      if (!c) {
        if (c.error().code == Errc::unavailable || c.error().code == Errc::timeout || c.error().code == Errc::internal ||
            c.error().interrupted) {
          return std::unexpected(c.error());  // connection lost or disk full: stop, a re-run resumes
        }
        m_report.failed.push_back(FailedFile{e.path, c.error().message});
        continue;
      }
      copied.push_back(std::move(*c));
    }
    TRY_ASSIGN(auto ranged, finish_ranges());
    std::move(ranged.begin(), ranged.end(), std::back_inserter(copied));
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
      const bool changed = now->second->size != e.size || !same_listed_mtime(now->second->mtime_ns, e.mtime_ns) || c.bytes != e.size;
      if (changed || (have_sums && !hash_ok(c))) {
        if (round == 2) {
          m_report.failed.push_back(FailedFile{e.path, changed ? "kept changing on the server during the backup; re-run when it is idle"
                                                               : "SHA-256 differs from the server's after 3 tries"});
        } else {
          if (changed) {
            warn(e.path + ": changed on the server while it was copied; copied again (a copy of two versions is never kept)");
          }
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
    allow_resume = false;  // a retry starts from byte 0 (and from no range)
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

}  // namespace backup_detail

Result<BackupReport> run_backup(SshSession& session, const BackupRequest& request, BackupObserver& observer)
{
  backup_detail::Runner r(session, request, observer);
  return r.run();
}

}  // namespace gpurent
