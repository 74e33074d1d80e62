// SPDX-License-Identifier: MIT
#pragma once
// PURE: readers of what the autostop watchdog (autostop_agent.hpp) leaves on the server: its
// config, its log of samples and decisions, and the state `autostop NAME` and `status` show.
// The idle rule is here too (the watchdog's sh applies the same rule; docs/autostop.md).
//
// Log lines (one event each, words "key=value", values without spaces):
//   start t=T pid=P launcher=L interval=S idle=S then=A release=S util=U api=NAME
//   sample t=T r=1 gpus=I:UTIL:MEM,... procs=N sessions=N jobs=N idle=0|1 since=T|-
//   sample t=T r=0 why=WHAT gpus=... procs=N sessions=N jobs=N idle=0 since=-
//   pause t=T until=T            resume t=T
//   backup t=T [stage=1] result=ok|failed detail=sha256=HASH:FILE|WHY   (stage=1: taken before
//                                a first-stage stop, for the release gpurent carries out later)
//   action t=T stage=1|2 do=stop|destroy|mark-idle result=ok|failed detail=...
//   exit t=T why=stop|destroy|cancelled|re-armed
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/autostop_agent.hpp"

namespace gpurent {

struct AutostopGpu {
  int index = 0;
  std::uint32_t utilization_pct = 0;
  std::uint64_t memory_used_mib = 0;
  auto operator<=>(const AutostopGpu&) const = default;
};

struct AutostopSample {
  std::int64_t at = 0;
  bool readable = false;
  std::string why;  // what could not be read
  std::vector<AutostopGpu> gpus;
  std::optional<std::uint32_t> processes;  // compute processes; nullopt: unknown
  std::optional<std::uint32_t> sessions;   // interactive (pts) sessions; nullopt: unknown
  std::uint32_t jobs = 0;                  // live gpurent jobs
  bool idle = false;                       // the watchdog's verdict
  std::optional<std::int64_t> idle_since;  // start of the idle run (watchdog's)
};

struct AutostopEvent {
  std::string kind;    // "start", "pause", "resume", "backup", "action", "exit"
  std::int64_t at = 0;
  int stage = 0;       // action; backup: 1 when taken before a first-stage stop
  std::string what;    // action: do=; exit: why=; pause: until (as text)
  bool ok = false;     // action, backup: result=ok
  std::string detail;
};

struct AutostopLog {
  std::vector<AutostopSample> samples;  // in log order
  std::vector<AutostopEvent> events;    // everything else, in log order
};

// The idle rule: readable, at least one GPU, every GPU below `gpu_util_pct` %, no interactive
// session, no live gpurent job. Memory held and compute processes do not make a GPU busy (a
// stalled loop or an idle notebook holds memory at 0 %); anything unreadable does.
[[nodiscard]] bool autostop_sample_idle(const AutostopSample& s, std::uint32_t gpu_util_pct) noexcept;

// Unknown event kinds and keys are skipped (a newer watchdog may say more); a line that is not
// "kind key=value..." or has a malformed number is skipped too. Never fails on any input.
[[nodiscard]] AutostopLog parse_autostop_log(std::string_view text);

// The config file autostop_config_text wrote (sh assignments of single-quoted values).
[[nodiscard]] Result<AutostopSettings> parse_autostop_config(std::string_view text);

// What `autostop NAME --json` shows.
struct AutostopView {
  bool configured = false;  // the server has a watchdog config
  bool armed = false;       // the watchdog runs
  bool paused = false;
  std::optional<std::int64_t> pause_until;
  AutostopSettings settings;
  bool can_stop_billing = false;
  std::int64_t idle_for_s = 0;
  std::string next_action;  // "stop", "destroy", "mark-idle", "none"
  std::optional<std::int64_t> next_action_at;
  std::optional<AutostopSample> last_sample;
  std::optional<AutostopEvent> last_action;  // the latest action event
  std::optional<AutostopEvent> exit;         // why the watchdog ended, when it did
};

// What autostop_read_command printed.
struct AutostopRemote {
  bool configured = false;
  std::string config;
  bool alive = false;
  std::optional<std::int64_t> pause_until;
  std::int64_t now = 0;
  std::string log;
};
[[nodiscard]] Result<AutostopRemote> parse_autostop_state(std::string_view out);

[[nodiscard]] AutostopView autostop_view(const AutostopRemote& remote);

// The stop or destroy the current watchdog (since the log's last start) carried out through the
// provider (its latest ok action), for the ledger; nullopt when none.
[[nodiscard]] std::optional<AutostopEvent> autostop_billing_action(const AutostopLog& log);

// The latest backup event of the current watchdog (since the log's last start); nullopt when none.
[[nodiscard]] std::optional<AutostopEvent> autostop_latest_backup(const AutostopLog& log);

}  // namespace gpurent
