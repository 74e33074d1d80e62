// SPDX-License-Identifier: MIT
#pragma once
// PURE: the second autostop stage for a server the first stage stopped. The watchdog ends with
// the stop (the server is stopped under it), so gpurent carries the release out itself the next
// time `status --refresh` or `autostop NAME` looks: destroy once stopped for --release-after, and
// only after the verified backup the watchdog took just before the stop (a stopped server cannot
// be backed up), unless --no-backup was given when arming. docs/autostop.md "Stages".
#include <cstdint>
#include <optional>
#include <string>

#include "sync/autostop_log.hpp"
#include "sync/autostop_target.hpp"

namespace gpurent {

struct AutostopReleaseInput {
  std::string then;                  // the first stage ("stop", "hibernate", "destroy")
  std::int64_t release_after_s = 0;  // 0: no second stage
  bool can_stop_billing = false;     // the watchdog could call the provider (an API, a key, curl)
  bool no_backup = false;            // --no-backup given when arming
  std::int64_t armed_at = 0;         // Unix seconds
  bool stopped = false;              // the record is stopped now
  std::int64_t stopped_at = 0;       // since when (the ledger's time)
  // When autostop is known to have stopped it: its logged stop, or the time its last read idle
  // run predicted (idle start + --idle). nullopt: stopped by someone else, as far as gpurent knows.
  std::optional<std::int64_t> autostop_stop_at;
  std::optional<AutostopEvent> backup;  // the latest backup of this arming gpurent read in the log
  std::int64_t now = 0;
  std::string backup_to;    // --backup-to as given when arming ("" : none)
  std::string backup_stem;  // the names of this arming's backups there ("" : armed before checksum files)
};

enum class AutostopReleaseKind {
  none,     // no release applies (no second stage, not stopped, or not stopped by autostop)
  wait,     // destroy at `at`
  release,  // destroy now
  refused,  // due (or coming) but never without the verified backup: `why`
};

struct AutostopRelease {
  AutostopReleaseKind kind = AutostopReleaseKind::none;
  std::optional<std::int64_t> at;  // when the release is (or was) due
  std::string why;                 // for none and refused: in words, for the user
};

[[nodiscard]] AutostopRelease autostop_release_decision(const AutostopReleaseInput& in);

// Whether the release waits on nothing but the backup, with a target to check it at: then gpurent
// checks the backup there itself (sync/autostop_target.hpp), whatever the log showed. Not with
// --no-backup, nor when the log shows the watchdog's backup of this arming failed.
[[nodiscard]] bool autostop_release_wants_target_check(const AutostopReleaseInput& in);
// The decision once the target answered: its verified backup stands for the log's; a target
// that answered without one (none, gone, changed) refuses the release with its reason.
[[nodiscard]] AutostopRelease autostop_release_after_target_check(AutostopReleaseInput& in, const TargetBackupCheck& check);

// "sha256=HEX:FILE" of a verified backup event; empty when it is not one.
[[nodiscard]] std::string autostop_backup_file(const AutostopEvent& backup);

}  // namespace gpurent
