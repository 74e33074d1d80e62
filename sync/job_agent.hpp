// SPDX-License-Identifier: MIT
#pragma once
// PURE: the remote side of `gpurent run/logs/jobs` (POSIX sh plus coreutils, nothing installed
// on the server) and readers of what it prints. One directory per job:
//
//   ~/.gpurent/jobs/<id>/   cmd.sh (the command), workdir, env (--env), environ (the login
//                           environment, for systemd-run), umask (the login shell's, for the
//                           command), run.sh (the runner), launcher, runner (its PID), pid (the
//                           job's process group), started, log, then ended and exit (written by
//                           the runner when the job ends)
//
// Everything gpurent writes there is private to the user (umask 077: directories 0700, files
// 0600), and the --env values travel on the start command's standard input, never in its
// command line (which any user of the server sees in `ps`). The command itself runs with the
// login shell's umask, so the files the job writes get the modes they would get without gpurent.
//
// The runner is started detached from the SSH session: with systemd-run where systemd runs and
// the user is root (a transient unit survives logout even with KillUserProcesses), else setsid
// (a new session: no hangup when the connection drops), else nohup. It starts the command in
// its own process group (so stopping it reaches every process the job started), waits for it
// and records its exit status. A job is lost when its directory has no exit status and its
// runner no longer runs (the server rebooted, or the runner was killed).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// [A-Za-z0-9_.-], 1 to 64 characters, not starting with '.' or '-'.
[[nodiscard]] bool is_valid_job_id(std::string_view id) noexcept;
// "20261130-101500-3fa9": UTC start time and 16 random bits (sorts by start time).
[[nodiscard]] std::string make_job_id(std::int64_t unix_seconds, std::uint32_t random);

struct JobLaunch {
  std::string id;
  std::string workdir;  // as remote_shell_path takes it ("~/gpurent/x", "/abs")
  std::string command;  // command_line_text (sync/remote_listing.hpp) of the user's words
  std::vector<std::pair<std::string, std::string>> env;  // exported before the command
};
// The job's start: `command` to run, `input` to send on its standard input (the --env
// assignments, which stay out of the command line).
struct JobStartScript {
  std::string command;
  std::string input;
};
// Errc::invalid_input for a bad id, Errc::usage for a bad environment name.
[[nodiscard]] Result<JobStartScript> job_start_command(const JobLaunch& spec);

struct JobStart {
  std::string launcher;                  // "systemd-run", "setsid", "nohup"
  std::optional<std::int64_t> runner_pid;
};
// "gpurent-job\0started\0LAUNCHER\0PID\0" or "gpurent-job\0error\0WHAT\0".
[[nodiscard]] Result<JobStart> parse_job_start(std::string_view out);

// Every job (or only `id`), as records parse_job_list reads.
[[nodiscard]] std::string job_list_command(std::optional<std::string_view> id = std::nullopt);

struct RemoteJob {
  std::string id;
  std::string command;
  std::string workdir;
  std::string launcher;
  std::optional<std::int64_t> started;  // Unix seconds
  std::optional<std::int64_t> ended;
  std::optional<int> exit_code;
  std::optional<std::int64_t> pid;      // the job's process group
  bool runner_alive = false;
  std::uint64_t log_size = 0;
};
enum class JobState { running, succeeded, failed, lost };
[[nodiscard]] std::string_view to_string(JobState s) noexcept;
[[nodiscard]] std::optional<JobState> parse_job_state(std::string_view s) noexcept;
[[nodiscard]] JobState job_state(const RemoteJob& j) noexcept;
// Unknown keys are skipped (a newer agent may say more); malformed numbers read as absent.
[[nodiscard]] Result<std::vector<RemoteJob>> parse_job_list(std::string_view out);

// The log whole, or its last `lines` lines, as of its size S when asked, with "gpurent-log S"
// on stderr (a follow goes on from byte S); exit 3 and "missing" on stderr without the job.
[[nodiscard]] std::string job_log_command(std::string_view id, std::optional<std::uint64_t> lines);
[[nodiscard]] std::optional<std::uint64_t> parse_log_size(std::string_view err);
// The log from byte `offset` up to its size S now, with "gpurent-log S" on stderr (the next read
// goes on from S); exit 3 and "missing" on stderr without the job. `run GROUP` polls every node so.
[[nodiscard]] std::string job_log_from_command(std::string_view id, std::uint64_t offset);
// The last `bytes` of the log (for the out-of-memory report near its end).
[[nodiscard]] std::string job_log_tail_command(std::string_view id, std::uint64_t bytes);

// Follows the log from byte `offset`: stdout carries the log's bytes, stderr control lines:
// "gpurent-follow 1" first, "tick" every 5 s (so a dead connection is noticed), and at the end
// "end exit N", "end lost" or "end running"; "gpurent-follow missing" without the job.
[[nodiscard]] std::string job_follow_command(std::string_view id, std::uint64_t offset);

// Reads the follow's stderr as it arrives.
class FollowControl {
public:
  void feed(std::string_view data);
  [[nodiscard]] bool started() const noexcept { return m_started; }
  [[nodiscard]] bool missing() const noexcept { return m_missing; }
  // "exit N", "lost" or "running" once the follow said how it ended.
  [[nodiscard]] const std::optional<std::string>& end() const noexcept { return m_end; }
  // The exit status in an "exit N" end.
  [[nodiscard]] std::optional<int> exit_code() const noexcept;

private:
  std::string m_line;
  bool m_started = false;
  bool m_missing = false;
  std::optional<std::string> m_end;
};

// SIGTERM to the job's process group, SIGKILL after `grace_s` seconds if it has not ended.
[[nodiscard]] std::string job_kill_command(std::string_view id, unsigned grace_s);
enum class KillOutcome { stopped, killed, already_ended, missing, not_started };
[[nodiscard]] Result<KillOutcome> parse_job_kill(std::string_view out);

}  // namespace gpurent
