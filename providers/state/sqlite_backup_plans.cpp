// SPDX-License-Identifier: MIT
// The SQLite StateStore (providers/state/sqlite_detail.hpp): the directories `push` and `run`
// used on a server, and the backup plan `down --destroy` records before its backup starts.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "providers/state/sqlite_detail.hpp"

namespace gpurent::sqlite_detail {
namespace {

std::string paths_to_json(const std::vector<std::string>& paths)
{
  return nlohmann::json(paths).dump();
}

Result<std::vector<std::string>> paths_from_json(const std::string& text)
{
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    return fail(Errc::internal, "state database: a backup plan has unreadable paths; the database was edited or damaged");
  }
  std::vector<std::string> out;
  for (const auto& p : j) {
    if (!p.is_string()) {
      return fail(Errc::internal, "state database: a backup plan has a path that is not text; the database was edited or damaged");
    }
    out.push_back(p.get<std::string>());
  }
  return out;
}

}  // namespace

Result<void> SqliteStateStore::record_push_dir(std::int64_t server_id, std::string_view remote_dir, TimePoint at)
{
  Stmt st(db(), "INSERT INTO push_dirs(server_id, remote_dir, first_at, last_at) VALUES(?,?,?,?) "
                "ON CONFLICT(server_id, remote_dir) DO UPDATE SET last_at=excluded.last_at");
  st.bind(1, server_id).bind(2, remote_dir).bind(3, to_unix(at)).bind(4, to_unix(at));
  if (!st.ok() || st.step() != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "record push directory"));
  }
  return {};
}

Result<std::vector<PushDirRecord>> SqliteStateStore::push_dirs(std::int64_t server_id)
{
  Stmt st(db(), "SELECT server_id, remote_dir, first_at, last_at FROM push_dirs WHERE server_id=? "
                "ORDER BY first_at, remote_dir");
  st.bind(1, server_id);
  std::vector<PushDirRecord> out;
  int rc = st.ok() ? SQLITE_ROW : SQLITE_ERROR;
  while (rc == SQLITE_ROW && (rc = st.step()) == SQLITE_ROW) {
    out.push_back(PushDirRecord{st.i64(0), st.text(1), from_unix(st.i64(2)), from_unix(st.i64(3))});
  }
  if (rc != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "read push directories"));
  }
  return out;
}

Result<void> SqliteStateStore::put_backup_plan(const BackupPlanRecord& plan)
{
  const std::string paths = paths_to_json(plan.remote_paths);
  const std::string given = paths_to_json(plan.given_paths);
  Stmt st(db(), "INSERT OR REPLACE INTO backup_plans(server_id, remote_paths_json, dest, given_paths_json, given_to, "
                "started_at) VALUES(?,?,?,?,?,?)");
  st.bind(1, plan.server_id).bind(2, paths).bind(3, plan.dest).bind(4, given).bind(5, plan.given_to);
  st.bind(6, to_unix(plan.started_at));
  if (!st.ok() || st.step() != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "record backup plan"));
  }
  return {};
}

Result<std::optional<BackupPlanRecord>> SqliteStateStore::backup_plan(std::int64_t server_id)
{
  Stmt st(db(), "SELECT server_id, remote_paths_json, dest, given_paths_json, given_to, started_at FROM backup_plans "
                "WHERE server_id=?");
  st.bind(1, server_id);
  const int rc = st.ok() ? st.step() : SQLITE_ERROR;
  if (rc == SQLITE_DONE) {
    return std::optional<BackupPlanRecord>{};
  }
  if (rc != SQLITE_ROW) {
    return std::unexpected(db_error(db(), "read backup plan"));
  }
  BackupPlanRecord plan;
  plan.server_id = st.i64(0);
  TRY_ASSIGN(plan.remote_paths, paths_from_json(st.text(1)));
  plan.dest = st.text(2);
  TRY_ASSIGN(plan.given_paths, paths_from_json(st.text(3)));
  plan.given_to = st.text(4);
  plan.started_at = from_unix(st.i64(5));
  return std::optional<BackupPlanRecord>{std::move(plan)};
}

Result<void> SqliteStateStore::clear_backup_plan(std::int64_t server_id)
{
  Stmt st(db(), "DELETE FROM backup_plans WHERE server_id=?");
  st.bind(1, server_id);
  if (!st.ok() || st.step() != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "drop backup plan"));
  }
  return {};
}

}  // namespace gpurent::sqlite_detail
