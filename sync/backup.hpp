// SPDX-License-Identifier: MIT
#pragma once
// Executes a backup over the SshSession port: list (one pass), plan (pure), copy to
// *.gpurent-partial names, verify SHA-256 computed on the server, rename into place, record
// the manifest atomically. Used by `gpurent backup` and by `gpurent down --destroy`.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/range_plan.hpp"
#include "sync/transport.hpp"

namespace gpurent {

struct BackupRequest {
  // Remote paths; empty means the remote home ("."). One path is copied INTO dest; with
  // several, each goes to dest/<its last component>.
  std::vector<std::string> remote_paths;
  std::filesystem::path dest;         // created when missing
  std::vector<std::string> include;   // globs over relative paths (see sync/glob.hpp)
  std::vector<std::string> exclude;
  // With `streams` of 2 or more, large files (at least range_threshold bytes) travel as byte
  // ranges over that many SSH connections (sync/range_plan.hpp), the others opened by
  // `more_sessions` (empty: only the given session). 0 or 1: one connection, one tar stream.
  std::size_t streams = 0;
  SessionFactory more_sessions;
  std::uint64_t range_threshold = 64ULL * 1024 * 1024;
  std::uint64_t range_size = 64ULL * 1024 * 1024;  // at most; about two per connection
};


struct FailedFile {
  std::string path;
  std::string error;
};

struct BackupReport {
  std::uint64_t files_total = 0;   // regular files selected on the server
  std::uint64_t files_copied = 0;
  std::uint64_t files_skipped = 0; // unchanged since the manifest
  std::uint64_t bytes_copied = 0;  // transferred this run (a resumed file counts its new bytes)
  std::uint64_t bytes_total = 0;   // size of all selected files
  double seconds = 0;
  bool verified = false;           // every copied file matched a SHA-256 computed on the server
  std::string verify_method;       // the server's tool: "openssl", "sha256sum", "shasum"; or "size-only"
  std::filesystem::path manifest;
  std::size_t streams = 1;             // connections that carried byte ranges (1: none but the first)
  std::vector<StreamStat> per_stream;  // empty when no file went as ranges
  std::uint64_t ranges_resumed = 0;    // ranges a killed run had finished and verified: not fetched again
  std::vector<FailedFile> failed;  // non-empty: exit 4
  std::vector<std::string> warnings;
};

struct BackupProgress {
  std::uint64_t bytes_done = 0;
  std::uint64_t bytes_total = 0;  // bytes this run has to copy
  std::uint64_t files_done = 0;
  std::uint64_t files_total = 0;  // files this run has to copy
  std::string_view current;       // relative path being copied
};

class BackupObserver {
public:
  virtual ~BackupObserver() = default;
  virtual void on_progress(const BackupProgress& p) = 0;  // frequent; keep cheap
  virtual void on_warning(std::string_view message) = 0;
  // Asked as data arrives: true stops the backup with an interrupted error (Ctrl-C); the
  // previous good copy and manifest stay intact and a re-run resumes the partial files.
  [[nodiscard]] virtual bool cancelled() const { return false; }
};

class NullBackupObserver final : public BackupObserver {
public:
  void on_progress(const BackupProgress&) override {}
  void on_warning(std::string_view) override {}
};

// The manifest's file name inside dest.
inline constexpr std::string_view k_manifest_name = ".gpurent-manifest.json";
inline constexpr std::string_view k_partial_suffix = ".gpurent-partial";

// Errors: the whole run failed (connection lost, disk full, dest unusable); the previous good
// copy and manifest stay intact and a re-run resumes. Per-file failures go to report.failed.
[[nodiscard]] Result<BackupReport> run_backup(SshSession& session, const BackupRequest& request, BackupObserver& observer);

}  // namespace gpurent
