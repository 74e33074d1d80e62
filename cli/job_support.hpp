// SPDX-License-Identifier: MIT
#pragma once
// What push, run, logs and jobs share (no CLI11 here): the server a job command talks to (NAME
// or --host), the job records (server's and local),
// the out-of-memory diagnosis of a failed job's log, and bringing local records in line with
// the server (which also carries out pending --then steps of jobs that ended).
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/ssh_options.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"
#include "sync/job_agent.hpp"
#include "sync/transport.hpp"

namespace gpurent {
struct Services;

struct JobServer {
  SshDestination dest;
  SshOptions options;
  SshFlags flags;                      // as given (the --then steps reconnect with them)
  std::optional<ServerRecord> record;  // a tracked server (NAME); nullopt for --host
  std::string target;                  // "user@host:port": keys the local job records
};

// A string as a JSON value; bytes that are not UTF-8 (local and remote names) become U+FFFD.
[[nodiscard]] nlohmann::json text_json(const std::string& s);

// Positionals "NAME REST..."; with --host there is no NAME and all of them are REST.
[[nodiscard]] std::pair<std::string, std::vector<std::string>> name_and_rest(std::vector<std::string> args, const SshFlags& flags);

// --env NAME=VALUE values, in order.
[[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>> parse_env(const std::vector<std::string>& kvs);
// A new job id from the clock and 16 random bits (sync/job_agent.hpp make_job_id).
[[nodiscard]] std::string new_job_id(Services& s);

// NAME (a tracked server) or --host USER@HOST[:PORT].
[[nodiscard]] Result<JobServer> open_job_server(Services& s, const std::string& name, const SshFlags& flags);
[[nodiscard]] Result<std::unique_ptr<SshSession>> connect_job_server(Services& s, const JobServer& server);

// How much of a failed job's log is read for its out-of-memory report (it sits at the end).
inline constexpr std::uint64_t k_oom_log_tail = 2ULL << 20;

// `gpurent oom` over a log's text, in this process (the command's own parsing, diagnosis and
// views), for the server's card when gpurent knows it. nullopt: the log holds no out-of-memory
// report. `json`: the document of `oom --json`; else its text view.
[[nodiscard]] std::optional<std::string> oom_diagnosis(Services& s, const std::string& log, const std::string& card, bool json);

// The server's view of its jobs (all, or one).
[[nodiscard]] Result<std::vector<RemoteJob>> list_server_jobs(SshSession& session, std::optional<std::string_view> id = std::nullopt);
// The jobs of `listed` that are this server's own: a group member leaves out the other members'
// parts of group jobs (<id>-r<rank>), which a home directory shared by the members also holds.
[[nodiscard]] std::vector<RemoteJob> own_jobs(const JobServer& server, std::vector<RemoteJob> listed);
// "~/.gpurent/jobs/<id>/log"
[[nodiscard]] std::string job_log_path(std::string_view id);

// The job `ref` names on the server (cli/job_ids.hpp: the whole id, a unique prefix or suffix,
// #N or N), among the jobs it lists and those recorded here for it, numbered in start order.
[[nodiscard]] Result<std::string> resolve_job(Services& s, const JobServer& server, const std::vector<RemoteJob>& listed,
                                              std::string_view ref);
// A job's number on its server (1, 2, ... in start order) among `recorded` (one server's).
[[nodiscard]] std::optional<std::size_t> job_number(const std::vector<JobRecord>& recorded, std::string_view id);
// Every job's number at once: job_id -> number.
[[nodiscard]] std::map<std::string, std::size_t, std::less<>> job_numbers(const std::vector<JobRecord>& recorded);
// The records in start order (job #1 first).
[[nodiscard]] std::vector<JobRecord> in_start_order(std::vector<JobRecord> recorded);
// The same from the records of `target` in the state store (nullopt when it cannot be read).
[[nodiscard]] std::optional<std::size_t> recorded_job_number(Services& s, const std::string& target, std::string_view id);

// `run --stop JOB` and `jobs --kill JOB` (JOB as resolve_job reads it): SIGTERM to the job's
// process group, SIGKILL after `grace` seconds; says what happened on stderr. A job it stopped
// is recorded as cancelled (its exit code stays). Returns the job's whole id. Errc::not_found
// when the server has no such job.
[[nodiscard]] Result<std::string> stop_job(Services& s, const JobServer& server, SshSession& session, const std::string& ref,
                                           unsigned grace);

// One job in the contract's shape: id, number (null when unknown), command, workdir, state
// (running, succeeded, failed, cancelled, lost), exit_code, started, ended, log, oom (null or
// the oom --json document), then [{step, state, detail}].
[[nodiscard]] nlohmann::json job_json(const JobRecord& j, std::optional<std::size_t> number);
// succeeded, failed, cancelled (stopped by `jobs --kill`, `run --stop`), lost.
[[nodiscard]] bool job_ended(const JobRecord& j);

// Brings the local records of `server` in line with its listing: states, exit codes, end times;
// a job the server no longer knows is lost; jobs only the server knows are recorded; a job
// newly seen failed gets the OOM diagnosis of its log's end. Then carries out the pending
// --then steps of every ended job (once: steps are claimed in the store). A job recorded as
// cancelled stays cancelled (its exit code and end are the server's). Returns the records in
// start order (job #1 first); `steps_failed` tells whether a step failed this time.
struct SettledJobs {
  std::vector<JobRecord> jobs;
  bool steps_failed = false;
};
[[nodiscard]] Result<SettledJobs> settle_jobs(Services& s, const JobServer& server, SshSession& session,
                                              const std::vector<RemoteJob>& remote);
// For `gpurent status`: the jobs with pending steps on tracked servers are checked on their
// servers and their steps carried out when they ended. Problems are warnings.
void settle_pending_steps(Services& s, StateStore& store);

}  // namespace gpurent
