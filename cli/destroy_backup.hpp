// SPDX-License-Identifier: MIT
#pragma once
// The backup `down --destroy` runs first (cli/destroy_backup_plan.hpp decides what it holds):
// prepared before the confirmation (the server says what is at each path and how much, the
// destination is checked), recorded in the state store before it starts, resumed as recorded
// after an interruption, and refused when it would hold nothing of the jobs'.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/destroy_backup_plan.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"
#include "sync/backup.hpp"
#include "sync/transport.hpp"

namespace gpurent {
struct Services;
struct Config;

struct PreparedBackup {
  std::vector<BackupSource> sources;  // what was looked at, named with its size
  BackupPlanRecord plan;              // what the backup copies, and where to
  bool resumed = false;               // the plan an interrupted `down --destroy` recorded
  std::unique_ptr<SshSession> session;
  SessionFactory more_sessions;
  std::optional<BackupReport> report;  // once it ran
};

// Connects, asks the server about every path, checks the destination. Errc::refused (nothing
// copied, nothing destroyed) for a recorded plan that other --path/--to would change, a backup
// that would hold nothing of the jobs', a destination that cannot be written or lacks the room.
[[nodiscard]] Result<PreparedBackup> prepare_destroy_backup(Services& s, StateStore& store, const ServerRecord& rec,
                                                            const Config& cfg, const DownFlags& flags);

// The lines that name what is backed up, for stderr before the confirmation.
[[nodiscard]] std::string backup_plan_text(const PreparedBackup& b);

// Records the plan, then runs it. The plan stays recorded when the backup was interrupted (the
// next `down --destroy` resumes it) and is dropped otherwise.
[[nodiscard]] Result<BackupRecord> run_destroy_backup(Services& s, StateStore& store, const ServerRecord& rec,
                                                      PreparedBackup& b, BackupObserver& observer);

// {"dest", "resumed", "paths": [{"path", "origins", "exists", "bytes", "files", "copied"}],
//  then, once it ran: "files_total", "bytes_total", "verified", "manifest"}.
[[nodiscard]] nlohmann::json backup_plan_json(const PreparedBackup& b);

}  // namespace gpurent
