// SPDX-License-Identifier: MIT
#include "sync/autostop_agent.hpp"

#include <charconv>

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_watchdog =
#include "sync/autostop_watchdog.sh.inc"
    ;

constexpr const char* k_dir = "d=\"$HOME/.gpurent/autostop\"\n";

// Ends the watchdog named in $d/pid (only when that process runs our script).
constexpr const char* k_stop_old =
    "wd_pid() { p=$(cat \"$d/pid\" 2>/dev/null); [ -n \"$p\" ] && kill -0 \"$p\" 2>/dev/null || return 1\n"
    "  if [ -r \"/proc/$p/cmdline\" ]; then tr '\\000' ' ' < \"/proc/$p/cmdline\" | grep -qF autostop/watchdog.sh || return 1; fi\n"
    "  echo \"$p\"; }\n"
    // Ends watchdog $1: SIGTERM (its traps remove the credential), SIGKILL after 5 s, so it is
    // gone before anything is written for its successor. A zombie (where PID 1 does not reap)
    // has ended.
    "wd_live() { kill -0 \"$1\" 2>/dev/null || return 1; [ \"$(sed 's/.*) //' \"/proc/$1/stat\" 2>/dev/null | cut -c1)\" != Z ]; }\n"
    "wd_end() { kill \"$1\" 2>/dev/null; i=0; while wd_live \"$1\" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done\n"
    "  kill -s KILL \"$1\" 2>/dev/null; i=0; while wd_live \"$1\" && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; }\n";

// What a disarmed server keeps of an arming: nothing of the handed-over credential.
constexpr const char* k_forget_credential = "rm -f \"$d/credential\" \"$d/credential.tmp\"\n";

std::optional<std::int64_t> number(std::string_view s)
{
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::string_view to_string(AutostopAction a) noexcept
{
  switch (a) {
  case AutostopAction::stop: return "stop";
  case AutostopAction::hibernate: return "hibernate";
  case AutostopAction::destroy: return "destroy";
  }
  return "stop";
}

std::optional<AutostopAction> parse_autostop_action(std::string_view s) noexcept
{
  for (const auto a : {AutostopAction::stop, AutostopAction::hibernate, AutostopAction::destroy}) {
    if (to_string(a) == s) {
      return a;
    }
  }
  return std::nullopt;
}

AutostopApi autostop_api(std::string_view provider, bool has_provider_id) noexcept
{
  if (!has_provider_id) {
    return {};
  }
  if (provider == "lambda") {
    return {"lambda", false, true};
  }
  if (provider == "runpod" || provider == "vast") {
    return {std::string(provider), true, true};
  }
  return {};
}

std::string_view autostop_watchdog_script() noexcept { return k_watchdog; }

std::string autostop_config_text(const AutostopSettings& s)
{
  std::string c;
  const auto put = [&c](std::string_view k, std::string_view v) {
    c += std::string(k) + "=" + shell_quote(v) + "\n";
  };
  put("AS_IDLE", std::to_string(s.idle_s));
  put("AS_THEN", to_string(s.then));
  put("AS_RELEASE", std::to_string(s.release_after_s));
  put("AS_UTIL", std::to_string(s.gpu_util_pct));
  put("AS_INTERVAL", std::to_string(s.interval_s));
  put("AS_API", s.api);
  put("AS_API_URL", s.api_url);
  put("AS_INSTANCE", s.instance_id);
  put("AS_CRED", s.credential);
  put("AS_ON_IDLE", s.on_idle);
  put("AS_BACKUP_TO", s.backup_to);
  const auto& t = s.backup_target;
  put("AS_BACKUP_HOST", t ? t->user + "@" + t->host : std::string());
  put("AS_BACKUP_PORT", t && t->port != 0 ? std::to_string(t->port) : std::string());
  put("AS_BACKUP_PATH", t ? t->path : std::string());
  put("AS_BACKUP_STEM", autostop_backup_stem(s.instance_id, s.armed_at));
  put("AS_BACKUP_DIR", s.backup_dir);
  put("AS_NO_BACKUP", s.no_backup ? "1" : "0");
  put("AS_NVIDIA_SMI", s.nvidia_smi);
  put("AS_ARMED_AT", std::to_string(s.armed_at));
  return c;
}

std::string autostop_arm_command(const AutostopSettings& s, bool backup_check)
{
  std::string c = std::string("umask 077\n") + k_dir + k_stop_old +
                  "fail() { printf 'gpurent-autostop\\0error\\0%s\\0' \"$1\"; exit 3; }\n"
                  "mkdir -p \"$d\" && chmod 700 \"$HOME/.gpurent\" \"$d\" || fail mkdir\n"
                  "if o=$(wd_pid); then wd_end \"$o\"\n"
                  "  printf 'exit t=%s why=re-armed\\n' \"$(date +%s)\" >> \"$d/log\"; fi\n"
                  "rm -f \"$d/pid\" \"$d/cancel\" \"$d/pause\"\n";
  if (s.credential == "file") {
    c += "cat > \"$d/credential.tmp\" && [ -s \"$d/credential.tmp\" ] && mv -f \"$d/credential.tmp\" \"$d/credential\" || fail credential\n";
  } else {
    c += k_forget_credential;
  }
  c += "printf '%s' " + shell_quote(k_watchdog) + " > \"$d/watchdog.sh\" || fail write\n";
  c += "printf '%s' " + shell_quote(autostop_config_text(s)) + " > \"$d/config\" || fail write\n";
  if (backup_check && s.backup_target) {
    const auto& t = *s.backup_target;
    c += "cfg=; [ -f \"$HOME/.ssh/config\" ] && cfg=\"-F $HOME/.ssh/config\"\n"
         "ssh -o BatchMode=yes -o ConnectTimeout=10 $cfg " +
         (t.port != 0 ? "-p " + std::to_string(t.port) + " " : std::string()) + shell_quote(t.user + "@" + t.host) +
         " 'command -v sha256sum >/dev/null' </dev/null >/dev/null 2>&1 || fail backup-unreachable\n";
  }
  c += "cu=no; command -v curl >/dev/null 2>&1 && cu=yes\n"
       "ik=no\n";
  if (s.api == "runpod" || s.api == "vast") {
    const std::string v = s.api == "runpod" ? "RUNPOD_API_KEY" : "CONTAINER_API_KEY";
    c += "{ [ -n \"${" + v + ":-}\" ] || tr '\\000' '\\n' < /proc/1/environ 2>/dev/null | grep -q '^" + v + "=.'; } && ik=yes\n";
  }
  // Started like a job's runner (job_agent.cpp): a transient systemd unit survives the SSH
  // session's end even with KillUserProcesses; setsid leaves the session (no hangup).
  c += "unit=gpurent-autostop-$(date +%s)\n"
       "l=\n"
       "if [ -d \"${GPURENT_SYSTEMD_DIR:-/run/systemd/system}\" ] && command -v systemd-run >/dev/null 2>&1; then\n"
       "  if [ \"$(id -u)\" = 0 ]; then\n"
       "    systemd-run --quiet --collect --unit=\"$unit\" --setenv=HOME=\"$HOME\" --setenv=PATH=\"$PATH\" sh \"$d/watchdog.sh\" \"$d\" systemd-run >/dev/null 2>&1 && l=systemd-run\n"
       "  else\n"
       "    systemd-run --user --quiet --collect --unit=\"$unit\" --setenv=HOME=\"$HOME\" --setenv=PATH=\"$PATH\" sh \"$d/watchdog.sh\" \"$d\" systemd-run-user >/dev/null 2>&1 && l=systemd-run-user\n"
       "  fi\n"
       "fi\n"
       "if [ -z \"$l\" ] && command -v setsid >/dev/null 2>&1; then\n"
       "  setsid sh \"$d/watchdog.sh\" \"$d\" setsid </dev/null >/dev/null 2>&1 & l=setsid\n"
       "elif [ -z \"$l\" ]; then\n"
       "  nohup sh \"$d/watchdog.sh\" \"$d\" nohup </dev/null >/dev/null 2>&1 & l=nohup\n"
       "fi\n"
       "i=0; while [ ! -s \"$d/pid\" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
       "printf 'gpurent-autostop\\0armed\\0%s\\0%s\\0%s\\0%s\\0' \"$l\" \"$(cat \"$d/pid\" 2>/dev/null)\" \"$cu\" \"$ik\"\n";
  return c;
}

Result<AutostopArmed> parse_autostop_arm(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.size() >= 3 && f[0] == "gpurent-autostop" && f[1] == "error") {
    if (f[2] == "backup-unreachable") {
      return fail(Errc::refused, "the server cannot log in to the --backup-to host over SSH without a password (or the host "
                                 "has no sha256sum); set up a key and known host on the server first");
    }
    if (f[2] == "credential") {
      return fail(Errc::invalid_input, "the server did not store the credential");
    }
    return fail(Errc::unavailable, "cannot write ~/.gpurent/autostop on the server (" + std::string(f[2]) + ")");
  }
  if (f.size() != 6 || f[0] != "gpurent-autostop" || f[1] != "armed" || f[2].empty()) {
    return fail(Errc::invalid_input, "arming the watchdog printed something unexpected; is a POSIX shell the login shell on the server?");
  }
  return AutostopArmed{std::string(f[2]), number(f[3]), f[4] == "yes", f[5] == "yes"};
}

std::string autostop_pause_command(std::int64_t until)
{
  return std::string("umask 077\n") + k_dir + k_stop_old + "wd_pid >/dev/null || { printf none; exit 0; }\n" +
         "echo " + std::to_string(until) + " > \"$d/pause.tmp\" && mv -f \"$d/pause.tmp\" \"$d/pause\" && printf ok\n";
}

std::string autostop_resume_command()
{
  return std::string(k_dir) + k_stop_old + "wd_pid >/dev/null || { printf none; exit 0; }\nrm -f \"$d/pause\" && printf ok\n";
}

std::string autostop_cancel_command()
{
  return std::string("umask 077\n") + k_dir + k_stop_old +
         "o=$(wd_pid) || { rm -f \"$d/pid\"; " + k_forget_credential + "printf none; exit 0; }\n"
         ": > \"$d/cancel\"\n"
         "wd_end \"$o\"\n"
         "printf 'exit t=%s why=cancelled\\n' \"$(date +%s)\" >> \"$d/log\"\n"
         "rm -f \"$d/pid\" \"$d/cancel\" \"$d/pause\"\n" + k_forget_credential +
         "printf ok\n";
}

std::string autostop_read_command(unsigned lines)
{
  return std::string(k_dir) + k_stop_old +
         "printf 'gpurent-autostop-state-1\\0'\n"
         "[ -f \"$d/config\" ] || { printf 'none\\0'; exit 0; }\n"
         "printf 'config\\0%s\\0' \"$(cat \"$d/config\")\"\n"
         "if wd_pid >/dev/null; then printf 'alive\\0yes\\0'; else printf 'alive\\0no\\0'; fi\n"
         "[ -f \"$d/pause\" ] && printf 'pause\\0%s\\0' \"$(cat \"$d/pause\")\"\n"
         "printf 'now\\0%s\\0' \"$(date +%s)\"\n"
         "printf 'log\\0%s\\0' \"$(tail -n " +
         std::to_string(lines) + " \"$d/log\" 2>/dev/null | tr -d '\\000')\"\n";
}

}  // namespace gpurent
