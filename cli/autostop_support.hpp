// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent autostop`, the --autostop flag of up/attach/run and `status` share (no CLI11
// here): arming the watchdog on a server (sync/autostop_agent.hpp), reading it back, its views,
// and bringing the ledger in line with what it did. docs/autostop.md.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/job_support.hpp"
#include "cli/ssh_options.hpp"
#include "providers/provider.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"
#include "sync/autostop_log.hpp"
#include "sync/autostop_release.hpp"

namespace gpurent {
struct Services;

// "30m", "2h", "90s", "1h30m", "1d"; a bare number is minutes. Errc::usage otherwise.
[[nodiscard]] Result<std::int64_t> parse_autostop_duration(std::string_view text, std::string_view flag);
// Seconds as the flags take them: "2h", "30m", "45s".
[[nodiscard]] std::string autostop_duration_text(std::int64_t seconds);

struct AutostopRequest {
  std::string idle;             // required to arm
  std::string then = "stop";
  std::string release_after;    // empty: no second stage
  std::uint32_t gpu_util = 5;
  std::string server_credential;  // the name of a local environment variable
  std::string backup_to;
  std::string backup_dir;       // empty: the server's workspace (provider terms), else ~
  bool no_backup = false;
  std::string on_idle;
};

// `--then mark-idle`: the watchdog never calls the provider; when idle it runs --on-idle and marks
// the server idle (billing goes on). The only choice for a server autostop cannot stop through
// an API (attached, --host, a provider without one): without it, arming there is refused.
inline constexpr std::string_view k_mark_idle = "mark-idle";

// The request's values (durations, --then, --gpu-util, --backup-to) without the server: usage
// errors before any connection.
[[nodiscard]] Result<void> check_autostop_request(const AutostopRequest& request);

// `--autostop 30m[:stop|hibernate|destroy]` of up, attach and run.
[[nodiscard]] Result<AutostopRequest> parse_autostop_flag(std::string_view value);

// Arms (or re-arms) the watchdog; says on stderr what it can and cannot do; records it.
[[nodiscard]] Result<AutostopView> arm_autostop(Services& s, const JobServer& server, SshSession& session,
                                                const AutostopRequest& request);
// Reads the watchdog's state; records it, and a stop or destroy it carried out, in the store.
[[nodiscard]] Result<AutostopView> read_autostop(Services& s, const JobServer& server, SshSession& session);

// For up, attach and run: `--autostop VALUE` given (non-empty) arms it on server NAME, handing
// over the key in `server_credential` (an environment variable's name; empty: none). nullopt
// when not given. A failure is also warned about (the server is up; arm it again with
// `gpurent autostop NAME ...`); `up` reports it as a partial success.
[[nodiscard]] Result<std::optional<AutostopView>> arm_autostop_flag(Services& s, const std::string& name,
                                                                    const std::string& value, const SshFlags& flags,
                                                                    const std::string& server_credential = {});

// The contract's document: armed, idle_limit_s, then, release_after_s, idle_for_s, next_action,
// next_action_at, can_stop_billing, last_sample{at, gpus[{index, utilization_pct,
// memory_used_mib}], sessions, jobs, readable}; plus paused, pause_until, last_action, ended.
[[nodiscard]] nlohmann::json autostop_json(const AutostopView& v);
// The autostop part of a command that otherwise succeeded (`up --autostop --json`) when arming
// failed: {"error": {"code", "message", "exit", "hint"}}, as errors are written.
[[nodiscard]] nlohmann::json autostop_error_json(const Error& e, std::string_view command);
void print_autostop_text(std::ostream& o, const std::string& name, const AutostopView& v);

// For `status`: the autostop of a tracked server as last read ("autostop" key; null when none),
// with a warning when it marked a server without an API idle (billing goes on).
// A stopped server with a release armed also gets "release" (autostop_release_json) and a warning.
[[nodiscard]] nlohmann::json autostop_status_json(StateStore& store, const ServerRecord& r, TimePoint now,
                                                  std::vector<std::string>& warnings);
// For `status`'s text: one line on the autostop of a tracked server as gpurent last read it
// ("armed: stop after 30m idle; next: stop at T"); empty when none was armed.
[[nodiscard]] std::string autostop_status_line(StateStore& store, const ServerRecord& r);
// The earliest time the armed watchdog of a running server could have stopped (or destroyed) it
// through the provider: the last read's next_action_at, else the last read (or the arming) plus
// the idle limit. nullopt when no such watchdog is armed or it cannot stop billing.
[[nodiscard]] std::optional<TimePoint> autostop_deadline(StateStore& store, const ServerRecord& r);
// For `status --refresh`: reads the watchdog of each open tracked server with an armed autostop
// (servers that do not answer are skipped) and records what it did.
void refresh_autostops(Services& s, StateStore& store, std::vector<ServerRecord>& servers);
// When the provider reports a server stopped or gone that autostop was watching: the time the
// watchdog's last known idle run says it acted (idle start + limit, within one sampling interval),
// when that lies between the last change gpurent saw and `now`; else `now`.
// A running server found stopped is no trouble ("exited") when its armed autostop could stop it:
// the watchdog asked for that stop. Other troubles pass through.
[[nodiscard]] std::pair<std::string, std::string> autostop_trouble(StateStore& store, const ServerRecord& r, const Instance& in,
                                                                   std::pair<std::string, std::string> trouble);
[[nodiscard]] TimePoint autostop_event_time(StateStore& store, const ServerRecord& r, ServerStatus next, TimePoint now);

// The second stage for a server autostop stopped (cli/autostop_release.cpp): what gpurent
// recorded about it (nullopt: no autostop armed), its decision as JSON ({next_action,
// next_action_at, release_due_at, why}), and carrying it out: when due and allowed, destroys it
// the way `down --destroy` does and records it; a refused release that is due is warned about.
[[nodiscard]] std::optional<AutostopReleaseInput> autostop_release_input(StateStore& store, const ServerRecord& r, TimePoint now);
[[nodiscard]] nlohmann::json autostop_release_json(const AutostopRelease& d);
[[nodiscard]] Result<std::optional<AutostopRelease>> release_autostopped(Services& s, StateStore& store, ServerRecord& r);

}  // namespace gpurent
