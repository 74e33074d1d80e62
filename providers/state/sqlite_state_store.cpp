// SPDX-License-Identifier: MIT
// The one StateStore implementation (providers/state/sqlite_detail.hpp; the sqlite_*.cpp files are
// the only ones that include <sqlite3.h>): opening the database, the schema and its migrations,
// transactions, and the factory libgpurent_io.so exports. WAL journal, a busy timeout, BEGIN
// IMMEDIATE around every read-modify-write, and a schema version table with forward-only
// migrations (1: servers, events, backups; 2: doctor observations; 3: remembered SSH files, the
// provider's last word, the release check; 4: the jobs of `gpurent run`; 5: the autostop watchdog armed on a server; 6: the pushed commit of a job; 7: server groups; 8: push directories and the
// pending backup plan of `down --destroy`).
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "providers/state/sqlite_detail.hpp"

namespace gpurent::sqlite_detail {

Error db_error(sqlite3* db, std::string_view what)
{
  const int code = sqlite3_errcode(db);
  const Errc kind = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? Errc::unavailable : Errc::internal;
  return Error{kind, "state database: " + std::string(what) + ": " + sqlite3_errmsg(db) +
                         (kind == Errc::unavailable ? "; another gpurent holds the database, try again"
                                                    : "; check the disk, or move the database aside")};
}

namespace {

constexpr int k_busy_timeout_ms = 15'000;

// Migration N brings the schema from version N to N+1. Never edit one that has shipped.
constexpr std::array<const char*, 8> k_migrations{{
    R"sql(
CREATE TABLE servers(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  provider TEXT NOT NULL,
  provider_id TEXT NOT NULL DEFAULT '',
  card TEXT NOT NULL,
  gpus INTEGER NOT NULL,
  spot INTEGER NOT NULL,
  attached INTEGER NOT NULL,
  region TEXT NOT NULL DEFAULT '',
  price_micro INTEGER NOT NULL,
  currency TEXT NOT NULL,
  increment_s INTEGER NOT NULL,
  minimum_s INTEGER NOT NULL,
  deploy_s INTEGER NOT NULL,
  terms_json TEXT NOT NULL,
  ssh_user TEXT NOT NULL DEFAULT 'root',
  host TEXT NOT NULL DEFAULT '',
  port INTEGER NOT NULL DEFAULT 22,
  host_key TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  status_since INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_change INTEGER NOT NULL,
  closed INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX servers_open_name ON servers(name) WHERE closed = 0;
CREATE TABLE events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  server_id INTEGER NOT NULL REFERENCES servers(id),
  at INTEGER NOT NULL,
  status TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_server ON events(server_id, id);
CREATE TABLE backups(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  server_id INTEGER NOT NULL REFERENCES servers(id),
  at INTEGER NOT NULL,
  manifest TEXT NOT NULL,
  verified INTEGER NOT NULL,
  files INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE INDEX backups_server ON backups(server_id, at);
)sql",
    // 1 -> 2: what `gpurent doctor NAME` saw (for the idle-GPU warning of `status`).
    R"sql(
CREATE TABLE doctor_observations(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  server_id INTEGER NOT NULL REFERENCES servers(id),
  at INTEGER NOT NULL,
  compute_processes INTEGER,
  gpus_json TEXT NOT NULL
);
CREATE INDEX doctor_observations_server ON doctor_observations(server_id, at);
)sql",
    // 2 -> 3: the SSH identity and known-hosts file given at attach/up; what the provider last
    // said (its state word, trouble such as `unhealthy`); when SSH to a release_pending host
    // first failed. New statuses (destroy_failed, release_pending) need no schema change.
    R"sql(
ALTER TABLE servers ADD COLUMN ssh_identity TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN ssh_known_hosts TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN provider_state TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN trouble TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN trouble_detail TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN unreachable_since INTEGER;
)sql",
    // 3 -> 4: jobs started by `gpurent run` and the --then steps to carry out after them.
    R"sql(
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  server_id INTEGER REFERENCES servers(id),
  target TEXT NOT NULL,
  command TEXT NOT NULL,
  workdir TEXT NOT NULL,
  state TEXT NOT NULL,
  exit_code INTEGER,
  started INTEGER NOT NULL,
  ended INTEGER,
  log TEXT NOT NULL DEFAULT '',
  oom_json TEXT,
  steps_json TEXT NOT NULL DEFAULT '[]',
  steps_owner TEXT NOT NULL DEFAULT '',
  UNIQUE(target, job_id)
);
CREATE INDEX jobs_target ON jobs(target, started);
)sql",
    // 4 -> 5: the autostop watchdog armed on a server, and what gpurent last read of it.
    R"sql(
CREATE TABLE autostop(
  server_id INTEGER PRIMARY KEY REFERENCES servers(id),
  settings_json TEXT NOT NULL,
  armed_at INTEGER NOT NULL,
  active INTEGER NOT NULL,
  last_json TEXT NOT NULL DEFAULT '',
  read_at INTEGER
);
)sql",
    // 5 -> 6: the commit (and whether it had uncommitted changes) of the tree a job was pushed from.
    R"sql(
ALTER TABLE jobs ADD COLUMN git_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN git_dirty INTEGER NOT NULL DEFAULT 0;
)sql",
    // 6 -> 7: server groups (`up --nodes N --group NAME`, `attach --group NAME`): the group a
    // server belongs to ('' for none) and its node rank in it (0 = attached or rented first).
    R"sql(
ALTER TABLE servers ADD COLUMN group_name TEXT NOT NULL DEFAULT '';
ALTER TABLE servers ADD COLUMN group_rank INTEGER NOT NULL DEFAULT 0;
)sql",
    // 7 -> 8: the directories `push`/`run` used on a server (what `down --destroy` backs up),
    // and the backup plan `down --destroy` recorded before its backup (resumed as it was).
    R"sql(
CREATE TABLE push_dirs(
  server_id INTEGER NOT NULL REFERENCES servers(id),
  remote_dir TEXT NOT NULL,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY(server_id, remote_dir)
);
CREATE TABLE backup_plans(
  server_id INTEGER PRIMARY KEY REFERENCES servers(id),
  remote_paths_json TEXT NOT NULL,
  dest TEXT NOT NULL,
  given_paths_json TEXT NOT NULL,
  given_to TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
)sql",
}};

Result<void> exec(sqlite3* db, const char* sql, std::string_view what)
{
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return std::unexpected(db_error(db, what));
  }
  return {};
}

Result<int> read_version(sqlite3* db)
{
  Stmt st(db, "SELECT version FROM schema_version LIMIT 1");
  if (!st.ok()) {
    return std::unexpected(db_error(db, "read schema version"));
  }
  const int rc = st.step();
  if (rc == SQLITE_ROW) {
    return static_cast<int>(st.i64(0));
  }
  if (rc == SQLITE_DONE) {
    return 0;
  }
  return std::unexpected(db_error(db, "read schema version"));
}

// Brings the schema up to date in one IMMEDIATE transaction, so concurrent first runs agree.
Result<int> migrate(sqlite3* db)
{
  TRY(exec(db, "BEGIN IMMEDIATE", "begin migration"));
  auto run = [&]() -> Result<int> {
    TRY(exec(db, "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)", "create schema table"));
    TRY_ASSIGN(int version, read_version(db));
    const int latest = static_cast<int>(k_migrations.size());
    if (version > latest) {
      return fail(Errc::refused, "state database has schema version " + std::to_string(version) +
                                     ", newer than this gpurent knows (" + std::to_string(latest) +
                                     "); upgrade gpurent before using it");
    }
    for (int v = version; v < latest; ++v) {
      TRY(exec(db, k_migrations[static_cast<std::size_t>(v)], "migrate schema"));
    }
    if (version == 0) {
      TRY(exec(db, "INSERT INTO schema_version(version) VALUES(0)", "init schema version"));
    }
    const std::string set = "UPDATE schema_version SET version=" + std::to_string(latest);
    TRY(exec(db, set.c_str(), "set schema version"));
    return latest;
  };
  auto result = run();
  if (!result) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return result;
  }
  TRY(exec(db, "COMMIT", "commit migration"));
  return result;
}

Result<std::unique_ptr<StateStore>> open_store(const std::filesystem::path& path)
{
  std::error_code ec;
  const auto dir = path.parent_path();
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fail(Errc::invalid_input, "cannot create the state directory " + dir.string() + ": " + ec.message() +
                                           "; set GPURENT_STATE_DIR to a writable directory");
    }
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace, ec);
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 nullptr);
  DbPtr db(raw);
  if (rc != SQLITE_OK) {
    return fail(Errc::invalid_input, "cannot open the state database " + path.string() + ": " +
                                         (raw != nullptr ? sqlite3_errmsg(raw) : "out of memory") +
                                         "; check the path and its permissions");
  }
  ::chmod(path.c_str(), 0600);
  sqlite3_busy_timeout(db.get(), k_busy_timeout_ms);
  // Switching to WAL needs a lock that the busy handler does not always wait for: retry a while.
  Result<void> wal = exec(db.get(), "PRAGMA journal_mode=WAL", "enable WAL");
  for (int i = 0; !wal && i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    wal = exec(db.get(), "PRAGMA journal_mode=WAL", "enable WAL");
  }
  TRY(wal);
  TRY(exec(db.get(), "PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", "configure"));
  TRY_ASSIGN(const int version, migrate(db.get()));
  return std::unique_ptr<StateStore>(std::make_unique<SqliteStateStore>(std::move(db), version));
}

}  // namespace

Result<void> SqliteStateStore::begin()
{
  if (sqlite3_exec(db(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return std::unexpected(db_error(db(), "begin transaction"));
  }
  return {};
}

Result<void> SqliteStateStore::commit()
{
  if (sqlite3_exec(db(), "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Error e = db_error(db(), "commit");
    rollback();
    return std::unexpected(std::move(e));
  }
  return {};
}

void SqliteStateStore::rollback()
{
  sqlite3_exec(db(), "ROLLBACK", nullptr, nullptr, nullptr);
}

std::unexpected<Error> SqliteStateStore::rollback_with(Error e)
{
  rollback();
  return std::unexpected(std::move(e));
}

}  // namespace gpurent::sqlite_detail

extern "C" void gpurent_open_state_store(const std::filesystem::path* db,
                                         gpurent::Result<std::unique_ptr<gpurent::StateStore>>* out)
{
  try {
    *out = gpurent::sqlite_detail::open_store(*db);
  } catch (const std::exception& e) {
    *out = gpurent::fail(gpurent::Errc::internal, std::string("state database: ") + e.what());
  }
}
