// SPDX-License-Identifier: MIT
#pragma once
// Internal to gpurent_providers_io (not a public interface): the SQLite StateStore, shared by
// the files that implement it. Only providers/state/sqlite_*.cpp include this header, so
// <sqlite3.h> stays in gpurent_providers_io (libgpurent_io.so):
//   sqlite_state_store.cpp  schema and migrations, opening the database, transactions, the factory
//   sqlite_servers.cpp      server rows and their ledger of events
//   sqlite_records.cpp      backups and doctor observations
//   sqlite_jobs.cpp         the jobs of `gpurent run` and who carries out their steps
//   sqlite_backup_plans.cpp push directories and the pending backup plan of `down --destroy`
#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/state_store.hpp"

namespace gpurent::sqlite_detail {

struct DbClose {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* st) const noexcept { sqlite3_finalize(st); }
};
using DbPtr = std::unique_ptr<sqlite3, DbClose>;

// The database's last error as an Error: unavailable when it is locked, else internal.
[[nodiscard]] Error db_error(sqlite3* db, std::string_view what);

// A prepared statement with typed binds; strings must outlive step() (bound without copying).
class Stmt {
public:
  Stmt(sqlite3* db, const char* sql)
  {
    sqlite3_stmt* raw = nullptr;
    m_rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
    m_stmt.reset(raw);
  }
  [[nodiscard]] bool ok() const { return m_rc == SQLITE_OK && m_stmt != nullptr; }
  Stmt& bind(int i, std::int64_t v)
  {
    sqlite3_bind_int64(m_stmt.get(), i, v);
    return *this;
  }
  Stmt& bind(int i, std::string_view v)
  {
    sqlite3_bind_text(m_stmt.get(), i, v.data(), static_cast<int>(v.size()), nullptr);
    return *this;
  }
  Stmt& bind(int i, std::optional<std::int64_t> v)
  {
    if (v) {
      sqlite3_bind_int64(m_stmt.get(), i, *v);
    } else {
      sqlite3_bind_null(m_stmt.get(), i);
    }
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(m_stmt.get()); }
  [[nodiscard]] std::int64_t i64(int col) const { return sqlite3_column_int64(m_stmt.get(), col); }
  [[nodiscard]] bool is_null(int col) const { return sqlite3_column_type(m_stmt.get(), col) == SQLITE_NULL; }
  [[nodiscard]] std::string text(int col) const
  {
    const unsigned char* p = sqlite3_column_text(m_stmt.get(), col);
    const int n = sqlite3_column_bytes(m_stmt.get(), col);
    return p == nullptr ? std::string{} : std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }

private:
  std::unique_ptr<sqlite3_stmt, StmtFinalize> m_stmt;
  int m_rc = SQLITE_ERROR;
};

class SqliteStateStore final : public StateStore {
public:
  explicit SqliteStateStore(DbPtr db, int version) : m_db(std::move(db)), m_version(version) {}

  int schema_version() const override { return m_version; }

  // sqlite_servers.cpp
  Result<ServerRecord> insert_server(const ServerRecord& rec) override;
  Result<std::optional<ServerRecord>> find_server(std::string_view name) override;
  Result<std::optional<ServerRecord>> get_server(std::int64_t id) override;
  Result<std::vector<ServerRecord>> list_servers(bool include_closed) override;
  Result<void> set_provider_id(std::int64_t id, std::string_view provider_id) override;
  Result<void> set_connection(std::int64_t id, std::string_view user, std::string_view host, std::uint16_t port,
                              std::string_view host_key) override;
  Result<void> set_terms(std::int64_t id, const RentTerms& t) override;
  Result<void> set_ssh_files(std::int64_t id, std::string_view identity, std::string_view known_hosts) override;
  Result<void> set_provider_state(std::int64_t id, std::string_view provider_state, std::string_view trouble,
                                  std::string_view detail) override;
  Result<void> set_unreachable_since(std::int64_t id, std::optional<TimePoint> since) override;
  Result<void> record_state(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note) override;
  Result<void> mark_changed(std::int64_t id, TimePoint at) override;
  Result<std::vector<LedgerEvent>> events(std::int64_t id) override;

  // sqlite_records.cpp
  Result<BackupRecord> add_backup(const BackupRecord& b) override;
  Result<std::optional<BackupRecord>> latest_backup(std::int64_t server_id) override;
  Result<DoctorObservation> add_doctor_observation(const DoctorObservation& o) override;
  Result<std::vector<DoctorObservation>> doctor_observations(std::int64_t server_id, TimePoint since) override;
  Result<void> put_autostop(const AutostopRecord& a) override;
  Result<std::optional<AutostopRecord>> autostop(std::int64_t server_id) override;

  // sqlite_backup_plans.cpp
  Result<void> record_push_dir(std::int64_t server_id, std::string_view remote_dir, TimePoint at) override;
  Result<std::vector<PushDirRecord>> push_dirs(std::int64_t server_id) override;
  Result<void> put_backup_plan(const BackupPlanRecord& plan) override;
  Result<std::optional<BackupPlanRecord>> backup_plan(std::int64_t server_id) override;
  Result<void> clear_backup_plan(std::int64_t server_id) override;

  // sqlite_jobs.cpp
  Result<JobRecord> add_job(const JobRecord& j) override;
  Result<void> update_job(const JobRecord& j) override;
  Result<std::vector<JobRecord>> jobs(std::string_view target) override;
  Result<std::vector<JobRecord>> jobs_with_pending_steps() override;
  Result<bool> claim_job_steps(std::int64_t id, std::string_view owner,
                               const std::function<bool(std::string_view)>& holder_gone) override;
  Result<void> release_job_steps(std::int64_t id, std::string_view owner) override;

private:
  sqlite3* db() const { return m_db.get(); }

  // sqlite_state_store.cpp: BEGIN IMMEDIATE around every read-modify-write.
  Result<void> begin();
  Result<void> commit();
  void rollback();
  std::unexpected<Error> rollback_with(Error e);

  // sqlite_servers.cpp
  Result<void> append_event(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note);
  template <class Bind>
  Result<std::optional<ServerRecord>> query_one(const std::string& sql, Bind&& bind);

  // sqlite_jobs.cpp
  template <class Bind>
  Result<std::vector<JobRecord>> query_jobs(const std::string& sql, Bind&& bind);

  // One UPDATE in its own transaction; Errc::not_found when it changed no row of `thing`.
  template <class Bind>
  Result<void> exec_write(const char* sql, Bind&& bind, std::string_view thing = "server")
  {
    TRY(begin());
    Stmt st(db(), sql);
    bind(st);
    if (st.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "update"));
    }
    if (sqlite3_changes(db()) == 0) {
      rollback();
      return fail(Errc::not_found, "state database: no such " + std::string(thing));
    }
    return commit();
  }

  DbPtr m_db;
  int m_version;
};

}  // namespace gpurent::sqlite_detail
