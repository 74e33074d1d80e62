// SPDX-License-Identifier: MIT
#pragma once
// What `push` and `run` share (no CLI11 here): the walk of the local tree before any connection
// (the likely-secret refusal comes from it, so nothing is sent and nothing is dialled), the push
// with its progress bar, and the report in text and in the contract's JSON.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/job_support.hpp"
#include "common/result.hpp"
#include "sync/push.hpp"

namespace gpurent {
struct Services;

struct PushSettings {
  std::filesystem::path local = ".";
  std::string to;  // empty: default_push_dir(local)
  std::vector<std::string> excludes;
  bool with_git = false;                   // --with-git: send `.git` directories too
  std::vector<std::string> allow_secrets;  // --allow-secret PATH (relative to `local`)
  std::size_t streams = 0;                 // --streams N (0: chosen)
  bool delete_extra = false;               // --delete: remove from the server what an earlier push sent and LOCAL_DIR no longer has
};
// "~/gpurent/<the local directory's name>".
[[nodiscard]] std::string default_push_dir(const std::filesystem::path& local);

// Walks `p.local` as the push will send it. Likely secrets without --allow-secret refuse the
// push (Errc::refused, every path named; under --json the document also carries "secrets":
// [{path, why}]); a bad --allow-secret value is Errc::usage.
[[nodiscard]] Result<LocalTree> walk_for_push(Services& s, const PushSettings& p);
// The same in three steps, so that the walk itself (git's file set, the secret guard's reads) can
// run while the connection is made: the options from the flags, the environment and the config
// (a bad --allow-secret is Errc::usage); then walk_local_tree(p.local, options), which touches no
// Services; then the refusal of likely secrets, which prints as walk_for_push does.
[[nodiscard]] Result<WalkOptions> push_walk_options(Services& s, const PushSettings& p);
[[nodiscard]] Result<LocalTree> refuse_secrets(Services& s, LocalTree tree);

// Runs the push of a walked tree with a progress bar on a TTY (never under --json); extra
// connections for large pushes come from the same destination and options. It reads the record
// of earlier pushes to this server and directory (push-records/ in the state directory; damaged:
// none, with a warning) and writes the next one when every file arrived. With --delete it
// says on stderr what it will delete (how many, the first names) and asks (cli/lifecycle_support
// confirm: --yes, a TTY, else Errc::refused before anything is sent).
[[nodiscard]] Result<PushReport> push_to_server(Services& s, const JobServer& server, SshSession& session, const PushSettings& p,
                                                LocalTree tree);
// The same with the walk still running: `walked` (the walk and refuse_secrets) is awaited once the
// server has been asked for its listing, so the two overlap; the push directory is recorded only
// once it returned a tree, before anything is sent.
[[nodiscard]] Result<PushReport> push_to_server(Services& s, const JobServer& server, SshSession& session, const PushSettings& p,
                                                std::function<Result<LocalTree>()> walked);
// The contract's keys {files_total, files_sent, bytes_sent, skipped{count, largest}, seconds,
// verified} plus remote_dir, bytes_total, sessions, streams (the same), per_stream [{bytes,
// seconds, mb_per_s, units}], verify_method, failed, warnings (the walk's
// and the send's), git {commit, dirty, git_dir {bytes, files, sent}}, secrets_sent, deleted
// (the paths --delete removed; empty without it), never_pushed {count, paths} (--delete: kept,
// gpurent never pushed them) and delete_without_record.
[[nodiscard]] nlohmann::json push_report_json(const PushReport& r);
void print_push_report(std::ostream& o, const PushReport& r);

}  // namespace gpurent
