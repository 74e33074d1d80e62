// SPDX-License-Identifier: MIT
// The SQLite StateStore (providers/state/sqlite_detail.hpp): the jobs of `gpurent run`, their
// steps kept as JSON, and the claim on who carries the steps out.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "providers/state/sqlite_detail.hpp"

namespace gpurent::sqlite_detail {
namespace {

std::string steps_to_json(const std::vector<JobStep>& steps)
{
  nlohmann::json out = nlohmann::json::array();
  for (const auto& st : steps) {
    out.push_back({{"step", st.step}, {"state", st.state}, {"detail", st.detail}});
  }
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<std::vector<JobStep>> steps_from_json(const std::string& text)
{
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    return fail(Errc::internal, "state database: a job has unreadable --then steps; the database was edited or damaged");
  }
  std::vector<JobStep> out;
  for (const auto& st : j) {
    if (!st.is_object() || !st.value("step", nlohmann::json()).is_string()) {
      return fail(Errc::internal, "state database: a job has unreadable --then steps; the database was edited or damaged");
    }
    out.push_back(JobStep{st["step"].get<std::string>(), st.value("state", "pending"), st.value("detail", "")});
  }
  return out;
}

constexpr const char* k_job_columns =
    "id,job_id,server_id,target,command,workdir,state,exit_code,started,ended,log,oom_json,steps_json,steps_owner,git_commit,git_dirty";

// Parameters 6..12 (state .. steps_json); `steps` must outlive the statement's step().
void bind_job(Stmt& st, const JobRecord& j, const std::string& steps)
{
  st.bind(6, j.state);
  st.bind(7, j.exit_code ? std::optional<std::int64_t>{*j.exit_code} : std::nullopt);
  st.bind(8, to_unix(j.started));
  st.bind(9, j.ended ? std::optional<std::int64_t>{to_unix(*j.ended)} : std::nullopt);
  st.bind(10, j.log);
  if (j.oom_json) {
    st.bind(11, std::string_view(*j.oom_json));
  } else {
    st.bind(11, std::optional<std::int64_t>{});
  }
  st.bind(12, steps);
}

}  // namespace

template <class Bind>
Result<std::vector<JobRecord>> SqliteStateStore::query_jobs(const std::string& sql, Bind&& bind)
{
  Stmt st(db(), sql.c_str());
  if (!st.ok()) {
    return std::unexpected(db_error(db(), "prepare jobs query"));
  }
  bind(st);
  std::vector<JobRecord> out;
  int rc = SQLITE_ROW;
  while ((rc = st.step()) == SQLITE_ROW) {
    JobRecord j;
    j.id = st.i64(0);
    j.job_id = st.text(1);
    if (!st.is_null(2)) {
      j.server_id = st.i64(2);
    }
    j.target = st.text(3);
    j.command = st.text(4);
    j.workdir = st.text(5);
    j.state = st.text(6);
    if (!st.is_null(7)) {
      j.exit_code = static_cast<int>(st.i64(7));
    }
    j.started = from_unix(st.i64(8));
    if (!st.is_null(9)) {
      j.ended = from_unix(st.i64(9));
    }
    j.log = st.text(10);
    if (!st.is_null(11)) {
      j.oom_json = st.text(11);
    }
    TRY_ASSIGN(j.steps, steps_from_json(st.text(12)));
    j.steps_owner = st.text(13);
    j.git_commit = st.text(14);
    j.git_dirty = st.i64(15) != 0;
    out.push_back(std::move(j));
  }
  if (rc != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "read jobs"));
  }
  return out;
}

Result<JobRecord> SqliteStateStore::add_job(const JobRecord& j)
{
  TRY(begin());
  Stmt st(db(), "INSERT INTO jobs(job_id,server_id,target,command,workdir,state,exit_code,started,ended,log,oom_json,"
                "steps_json,steps_owner,git_commit,git_dirty) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const std::string steps = steps_to_json(j.steps);
  bind_job(st, j, steps);
  st.bind(1, j.job_id).bind(2, j.server_id).bind(3, j.target).bind(4, j.command).bind(5, j.workdir);
  st.bind(13, j.steps_owner);
  st.bind(14, j.git_commit);
  st.bind(15, std::optional<std::int64_t>{j.git_dirty ? 1 : 0});
  const int rc = st.step();
  if (rc == SQLITE_CONSTRAINT) {
    rollback();
    return fail(Errc::refused, "job " + j.job_id + " on " + j.target + " is already recorded");
  }
  if (rc != SQLITE_DONE) {
    return rollback_with(db_error(db(), "record job"));
  }
  JobRecord out = j;
  out.id = sqlite3_last_insert_rowid(db());
  TRY(commit());
  return out;
}

Result<void> SqliteStateStore::update_job(const JobRecord& j)
{
  const std::string steps = steps_to_json(j.steps);
  return exec_write("UPDATE jobs SET state=?6, exit_code=?7, started=?8, ended=?9, log=?10, oom_json=?11, steps_json=?12 "
                    "WHERE id=?1",
                    [&](Stmt& st) {
                      bind_job(st, j, steps);
                      st.bind(1, j.id);
                    },
                    "job");
}

Result<std::vector<JobRecord>> SqliteStateStore::jobs(std::string_view target)
{
  const std::string sql = std::string("SELECT ") + k_job_columns + " FROM jobs WHERE target=? ORDER BY started, id";
  return query_jobs(sql, [&](Stmt& st) { st.bind(1, target); });
}

Result<std::vector<JobRecord>> SqliteStateStore::jobs_with_pending_steps()
{
  const std::string sql = std::string("SELECT ") + k_job_columns +
                          " FROM jobs WHERE steps_json LIKE '%\"state\":\"pending\"%' ORDER BY started, id";
  return query_jobs(sql, [](Stmt&) {});
}

Result<bool> SqliteStateStore::claim_job_steps(std::int64_t id, std::string_view owner,
                                               const std::function<bool(std::string_view)>& holder_gone)
{
  TRY(begin());
  std::string holder;
  {
    Stmt check(db(), "SELECT steps_owner FROM jobs WHERE id=?");
    check.bind(1, id);
    const int rc = check.step();
    if (rc != SQLITE_ROW) {
      Error e = rc == SQLITE_DONE ? Error{Errc::not_found, "state database: no such job"} : db_error(db(), "read job");
      return rollback_with(std::move(e));
    }
    holder = check.text(0);
  }
  if (!holder.empty() && holder != owner && !(holder_gone && holder_gone(holder))) {
    rollback();
    return false;
  }
  Stmt up(db(), "UPDATE jobs SET steps_owner=? WHERE id=?");
  up.bind(1, owner).bind(2, id);
  if (up.step() != SQLITE_DONE) {
    return rollback_with(db_error(db(), "claim job steps"));
  }
  TRY(commit());
  return true;
}

Result<void> SqliteStateStore::release_job_steps(std::int64_t id, std::string_view owner)
{
  TRY(begin());
  Stmt up(db(), "UPDATE jobs SET steps_owner='' WHERE id=? AND steps_owner=?");
  up.bind(1, id).bind(2, owner);
  if (up.step() != SQLITE_DONE) {
    return rollback_with(db_error(db(), "release job steps"));
  }
  return commit();
}

}  // namespace gpurent::sqlite_detail
