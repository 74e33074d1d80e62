// SPDX-License-Identifier: MIT
#pragma once
// PURE: the remote side of `gpurent autostop` (POSIX sh plus coreutils, nothing installed on the
// server but the script itself) and the commands that arm, steer and read it. One directory:
//
//   ~/.gpurent/autostop/   watchdog.sh (the script), config (its settings, sh assignments),
//                          credential (0600: the API key the user handed over, when one was;
//                          removed by the watchdog on every exit it controls, and by --cancel
//                          and re-arming), all created under umask 077,
//                          pid, launcher, pause (until when, Unix seconds), cancel (a request to
//                          end), log (samples and decisions, read by sync/autostop_log.hpp),
//                          on-idle.log (the output of --on-idle)
//
// The watchdog is started detached from the SSH session like a job's runner (job_agent.hpp):
// a transient systemd unit where systemd runs (the system manager as root, the user manager
// otherwise), else setsid, else nohup. It samples every `interval_s` seconds and decides by
// the rule of docs/autostop.md (the C++ mirror is autostop_sample_idle in autostop_log.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/backup_target.hpp"

namespace gpurent {

// What the watchdog does when the idle limit is reached.
enum class AutostopAction { stop, hibernate, destroy };
[[nodiscard]] std::string_view to_string(AutostopAction a) noexcept;
[[nodiscard]] std::optional<AutostopAction> parse_autostop_action(std::string_view s) noexcept;

// Whether the server can reach the provider's API, and for which actions: Lambda terminates
// only (no stop, no hibernate), RunPod and Vast stop and destroy (neither hibernates), the
// providers without an API (gpucloud, cloudgpu) and servers without a provider id nothing.
struct AutostopApi {
  std::string provider;  // "lambda", "runpod", "vast"; empty: no API from the server
  bool can_stop = false;
  bool can_destroy = false;
};
[[nodiscard]] AutostopApi autostop_api(std::string_view provider, bool has_provider_id) noexcept;

struct AutostopSettings {
  std::int64_t idle_s = 1800;
  AutostopAction then = AutostopAction::stop;
  std::int64_t release_after_s = 0;  // 0: no second stage
  std::uint32_t gpu_util_pct = 5;
  std::int64_t interval_s = 60;
  // The provider API the watchdog calls ("" = none), its base URL and the server's id there.
  std::string api;
  std::string api_url;
  std::string instance_id;
  // "file": the key handed over with --server-credential (sent on stdin, kept 0600);
  // "instance": the provider's instance-scoped key from the server's environment; "none".
  std::string credential = "none";
  std::string on_idle;        // a shell command run when idle (all providers)
  std::string backup_to;      // --backup-to as given: where the server backs up to before destroying
  std::optional<BackupTarget> backup_target;  // backup_to, parsed (sync/autostop_target.hpp)
  std::string backup_dir;     // what it backs up (the workspace)
  bool no_backup = false;     // --no-backup given when arming
  std::string nvidia_smi = "nvidia-smi";
  std::int64_t armed_at = 0;
};

// The watchdog script itself ($1 = its directory, $2 = the launcher's name).
[[nodiscard]] std::string_view autostop_watchdog_script() noexcept;
// The settings as the config file the script sources (every value shell-quoted).
[[nodiscard]] std::string autostop_config_text(const AutostopSettings& s);

// Writes the script and config, stores the credential read from stdin (when `credential` is
// "file"; nothing else is read), stops a watchdog already running, starts the new one detached
// and prints "gpurent-autostop\0armed\0LAUNCHER\0PID\0CURL\0INSTANCE_KEY\0" (CURL: yes/no, whether
// the server has curl; INSTANCE_KEY: yes/no, whether the provider's instance-scoped key is
// there), or "gpurent-autostop\0error\0WHAT\0". `backup_check`: try an SSH login to the
// backup target first (BatchMode) and fail with "backup-unreachable" when it does not work.
[[nodiscard]] std::string autostop_arm_command(const AutostopSettings& s, bool backup_check);

struct AutostopArmed {
  std::string launcher;
  std::optional<std::int64_t> pid;
  bool has_curl = false;
  bool instance_key = false;
};
[[nodiscard]] Result<AutostopArmed> parse_autostop_arm(std::string_view out);

// --pause (until Unix seconds), --resume, --cancel. Prints "ok" or "none" (no watchdog there).
// --cancel removes the credential either way.
[[nodiscard]] std::string autostop_pause_command(std::int64_t until);
[[nodiscard]] std::string autostop_resume_command();
[[nodiscard]] std::string autostop_cancel_command();

// Prints "gpurent-autostop-state-1\0", then "config\0TEXT\0" (the settings), "alive\0yes|no\0",
// "pause\0UNTIL\0" when paused, "now\0T\0", and "log\0TEXT\0" (the log's last `lines` lines);
// only the header and "none\0" when nothing was armed.
[[nodiscard]] std::string autostop_read_command(unsigned lines = 400);

}  // namespace gpurent
