// SPDX-License-Identifier: MIT
#pragma once
// Internal to sync/backup*.cpp (not a public interface; sync/backup.hpp is): the backup's
// runner and the local side of its copies.
//   backup.cpp        listing the roots and running a backup (plan, copy rounds, verify, record)
//   backup_copy.cpp   the copies: tar streams, the backup channels, SFTP reads that resume
//   backup_ranges.cpp the large files: byte ranges over several connections, resumed by range
//   backup_local.cpp  the destination: directories, symlinks, partial files, publishing
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/backup.hpp"
#include "sync/sha256.hpp"
#include "sync/transport.hpp"

namespace gpurent::backup_detail {

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

// The remote path of `rel` under `root`.
[[nodiscard]] std::string join_remote(const std::string& root, const std::string& rel);
// What a root is called under dest when there are several ("home" for the home directory).
[[nodiscard]] std::string last_component(std::string root);

// backup_local.cpp
[[nodiscard]] bool is_disk_full(int e);
[[nodiscard]] Error disk_error(const std::filesystem::path& p, int e);
// Every ancestor of rel under dest must be a real directory (never a symlink).
[[nodiscard]] bool parents_are_dirs(const std::filesystem::path& dest, const std::string& rel);
[[nodiscard]] Result<void> ensure_dir(const std::filesystem::path& dest, const std::string& rel);
[[nodiscard]] Result<void> make_symlink(const std::filesystem::path& dest, const RemoteEntry& e);
// Hash of the first `size` bytes already in a partial file.
[[nodiscard]] Result<std::string> hash_prefix(int fd, std::uint64_t size, Sha256& h);
// Size of a partial copy left by an interrupted run that a new copy can resume from; 0: none.
[[nodiscard]] std::uint64_t resumable_bytes(const std::filesystem::path& dest, const RemoteEntry& e);
// The range ledger of a partial file (sync/range_plan.hpp): PARTIAL.ranges.
[[nodiscard]] std::string ledger_path_of(const std::string& partial);
// Publishes a verified partial (and drops its range ledger): mode, mtime, then an atomic rename over the old copy.
[[nodiscard]] Result<void> publish(const std::filesystem::path& dest, const RemoteEntry& e);

class Runner {
public:
  Runner(SshSession& s, const BackupRequest& r, BackupObserver& o);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  ~Runner();

  Result<BackupReport> run();

private:
  class StreamSink;
  class RangeCopier;
  // backup_ranges.cpp: the large files as byte ranges. start_ranges opens their partial files
  // and starts the other connections (they fetch while the main session copies the small files);
  // finish_ranges fetches on the main session too, then waits for all and returns the copies.
  using HashJobs = std::vector<std::pair<std::string, std::unique_ptr<RemoteHashJob>>>;  // root, job
  Result<void> start_hash_jobs(const std::vector<RemoteEntry>& files, HashJobs& jobs);
  [[nodiscard]] std::size_t choose_backup_streams(const std::vector<RemoteEntry>& to_copy) const;
  Result<void> start_ranges(const std::vector<RemoteEntry>& files, std::size_t streams, bool allow_resume);
  Result<std::vector<Copied>> finish_ranges();
  // The observer and m_progress, from any thread (backup_ranges.cpp).
  void advance(std::uint64_t bytes, std::uint64_t files, std::string_view current);
  [[nodiscard]] bool cancelled();
  void warn(std::string msg);
  // backup_copy.cpp
  Result<void> stream_whole_files(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied, bool allow_resume);

  // backup.cpp: lists every root; with `open_channels`, through one backup channel per root
  // where the server can run it (kept open in m_channels for the copy), else with list_tree.
  Result<std::vector<RemoteEntry>> list_all(bool open_channels);
  Result<void> missing_root(const std::string& root, const Error& e);
  Result<void> add_root(const std::string& root, std::vector<RemoteEntry> entries, bool root_is_file,
                        std::vector<RemoteEntry>& all);

  // backup_copy.cpp: the first round's copy through the open channels: files stream and the server hashes them
  // in the same channel. Closes every channel. What was delivered leaves `to_copy`.
  Result<void> copy_through_channels(std::vector<RemoteEntry>& to_copy, std::vector<Copied>& copied,
                                     std::map<std::string, std::string>& remote_sums, std::set<std::string>& tools,
                                     bool& have_sums);
  Result<Copied> copy_one(const RemoteEntry& e, bool allow_resume);

  SshSession& m_session;
  const BackupRequest& m_req;
  BackupObserver& m_obs;
  BackupReport m_report;
  std::vector<std::string> m_roots;
  std::set<std::string> m_missing_roots;  // given but not on the server (several roots only)
  std::map<std::string, Source> m_sources;  // destination-relative path -> where it comes from
  std::map<std::string, std::unique_ptr<BackupChannel>> m_channels;  // user root -> open channel
  std::mutex m_obs_mu;  // m_obs, m_progress and m_report.warnings: the range threads report too
  BackupProgress m_progress;
  std::unique_ptr<RangeCopier> m_ranges;
  bool m_use_stream = true;
  bool m_recheck = false;  // list again after the copy: the server saw changes, or SFTP was used
};

}  // namespace gpurent::backup_detail
