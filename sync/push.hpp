// SPDX-License-Identifier: MIT
#pragma once
// Executes a push over the SshSession port: walk the local tree (sync/local_tree.hpp), list the
// destination through the push agent (one channel), plan (pure), then send: small files as tar
// streams, large ones as byte ranges, spread over up to `max_sessions` SSH connections where the
// link's window would bound one (choose_push_sessions, sync/push_plan.hpp); every file is verified against a SHA-256 computed on the server
// (per range and whole for large files). Used by `gpurent push` and `gpurent run`.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/local_tree.hpp"
#include "sync/push_delete.hpp"
#include "sync/range_plan.hpp"
#include "sync/transport.hpp"

namespace gpurent {

inline constexpr std::uint64_t k_push_mib = 1024 * 1024;

struct PushRequest {
  std::filesystem::path local_root;
  std::string remote_dir;                            // "~/gpurent/x", "/abs" (created when missing)
  WalkOptions walk;
  // The walk, when the caller runs it (the CLI, on its own thread while it connects): asked for once
  // the server has been asked for its listing, so the two overlap (issue #43: 0.15 s of a 0.4 s
  // re-push); its error (a refusal of likely secrets) ends the push before anything is sent. The
  // listing creates nothing on the server. Empty: walked here with `walk`.
  std::function<Result<LocalTree>()> walked;
  std::uint64_t big_threshold = 64 * k_push_mib;     // files this large go as byte ranges
  std::uint64_t range_size = 64 * k_push_mib;        // at most; about two ranges per connection
  std::size_t streams = 0;                           // SSH connections (--streams; 0: chosen as below)
  std::size_t max_sessions = 6;                      // chosen (choose_push_sessions): at most this many (1: only the given one)
  // --delete: what an earlier push sent (`pushed_before`, sync/push_record.hpp) that remote_dir
  // still holds and the local tree lacks (sync/push_delete.hpp says what is always kept) is
  // removed once every file arrived intact; without a record nothing is. `confirm_delete` sees the list
  // (when not empty) right after the listing, before anything is sent or deleted; its error
  // ends the push there.
  bool delete_extra = false;
  std::function<Result<void>(const std::vector<std::string>& doomed)> confirm_delete;
  std::optional<PathSet> pushed_before;  // the record of earlier pushes to this server and remote_dir; nullopt: none
};

struct PushFailure {
  std::string path;
  std::string error;
};

struct PushReport {
  std::string remote_dir;
  std::uint64_t files_total = 0;    // regular files in the local tree (after the ignore rules)
  std::uint64_t files_sent = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t entries_sent = 0;   // files, directories and links
  LocalTree tree;                   // what was walked (skipped paths, warnings)
  std::size_t sessions = 1;         // SSH connections used
  // What chose them (choose_push_sessions), when the session measured its link and --streams did not say.
  std::optional<std::chrono::duration<double>> round_trip;
  std::optional<std::chrono::duration<double>> connection_setup;
  std::vector<StreamStat> per_stream;  // what each connection carried
  std::uint64_t ranges_resumed = 0;    // ranges a killed push had written and verified: not sent again
  double seconds = 0;
  bool verified = false;            // every file sent matched the SHA-256 the server computed
  std::string verify_method;        // "openssl", "sha256sum", "shasum", "size-only", "nothing sent"
  std::vector<PushFailure> failed;  // non-empty: exit 4
  std::vector<std::string> warnings;
  std::vector<std::string> deleted;  // --delete: the paths removed (a directory with what was below it)
  std::vector<std::string> never_pushed;  // --delete: kept, gpurent never pushed them (job outputs?), top-most only
  bool delete_without_record = false;     // --delete with no record of an earlier push: nothing was deleted
  // What the server now holds from gpurent (sync/push_record.hpp), to record; nullopt when some
  // file did not arrive (the earlier record stays).
  std::optional<PathSet> record;
};

class PushObserver {
public:
  virtual ~PushObserver() = default;
  // About every 100 ms while data flows, from one thread at a time (not always the caller's).
  virtual void on_progress(std::uint64_t bytes_done, std::uint64_t bytes_total) = 0;
  virtual void on_warning(std::string_view message) = 0;
};

// Errors: the walk failed, likely secrets would be sent (Errc::refused: the CLI refuses before
// connecting; this is the last guard), the server cannot run the agent, the connection was
// lost. Per-file failures go to report.failed.
[[nodiscard]] Result<PushReport> run_push(SshSession& session, const SessionFactory& more, const PushRequest& request,
                                          PushObserver& observer);

}  // namespace gpurent
