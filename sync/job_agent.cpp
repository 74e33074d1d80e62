// SPDX-License-Identifier: MIT
#include "sync/job_agent.hpp"

#include <charconv>
#include <chrono>

#include "common/clock.hpp"

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

// `alive PID ID`: the runner of job ID still runs as PID (not a recycled PID).
constexpr const char* k_alive =
    "alive() { [ -n \"$1\" ] && kill -0 \"$1\" 2>/dev/null || return 1\n"
    "  [ -r \"/proc/$1/cmdline\" ] || return 0\n"
    "  tr '\\000' ' ' < \"/proc/$1/cmdline\" | grep -qF -- \"$2/run.sh\"; }\n";

// The runner, written to the job's run.sh; $1 is the job's directory, $2 the launcher. Its own
// files are private (a systemd unit does not inherit the start's umask); the command gets the
// login shell's umask back.
constexpr const char* k_runner =
    "umask 077\n"
    "d=$1\n"
    "u=$(cat \"$d/umask\" 2>/dev/null); case $u in ''|*[!0-7]*) u=022;; esac\n"
    "echo $$ > \"$d/runner.tmp\" && mv -f \"$d/runner.tmp\" \"$d/runner\"\n"
    "[ \"$2\" = systemd-run ] && [ -f \"$d/environ\" ] && . \"$d/environ\"\n"
    "[ -f \"$d/env\" ] && . \"$d/env\"\n"
    "done_with() { date +%s > \"$d/ended\"; echo \"$1\" > \"$d/exit.tmp\" && mv -f \"$d/exit.tmp\" \"$d/exit\"; exit 0; }\n"
    "cd -- \"$(cat \"$d/workdir\")\" 2>>\"$d/log\" || done_with 126\n"
    "date +%s > \"$d/started\"\n"
    "if command -v bash >/dev/null 2>&1; then sh_=bash; else sh_=sh; fi\n"
    "if command -v setsid >/dev/null 2>&1; then\n"
    "  setsid sh -c 'echo $$ > \"$1/pid\"; umask \"$3\"; exec \"$2\" \"$1/cmd.sh\"' sh \"$d\" \"$sh_\" \"$u\" </dev/null >>\"$d/log\" 2>&1 &\n"
    "else\n"
    "  sh -c 'echo $$ > \"$1/pid\"; umask \"$3\"; exec \"$2\" \"$1/cmd.sh\"' sh \"$d\" \"$sh_\" \"$u\" </dev/null >>\"$d/log\" 2>&1 &\n"
    "fi\n"
    "wait $!\n"
    "done_with $?\n";

std::string job_dir(std::string_view id)
{
  return "\"$HOME/.gpurent/jobs/\"" + shell_quote(id);
}

bool is_env_name(std::string_view k)
{
  if (k.empty() || (k[0] >= '0' && k[0] <= '9')) {
    return false;
  }
  for (const char c : k) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}


template <class T>
std::optional<T> number(std::string_view s)
{
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

bool is_valid_job_id(std::string_view id) noexcept
{
  if (id.empty() || id.size() > 64 || id[0] == '.' || id[0] == '-') {
    return false;
  }
  for (const char c : id) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

std::string make_job_id(std::int64_t unix_seconds, std::uint32_t random)
{
  // "2026-11-30T10:15:00Z" -> "20261130-101500"
  const std::string iso = utc_iso8601(std::chrono::system_clock::time_point{std::chrono::seconds{unix_seconds}});
  std::string id;
  for (const char c : iso) {
    if (c >= '0' && c <= '9') {
      id.push_back(c);
    } else if (c == 'T') {
      id.push_back('-');
    }
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  id.push_back('-');
  for (int shift = 12; shift >= 0; shift -= 4) {
    id.push_back(k_hex[(random >> static_cast<unsigned>(shift)) & 0xFU]);
  }
  return id;
}

Result<JobStartScript> job_start_command(const JobLaunch& spec)
{
  if (!is_valid_job_id(spec.id)) {
    return fail(Errc::invalid_input, "job id '" + spec.id + "' is not valid");
  }
  std::string env;
  for (const auto& [k, v] : spec.env) {
    if (!is_env_name(k)) {
      return fail(Errc::usage, "--env " + k + "=...: '" + k + "' is not a variable name (letters, digits and _)");
    }
    env += "export " + k + "=" + shell_quote(v) + "\n";
  }
  // The environment arrives on stdin, read before anything else can fail (a start that fails
  // later removes the job's directory with it).
  std::string command =
      "u=$(umask)\n"
      "umask 077\n"
      "d=" + job_dir(spec.id) +
         "\n"
         "fail() { printf 'gpurent-job\\0error\\0%s\\0' \"$1\"; exit 3; }\n"
         "mkdir -p -- \"$HOME/.gpurent/jobs\" 2>/dev/null || fail mkdir\n"
         "chmod 700 -- \"$HOME/.gpurent\" \"$HOME/.gpurent/jobs\" 2>/dev/null\n"
         "mkdir -- \"$d\" 2>/dev/null || fail exists\n"
         "cat > \"$d/env\" || { rm -rf -- \"$d\"; fail env; }\n"
         "printf '%s\\n' \"$u\" > \"$d/umask\"\n"
         "cd -- " +
         remote_shell_path(spec.workdir) +
         " 2>/dev/null || { rm -rf -- \"$d\"; fail workdir; }\n"
         "pwd > \"$d/workdir\"\n"
         "printf '%s\\n' " +
         shell_quote(spec.command) + " > \"$d/cmd.sh\"\n" +
         "printf '%s' " + shell_quote(k_runner) + " > \"$d/run.sh\"\n" +
         ": > \"$d/log\"\n"
         "l=\n"
         "if [ -d \"${GPURENT_SYSTEMD_DIR:-/run/systemd/system}\" ] && [ \"$(id -u)\" = 0 ] && command -v systemd-run >/dev/null 2>&1; then\n"
         // sh's own `export -p` (bash's prints `declare -x`), to be read back by sh
         "  sh -c 'export -p' > \"$d/environ\"\n"
         "  systemd-run --quiet --collect --unit=\"gpurent-job-" +
         spec.id +
         "\" sh \"$d/run.sh\" \"$d\" systemd-run >/dev/null 2>&1 && l=systemd-run\n"
         "fi\n"
         "if [ -z \"$l\" ] && command -v setsid >/dev/null 2>&1; then\n"
         "  setsid sh \"$d/run.sh\" \"$d\" setsid </dev/null >/dev/null 2>&1 & l=setsid\n"
         "elif [ -z \"$l\" ]; then\n"
         "  nohup sh \"$d/run.sh\" \"$d\" nohup </dev/null >/dev/null 2>&1 & l=nohup\n"
         "fi\n"
         "echo \"$l\" > \"$d/launcher\"\n"
         "i=0; while [ ! -s \"$d/runner\" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
         "printf 'gpurent-job\\0started\\0%s\\0%s\\0' \"$l\" \"$(cat \"$d/runner\" 2>/dev/null)\"\n";
  return JobStartScript{std::move(command), std::move(env)};
}

Result<JobStart> parse_job_start(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.size() >= 3 && f[0] == "gpurent-job" && f[1] == "error") {
    if (f[2] == "workdir") {
      return fail(Errc::not_found, "the working directory does not exist on the server; push first, or drop --no-push");
    }
    if (f[2] == "exists") {
      return fail(Errc::refused, "a job with that id already exists on the server");
    }
    return fail(Errc::unavailable, "cannot create the job's directory under ~/.gpurent/jobs on the server (" + std::string(f[2]) + ")");
  }
  if (f.size() != 4 || f[0] != "gpurent-job" || f[1] != "started" || f[2].empty()) {
    return fail(Errc::invalid_input, "the job start printed something unexpected; is a POSIX shell the login shell on the server?");
  }
  return JobStart{std::string(f[2]), number<std::int64_t>(f[3])};
}

std::string job_list_command(std::optional<std::string_view> id)
{
  const std::string which = id ? shell_quote(*id) : std::string("*");
  return std::string(k_alive) +
         "printf 'gpurent-jobs-1\\0'\n"
         "cd -- \"$HOME/.gpurent/jobs\" 2>/dev/null || { printf 'end\\0'; exit 0; }\n"
         "for d in " +
         which +
         "; do\n"
         "  [ -f \"$d/cmd.sh\" ] || continue\n"
         "  printf 'job\\0%s\\0' \"$d\"\n"
         // Whether the runner lives, asked before its exit status is read: a runner that ends
         // in between has written it by then (else the job would look lost).
         "  if alive \"$(cat \"$d/runner\" 2>/dev/null)\" \"$d\"; then printf 'alive\\0%s\\0' yes; fi\n"
         "  for k in workdir started ended exit pid launcher; do\n"
         "    [ -f \"$d/$k\" ] && printf '%s\\0%s\\0' \"$k\" \"$(cat \"$d/$k\")\"\n"
         "  done\n"
         "  printf 'log_size\\0%s\\0' \"$(wc -c < \"$d/log\" 2>/dev/null)\"\n"
         "  printf 'cmd\\0%s\\0' \"$(cat \"$d/cmd.sh\")\"\n"
         "  printf 'done\\0'\n"
         "done\n"
         "printf 'end\\0'\n";
}

std::string_view to_string(JobState s) noexcept
{
  switch (s) {
  case JobState::running: return "running";
  case JobState::succeeded: return "succeeded";
  case JobState::failed: return "failed";
  case JobState::lost: return "lost";
  }
  return "lost";
}

std::optional<JobState> parse_job_state(std::string_view s) noexcept
{
  for (const auto st : {JobState::running, JobState::succeeded, JobState::failed, JobState::lost}) {
    if (to_string(st) == s) {
      return st;
    }
  }
  return std::nullopt;
}

JobState job_state(const RemoteJob& j) noexcept
{
  if (j.exit_code) {
    return *j.exit_code == 0 ? JobState::succeeded : JobState::failed;
  }
  return j.runner_alive ? JobState::running : JobState::lost;
}

Result<std::vector<RemoteJob>> parse_job_list(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.empty() || f[0] != "gpurent-jobs-1") {
    return fail(Errc::invalid_input, "the job listing printed something unexpected; is a POSIX shell the login shell on the server?");
  }
  std::vector<RemoteJob> jobs;
  std::size_t i = 1;
  while (i < f.size() && f[i] == "job") {
    if (i + 1 >= f.size() || !is_valid_job_id(f[i + 1])) {
      return fail(Errc::invalid_input, "the job listing has a bad job id");
    }
    RemoteJob j;
    j.id = std::string(f[i + 1]);
    i += 2;
    while (i < f.size() && f[i] != "done") {
      if (i + 1 >= f.size()) {
        return fail(Errc::invalid_input, "the job listing was cut short");
      }
      const auto k = f[i];
      const auto v = f[i + 1];
      if (k == "workdir") {
        j.workdir = std::string(v);
      } else if (k == "started") {
        j.started = number<std::int64_t>(v);
      } else if (k == "ended") {
        j.ended = number<std::int64_t>(v);
      } else if (k == "exit") {
        j.exit_code = number<int>(v);
      } else if (k == "pid") {
        j.pid = number<std::int64_t>(v);
      } else if (k == "launcher") {
        j.launcher = std::string(v);
      } else if (k == "alive") {
        j.runner_alive = v == "yes";
      } else if (k == "log_size") {
        j.log_size = number<std::uint64_t>(v).value_or(0);
      } else if (k == "cmd") {
        j.command = std::string(v);
      }
      i += 2;
    }
    if (i >= f.size()) {
      return fail(Errc::invalid_input, "the job listing was cut short");
    }
    ++i;  // "done"
    jobs.push_back(std::move(j));
  }
  if (i != f.size() - 1 || f[i] != "end") {
    return fail(Errc::invalid_input, "the job listing was cut short or has unexpected records");
  }
  return jobs;
}

std::string job_log_command(std::string_view id, std::optional<std::uint64_t> lines)
{
  // The first S bytes of the log, S said first on stderr, so a follow can go on from byte S.
  const std::string read = lines ? " | tail -n " + std::to_string(*lines) : std::string();
  return "d=" + job_dir(id) +
         "\n[ -f \"$d/cmd.sh\" ] || { echo missing >&2; exit 3; }\n"
         "s=$(wc -c < \"$d/log\" 2>/dev/null) || s=0\n"
         "s=$((s + 0))\n"
         "echo \"gpurent-log $s\" >&2\n"
         "head -c \"$s\" -- \"$d/log\"" +
         read + "\n";
}

std::string job_log_from_command(std::string_view id, std::uint64_t offset)
{
  const std::string off = std::to_string(offset);
  return "d=" + job_dir(id) +
         "\n[ -f \"$d/cmd.sh\" ] || { echo missing >&2; exit 3; }\n"
         "s=$(wc -c < \"$d/log\" 2>/dev/null) || s=0\n"
         "s=$((s + 0))\n"
         "echo \"gpurent-log $s\" >&2\n"
         "if [ \"$s\" -gt " + off + " ]; then tail -c +" + std::to_string(offset + 1) + " -- \"$d/log\" | head -c $((s - " + off +
         ")); fi\n";
}

std::optional<std::uint64_t> parse_log_size(std::string_view err)
{
  constexpr std::string_view marker = "gpurent-log ";
  const auto at = err.find(marker);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  auto rest = err.substr(at + marker.size());
  return number<std::uint64_t>(rest.substr(0, rest.find('\n')));
}

std::string job_log_tail_command(std::string_view id, std::uint64_t bytes)
{
  return "d=" + job_dir(id) + "\n[ -f \"$d/cmd.sh\" ] || { echo missing >&2; exit 3; }\ntail -c " + std::to_string(bytes) +
         " -- \"$d/log\"\n";
}

std::string job_follow_command(std::string_view id, std::uint64_t offset)
{
  const std::string from = std::to_string(offset + 1);
  return std::string(k_alive) + "d=" + job_dir(id) + "\nj=" + shell_quote(id) +
         "\n"
         "[ -f \"$d/cmd.sh\" ] || { echo 'gpurent-follow missing' >&2; exit 3; }\n"
         "echo 'gpurent-follow 1' >&2\n"
         "(while sleep 5 </dev/null >/dev/null 2>&1; do echo tick >&2 || exit 0; done) </dev/null >/dev/null & hb=$!\n"
         "trap 'kill $hb 2>/dev/null' EXIT\n"
         "r=$(cat \"$d/runner\" 2>/dev/null)\n"
         // tail --pid watches the job's own process, which the runner reaps at once (the runner
         // itself may linger as a zombie where PID 1 does not reap, as in many containers).
         "i=0; while [ ! -s \"$d/pid\" ] && [ ! -f \"$d/exit\" ] && alive \"$r\" \"$j\" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done\n"
         "p=$(cat \"$d/pid\" 2>/dev/null)\n"
         "if [ ! -f \"$d/exit\" ] && [ -n \"$p\" ] && alive \"$r\" \"$j\"; then tail -c +" +
         from +
         " -s 0.5 --pid=\"$p\" -f -- \"$d/log\" 2>/dev/null\n"
         "else tail -c +" +
         from +
         " -- \"$d/log\" 2>/dev/null; fi\n"
         "i=0; while [ ! -f \"$d/exit\" ] && alive \"$r\" \"$j\" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done\n"
         "kill $hb 2>/dev/null\n"
         "if alive \"$r\" \"$j\"; then a=1; else a=0; fi\n"
         "if [ -f \"$d/exit\" ]; then echo \"end exit $(cat \"$d/exit\")\" >&2\n"
         "elif [ $a = 1 ]; then echo 'end running' >&2\n"
         "else echo 'end lost' >&2; fi\n";
}

void FollowControl::feed(std::string_view data)
{
  for (const char c : data) {
    if (c != '\n') {
      if (m_line.size() < 4096) {
        m_line.push_back(c);
      }
      continue;
    }
    if (m_line == "gpurent-follow 1") {
      m_started = true;
    } else if (m_line == "gpurent-follow missing") {
      m_missing = true;
    } else if (m_line.starts_with("end ")) {
      m_end = m_line.substr(4);
    }
    m_line.clear();
  }
}

std::optional<int> FollowControl::exit_code() const noexcept
{
  if (!m_end || !m_end->starts_with("exit ")) {
    return std::nullopt;
  }
  return number<int>(std::string_view(*m_end).substr(5));
}

std::string job_kill_command(std::string_view id, unsigned grace_s)
{
  return "d=" + job_dir(id) +
         "\n"
         "[ -f \"$d/cmd.sh\" ] || { printf missing; exit 0; }\n"
         "[ -f \"$d/exit\" ] && { printf ended; exit 0; }\n"
         "p=$(cat \"$d/pid\" 2>/dev/null)\n"
         "[ -n \"$p\" ] || { printf not-started; exit 0; }\n"
         "kill -s TERM -- \"-$p\" 2>/dev/null || kill -s TERM \"$p\" 2>/dev/null\n"
         "i=0; while [ ! -f \"$d/exit\" ] && [ $i -lt " +
         std::to_string(grace_s * 10) +
         " ]; do sleep 0.1; i=$((i+1)); done\n"
         "[ -f \"$d/exit\" ] && { printf stopped; exit 0; }\n"
         "kill -s KILL -- \"-$p\" 2>/dev/null || kill -s KILL \"$p\" 2>/dev/null\n"
         "i=0; while [ ! -f \"$d/exit\" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done\n"
         "printf killed\n";
}

Result<KillOutcome> parse_job_kill(std::string_view out)
{
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) {
    out.remove_suffix(1);
  }
  if (out == "stopped") {
    return KillOutcome::stopped;
  }
  if (out == "killed") {
    return KillOutcome::killed;
  }
  if (out == "ended") {
    return KillOutcome::already_ended;
  }
  if (out == "missing") {
    return KillOutcome::missing;
  }
  if (out == "not-started") {
    return KillOutcome::not_started;
  }
  return fail(Errc::invalid_input, "stopping the job printed something unexpected; is a POSIX shell the login shell on the server?");
}

}  // namespace gpurent
