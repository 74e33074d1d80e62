// SPDX-License-Identifier: MIT
#pragma once
// PURE: the check gpurent makes itself at the watchdog's backup target (sync/backup_target.hpp).
// A server autostop stopped cannot be read, so the verified backup it took just before the stop
// is proven where it lies: the watchdog writes `NAME.tar.sha256` beside each tar only after the
// SHA-256 it streamed equals the one the target computed of what it stored (and removes the
// older ones of its arming first); at release time gpurent logs in to the target, hashes the
// newest tar of this arming again and compares. docs/autostop.md "Stages".
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/autostop_log.hpp"
#include "sync/backup_target.hpp"

namespace gpurent {

// Run at the target: prints, NUL-terminated, "nodir", "none", or "ok", the newest sidecar's name,
// its first 300 bytes, the SHA-256 of its tar now ("missing", "nohash"), then "end".
[[nodiscard]] std::string autostop_target_check_command(const BackupTarget& target, std::string_view stem);

struct TargetBackupCheck {
  std::optional<AutostopEvent> verified;  // kind "backup", stage 1, ok, at = its start, "sha256=HEX:FILE"
  std::string why;                        // when not verified, in words
};
// What the check's output proves: a backup only when the newest sidecar of this arming names its
// tar and the tar's SHA-256 now equals the sidecar's.
[[nodiscard]] TargetBackupCheck parse_autostop_target_check(std::string_view out, const BackupTarget& target,
                                                            std::string_view stem);

}  // namespace gpurent
