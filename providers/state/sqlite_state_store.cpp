// SPDX-License-Identifier: MIT
// The one StateStore implementation, and the only file that includes <sqlite3.h>.
// WAL journal, a busy timeout, BEGIN IMMEDIATE around every read-modify-write, and a schema
// version table with forward-only migrations (1: servers, events, backups; 2: doctor observations;
// 3: remembered SSH files, the provider's last word, the release check; 4: the jobs of
// `gpurent run`; 5: the autostop watchdog armed on a server).
#include <sqlite3.h>
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "providers/state_store.hpp"

namespace gpurent {
namespace {

constexpr int k_busy_timeout_ms = 15'000;

// Migration N brings the schema from version N to N+1. Never edit one that has shipped.
constexpr std::array<const char*, 5> k_migrations{{
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
}};

struct DbClose {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct StmtFinalize {
  void operator()(sqlite3_stmt* st) const noexcept { sqlite3_finalize(st); }
};
using DbPtr = std::unique_ptr<sqlite3, DbClose>;

Error db_error(sqlite3* db, std::string_view what)
{
  const int code = sqlite3_errcode(db);
  const Errc kind = (code == SQLITE_BUSY || code == SQLITE_LOCKED) ? Errc::unavailable : Errc::internal;
  return Error{kind, "state database: " + std::string(what) + ": " + sqlite3_errmsg(db) +
                         (kind == Errc::unavailable ? "; another gpurent holds the database, try again"
                                                    : "; check the disk, or move the database aside")};
}

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

nlohmann::json rule_to_json(const StateRule& r)
{
  return {{"available", r.available},       {"unavailable_reason", r.unavailable_reason},
          {"bills_full_rate", r.bills_full_rate}, {"fixed_per_hour", r.fixed_per_hour.n},
          {"keeps", r.keeps},               {"loses", r.loses},
          {"allowed_on_spot", r.allowed_on_spot}, {"spot_reason", r.spot_reason},
          {"storage_note", r.storage_note}};
}

StateRule rule_from_json(const nlohmann::json& j)
{
  StateRule r;
  r.available = j.value("available", false);
  r.unavailable_reason = j.value("unavailable_reason", "");
  r.bills_full_rate = j.value("bills_full_rate", false);
  r.fixed_per_hour = MicroUsd{j.value("fixed_per_hour", std::int64_t{0})};
  r.keeps = j.value("keeps", "");
  r.loses = j.value("loses", "");
  r.allowed_on_spot = j.value("allowed_on_spot", true);
  r.spot_reason = j.value("spot_reason", "");
  r.storage_note = j.value("storage_note", "");
  return r;
}

nlohmann::json gpus_to_json(const std::vector<GpuSample>& gpus)
{
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : gpus) {
    out.push_back({{"index", g.index},
                   {"used_mib", g.memory_used_mib},
                   {"total_mib", g.memory_total_mib},
                   {"util_pct", g.utilization_pct ? nlohmann::json(*g.utilization_pct) : nlohmann::json(nullptr)}});
  }
  return out;
}

Result<std::vector<GpuSample>> gpus_from_json(const std::string& text)
{
  const auto j = nlohmann::json::parse(text, nullptr, false);
  const auto bad = [] {
    return fail(Errc::internal, "state database: a doctor observation has unreadable GPU data; the database was "
                                "edited or damaged");
  };
  if (j.is_discarded() || !j.is_array()) {
    return bad();
  }
  std::vector<GpuSample> out;
  for (const auto& g : j) {
    if (!g.is_object() || !g.value("index", nlohmann::json()).is_number_integer() ||
        !g.value("used_mib", nlohmann::json()).is_number_unsigned() ||
        !g.value("total_mib", nlohmann::json()).is_number_unsigned()) {
      return bad();
    }
    GpuSample s;
    s.index = g["index"].get<int>();
    s.memory_used_mib = g["used_mib"].get<std::uint64_t>();
    s.memory_total_mib = g["total_mib"].get<std::uint64_t>();
    const auto util = g.value("util_pct", nlohmann::json());
    if (util.is_number_unsigned() && util.get<std::uint64_t>() <= 100) {
      s.utilization_pct = util.get<std::uint32_t>();
    }
    out.push_back(s);
  }
  return out;
}

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
    "id,job_id,server_id,target,command,workdir,state,exit_code,started,ended,log,oom_json,steps_json,steps_owner";

constexpr const char* k_server_columns =
    "id,name,provider,provider_id,card,gpus,spot,attached,region,price_micro,currency,increment_s,minimum_s,"
    "deploy_s,terms_json,ssh_user,host,port,host_key,status,status_since,created_at,last_change,"
    "ssh_identity,ssh_known_hosts,provider_state,trouble,trouble_detail,unreachable_since";

Result<ServerRecord> read_server(const Stmt& st)
{
  ServerRecord r;
  r.id = st.i64(0);
  r.name = st.text(1);
  r.provider = st.text(2);
  r.provider_id = st.text(3);
  r.card = st.text(4);
  r.gpus = static_cast<std::uint32_t>(st.i64(5));
  r.spot = st.i64(6) != 0;
  r.attached = st.i64(7) != 0;
  r.region = st.text(8);
  r.terms.price_per_hour = MicroUsd{st.i64(9)};
  r.terms.currency = st.text(10);
  r.terms.billing.increment = std::chrono::seconds{st.i64(11)};
  r.terms.billing.minimum = std::chrono::seconds{st.i64(12)};
  r.terms.billing.charged_at_deploy = std::chrono::seconds{st.i64(13)};
  const auto terms = nlohmann::json::parse(st.text(14), nullptr, false);
  if (terms.is_discarded() || !terms.is_object()) {
    return fail(Errc::internal, "state database: server '" + r.name + "' has unreadable billing terms; "
                                "the database was edited or damaged");
  }
  r.terms.stopped = rule_from_json(terms.value("stopped", nlohmann::json::object()));
  r.terms.hibernated = rule_from_json(terms.value("hibernated", nlohmann::json::object()));
  r.terms.destroy_loses = terms.value("destroy_loses", "");
  r.terms.workspace_dir = terms.value("workspace_dir", "");
  r.user = st.text(15);
  r.host = st.text(16);
  r.port = static_cast<std::uint16_t>(st.i64(17));
  r.host_key = st.text(18);
  const auto status = parse_server_status(st.text(19));
  if (!status) {
    return fail(Errc::internal, "state database: server '" + r.name + "' has an unknown status '" + st.text(19) +
                                    "'; a newer gpurent may have written it");
  }
  r.status = *status;
  r.status_since = from_unix(st.i64(20));
  r.created_at = from_unix(st.i64(21));
  r.last_change = from_unix(st.i64(22));
  r.identity_file = st.text(23);
  r.known_hosts_file = st.text(24);
  r.provider_state = st.text(25);
  r.trouble = st.text(26);
  r.trouble_detail = st.text(27);
  if (!st.is_null(28)) {
    r.unreachable_since = from_unix(st.i64(28));
  }
  return r;
}

std::string terms_json(const RentTerms& t)
{
  const nlohmann::json terms = {{"stopped", rule_to_json(t.stopped)},
                                {"hibernated", rule_to_json(t.hibernated)},
                                {"destroy_loses", t.destroy_loses},
                                {"workspace_dir", t.workspace_dir}};
  return terms.dump();
}

class SqliteStateStore final : public StateStore {
public:
  explicit SqliteStateStore(DbPtr db, int version) : m_db(std::move(db)), m_version(version) {}

  int schema_version() const override { return m_version; }

  Result<ServerRecord> insert_server(const ServerRecord& rec) override
  {
    TRY(begin());
    const std::string terms_text = terms_json(rec.terms);
    const std::string status{to_string(rec.status)};
    const std::string sql = std::string("INSERT INTO servers(") + (k_server_columns + 3) +
                            ",closed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    Stmt st(db(), sql.c_str());
    if (!st.ok()) {
      return rollback_with(db_error(db(), "prepare insert"));
    }
    st.bind(1, rec.name).bind(2, rec.provider).bind(3, rec.provider_id).bind(4, rec.card);
    st.bind(5, static_cast<std::int64_t>(rec.gpus)).bind(6, std::int64_t{rec.spot}).bind(7, std::int64_t{rec.attached});
    st.bind(8, rec.region).bind(9, rec.terms.price_per_hour.n).bind(10, rec.terms.currency);
    st.bind(11, static_cast<std::int64_t>(rec.terms.billing.increment.count()));
    st.bind(12, static_cast<std::int64_t>(rec.terms.billing.minimum.count()));
    st.bind(13, static_cast<std::int64_t>(rec.terms.billing.charged_at_deploy.count()));
    st.bind(14, terms_text).bind(15, rec.user).bind(16, rec.host).bind(17, std::int64_t{rec.port});
    st.bind(18, rec.host_key).bind(19, status).bind(20, to_unix(rec.created_at)).bind(21, to_unix(rec.created_at));
    st.bind(22, to_unix(rec.created_at)).bind(23, rec.identity_file).bind(24, rec.known_hosts_file);
    st.bind(25, rec.provider_state).bind(26, rec.trouble).bind(27, rec.trouble_detail);
    st.bind(28, rec.unreachable_since ? std::optional<std::int64_t>{to_unix(*rec.unreachable_since)} : std::nullopt);
    st.bind(29, std::int64_t{is_closed(rec.status)});
    const int rc = st.step();
    if (rc == SQLITE_CONSTRAINT) {
      rollback();
      return fail(Errc::refused, "a server named '" + rec.name + "' is already tracked; pick another --name, "
                                 "or see it with `gpurent status " + rec.name + "`");
    }
    if (rc != SQLITE_DONE) {
      return rollback_with(db_error(db(), "insert server"));
    }
    const std::int64_t id = sqlite3_last_insert_rowid(db());
    TRY(append_event(id, rec.status, rec.created_at, rec.attached ? "attached" : "recorded before the create call"));
    TRY(commit());
    ServerRecord out = rec;
    out.id = id;
    out.status_since = rec.created_at;
    out.last_change = rec.created_at;
    return out;
  }

  Result<std::optional<ServerRecord>> find_server(std::string_view name) override
  {
    const std::string sql = std::string("SELECT ") + k_server_columns +
                            " FROM servers WHERE name=? ORDER BY closed ASC, id DESC LIMIT 1";
    return query_one(sql, [&](Stmt& st) { st.bind(1, name); });
  }

  Result<std::optional<ServerRecord>> get_server(std::int64_t id) override
  {
    const std::string sql = std::string("SELECT ") + k_server_columns + " FROM servers WHERE id=?";
    return query_one(sql, [&](Stmt& st) { st.bind(1, id); });
  }

  Result<std::vector<ServerRecord>> list_servers(bool include_closed) override
  {
    const std::string sql = std::string("SELECT ") + k_server_columns + " FROM servers" +
                            (include_closed ? "" : " WHERE closed=0") + " ORDER BY id";
    Stmt st(db(), sql.c_str());
    if (!st.ok()) {
      return std::unexpected(db_error(db(), "prepare list"));
    }
    std::vector<ServerRecord> out;
    int rc = SQLITE_ROW;
    while ((rc = st.step()) == SQLITE_ROW) {
      TRY_ASSIGN(auto rec, read_server(st));
      out.push_back(std::move(rec));
    }
    if (rc != SQLITE_DONE) {
      return std::unexpected(db_error(db(), "list servers"));
    }
    return out;
  }

  Result<void> set_provider_id(std::int64_t id, std::string_view provider_id) override
  {
    return exec_write("UPDATE servers SET provider_id=? WHERE id=?", [&](Stmt& st) { st.bind(1, provider_id).bind(2, id); });
  }

  Result<void> set_connection(std::int64_t id, std::string_view user, std::string_view host, std::uint16_t port,
                              std::string_view host_key) override
  {
    return exec_write("UPDATE servers SET ssh_user=?, host=?, port=?, host_key=? WHERE id=?", [&](Stmt& st) {
      st.bind(1, user).bind(2, host).bind(3, std::int64_t{port}).bind(4, host_key).bind(5, id);
    });
  }

  Result<void> set_terms(std::int64_t id, const RentTerms& t) override
  {
    const std::string text = terms_json(t);
    return exec_write("UPDATE servers SET price_micro=?, currency=?, increment_s=?, minimum_s=?, deploy_s=?, "
                      "terms_json=? WHERE id=?",
                      [&](Stmt& st) {
                        st.bind(1, t.price_per_hour.n).bind(2, t.currency);
                        st.bind(3, static_cast<std::int64_t>(t.billing.increment.count()));
                        st.bind(4, static_cast<std::int64_t>(t.billing.minimum.count()));
                        st.bind(5, static_cast<std::int64_t>(t.billing.charged_at_deploy.count()));
                        st.bind(6, text).bind(7, id);
                      });
  }

  Result<void> set_ssh_files(std::int64_t id, std::string_view identity, std::string_view known_hosts) override
  {
    return exec_write("UPDATE servers SET ssh_identity=?, ssh_known_hosts=? WHERE id=?",
                      [&](Stmt& st) { st.bind(1, identity).bind(2, known_hosts).bind(3, id); });
  }

  Result<void> set_provider_state(std::int64_t id, std::string_view provider_state, std::string_view trouble,
                                  std::string_view detail) override
  {
    return exec_write("UPDATE servers SET provider_state=?, trouble=?, trouble_detail=? WHERE id=?", [&](Stmt& st) {
      st.bind(1, provider_state).bind(2, trouble).bind(3, detail).bind(4, id);
    });
  }

  Result<void> set_unreachable_since(std::int64_t id, std::optional<TimePoint> since) override
  {
    const std::optional<std::int64_t> at = since ? std::optional<std::int64_t>{to_unix(*since)} : std::nullopt;
    return exec_write("UPDATE servers SET unreachable_since=? WHERE id=?", [&](Stmt& st) { st.bind(1, at).bind(2, id); });
  }

  Result<void> record_state(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note) override
  {
    TRY(begin());
    {
      Stmt check(db(), "SELECT closed, name FROM servers WHERE id=?");
      check.bind(1, id);
      const int rc = check.step();
      if (rc != SQLITE_ROW) {
        Error e = rc == SQLITE_DONE ? Error{Errc::not_found, "state database: no server with id " + std::to_string(id)}
                                    : db_error(db(), "read server");
        return rollback_with(std::move(e));
      }
      if (check.i64(0) != 0) {
        const std::string name = check.text(1);
        rollback();
        return fail(Errc::refused, "server '" + name + "' is already closed in the ledger; it cannot change state");
      }
    }
    const std::string s{to_string(status)};
    Stmt up(db(), "UPDATE servers SET status=?, status_since=?, last_change=MAX(last_change, ?), closed=? WHERE id=?");
    up.bind(1, s).bind(2, to_unix(at)).bind(3, to_unix(at)).bind(4, std::int64_t{is_closed(status)}).bind(5, id);
    if (up.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "update server state"));
    }
    TRY(append_event(id, status, at, note));
    return commit();
  }

  Result<void> mark_changed(std::int64_t id, TimePoint at) override
  {
    return exec_write("UPDATE servers SET last_change=MAX(last_change, ?) WHERE id=?",
                      [&](Stmt& st) { st.bind(1, to_unix(at)).bind(2, id); });
  }

  Result<std::vector<LedgerEvent>> events(std::int64_t id) override
  {
    Stmt st(db(), "SELECT id, server_id, at, status, note FROM events WHERE server_id=? ORDER BY id");
    st.bind(1, id);
    std::vector<LedgerEvent> out;
    int rc = SQLITE_ROW;
    while ((rc = st.step()) == SQLITE_ROW) {
      const auto status = parse_server_status(st.text(3));
      if (!status) {
        return fail(Errc::internal, "state database: unknown ledger status '" + st.text(3) + "'");
      }
      out.push_back(LedgerEvent{st.i64(0), st.i64(1), from_unix(st.i64(2)), *status, st.text(4)});
    }
    if (rc != SQLITE_DONE) {
      return std::unexpected(db_error(db(), "read ledger"));
    }
    return out;
  }

  Result<BackupRecord> add_backup(const BackupRecord& b) override
  {
    TRY(begin());
    Stmt st(db(), "INSERT INTO backups(server_id, at, manifest, verified, files, bytes) VALUES(?,?,?,?,?,?)");
    st.bind(1, b.server_id).bind(2, to_unix(b.at)).bind(3, b.manifest).bind(4, std::int64_t{b.verified});
    st.bind(5, static_cast<std::int64_t>(b.files)).bind(6, static_cast<std::int64_t>(b.bytes.n));
    if (st.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "record backup"));
    }
    BackupRecord out = b;
    out.id = sqlite3_last_insert_rowid(db());
    TRY(commit());
    return out;
  }

  Result<std::optional<BackupRecord>> latest_backup(std::int64_t server_id) override
  {
    Stmt st(db(), "SELECT id, server_id, at, manifest, verified, files, bytes FROM backups WHERE server_id=? "
                  "ORDER BY at DESC, id DESC LIMIT 1");
    st.bind(1, server_id);
    const int rc = st.step();
    if (rc == SQLITE_DONE) {
      return std::optional<BackupRecord>{};
    }
    if (rc != SQLITE_ROW) {
      return std::unexpected(db_error(db(), "read backups"));
    }
    return std::optional<BackupRecord>{BackupRecord{st.i64(0), st.i64(1), from_unix(st.i64(2)), st.text(3), st.i64(4) != 0,
                                                    static_cast<std::uint64_t>(st.i64(5)),
                                                    Bytes{static_cast<std::uint64_t>(st.i64(6))}}};
  }

  Result<DoctorObservation> add_doctor_observation(const DoctorObservation& o) override
  {
    TRY(begin());
    const std::string gpus = gpus_to_json(o.gpus).dump();
    const std::optional<std::int64_t> procs =
        o.compute_processes ? std::optional<std::int64_t>{*o.compute_processes} : std::nullopt;
    Stmt st(db(), "INSERT INTO doctor_observations(server_id, at, compute_processes, gpus_json) VALUES(?,?,?,?)");
    st.bind(1, o.server_id).bind(2, to_unix(o.at)).bind(3, procs).bind(4, gpus);
    if (st.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "record doctor observation"));
    }
    DoctorObservation out = o;
    out.id = sqlite3_last_insert_rowid(db());
    TRY(commit());
    return out;
  }

  Result<std::vector<DoctorObservation>> doctor_observations(std::int64_t server_id, TimePoint since) override
  {
    Stmt st(db(), "SELECT id, server_id, at, compute_processes, gpus_json FROM doctor_observations "
                  "WHERE server_id=? AND at>=? ORDER BY at, id");
    st.bind(1, server_id).bind(2, to_unix(since));
    std::vector<DoctorObservation> out;
    int rc = SQLITE_ROW;
    while ((rc = st.step()) == SQLITE_ROW) {
      DoctorObservation o;
      o.id = st.i64(0);
      o.server_id = st.i64(1);
      o.at = from_unix(st.i64(2));
      if (!st.is_null(3) && st.i64(3) >= 0) {
        o.compute_processes = static_cast<std::uint32_t>(st.i64(3));
      }
      TRY_ASSIGN(o.gpus, gpus_from_json(st.text(4)));
      out.push_back(std::move(o));
    }
    if (rc != SQLITE_DONE) {
      return std::unexpected(db_error(db(), "read doctor observations"));
    }
    return out;
  }

  Result<JobRecord> add_job(const JobRecord& j) override
  {
    TRY(begin());
    Stmt st(db(), "INSERT INTO jobs(job_id,server_id,target,command,workdir,state,exit_code,started,ended,log,oom_json,"
                  "steps_json,steps_owner) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    const std::string steps = steps_to_json(j.steps);
    bind_job(st, j, steps);
    st.bind(1, j.job_id).bind(2, j.server_id).bind(3, j.target).bind(4, j.command).bind(5, j.workdir);
    st.bind(13, j.steps_owner);
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

  Result<void> update_job(const JobRecord& j) override
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

  Result<std::vector<JobRecord>> jobs(std::string_view target) override
  {
    const std::string sql = std::string("SELECT ") + k_job_columns + " FROM jobs WHERE target=? ORDER BY started, id";
    return query_jobs(sql, [&](Stmt& st) { st.bind(1, target); });
  }

  Result<std::vector<JobRecord>> jobs_with_pending_steps() override
  {
    const std::string sql = std::string("SELECT ") + k_job_columns +
                            " FROM jobs WHERE steps_json LIKE '%\"state\":\"pending\"%' ORDER BY started, id";
    return query_jobs(sql, [](Stmt&) {});
  }

  Result<bool> claim_job_steps(std::int64_t id, std::string_view owner,
                               const std::function<bool(std::string_view)>& holder_gone) override
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

  Result<void> put_autostop(const AutostopRecord& a) override
  {
    Stmt st(db(), "INSERT OR REPLACE INTO autostop(server_id,settings_json,armed_at,active,last_json,read_at) VALUES(?,?,?,?,?,?)");
    st.bind(1, a.server_id).bind(2, a.settings_json).bind(3, to_unix(a.armed_at)).bind(4, std::int64_t{a.active});
    st.bind(5, a.last_json).bind(6, a.read_at ? std::optional<std::int64_t>{to_unix(*a.read_at)} : std::nullopt);
    if (!st.ok() || st.step() != SQLITE_DONE) {
      return std::unexpected(db_error(db(), "record autostop"));
    }
    return {};
  }

  Result<std::optional<AutostopRecord>> autostop(std::int64_t server_id) override
  {
    Stmt st(db(), "SELECT server_id,settings_json,armed_at,active,last_json,read_at FROM autostop WHERE server_id=?");
    st.bind(1, server_id);
    const int rc = st.ok() ? st.step() : SQLITE_ERROR;
    if (rc == SQLITE_DONE) {
      return std::optional<AutostopRecord>{};
    }
    if (rc != SQLITE_ROW) {
      return std::unexpected(db_error(db(), "read autostop"));
    }
    AutostopRecord a{st.i64(0), st.text(1), from_unix(st.i64(2)), st.i64(3) != 0, st.text(4), std::nullopt};
    if (!st.is_null(5)) {
      a.read_at = from_unix(st.i64(5));
    }
    return std::optional<AutostopRecord>{std::move(a)};
  }

  Result<void> release_job_steps(std::int64_t id, std::string_view owner) override
  {
    TRY(begin());
    Stmt up(db(), "UPDATE jobs SET steps_owner='' WHERE id=? AND steps_owner=?");
    up.bind(1, id).bind(2, owner);
    if (up.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "release job steps"));
    }
    return commit();
  }

private:
  sqlite3* db() const { return m_db.get(); }

  // Parameters 6..12 (state .. steps_json); `steps` must outlive the statement's step().
  static void bind_job(Stmt& st, const JobRecord& j, const std::string& steps)
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

  template <class Bind>
  Result<std::vector<JobRecord>> query_jobs(const std::string& sql, Bind&& bind)
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
      out.push_back(std::move(j));
    }
    if (rc != SQLITE_DONE) {
      return std::unexpected(db_error(db(), "read jobs"));
    }
    return out;
  }

  Result<void> begin()
  {
    if (sqlite3_exec(db(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return std::unexpected(db_error(db(), "begin transaction"));
    }
    return {};
  }
  Result<void> commit()
  {
    if (sqlite3_exec(db(), "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      Error e = db_error(db(), "commit");
      rollback();
      return std::unexpected(std::move(e));
    }
    return {};
  }
  void rollback() { sqlite3_exec(db(), "ROLLBACK", nullptr, nullptr, nullptr); }
  std::unexpected<Error> rollback_with(Error e)
  {
    rollback();
    return std::unexpected(std::move(e));
  }

  Result<void> append_event(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note)
  {
    const std::string s{to_string(status)};
    Stmt st(db(), "INSERT INTO events(server_id, at, status, note) VALUES(?,?,?,?)");
    st.bind(1, id).bind(2, to_unix(at)).bind(3, s).bind(4, note);
    if (st.step() != SQLITE_DONE) {
      return rollback_with(db_error(db(), "append ledger event"));
    }
    return {};
  }

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

  template <class Bind>
  Result<std::optional<ServerRecord>> query_one(const std::string& sql, Bind&& bind)
  {
    Stmt st(db(), sql.c_str());
    bind(st);
    const int rc = st.step();
    if (rc == SQLITE_DONE) {
      return std::optional<ServerRecord>{};
    }
    if (rc != SQLITE_ROW) {
      return std::unexpected(db_error(db(), "read server"));
    }
    TRY_ASSIGN(auto rec, read_server(st));
    return std::optional<ServerRecord>{std::move(rec)};
  }

  DbPtr m_db;
  int m_version;
};

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
}  // namespace gpurent

extern "C" void gpurent_open_state_store(const std::filesystem::path* db,
                                         gpurent::Result<std::unique_ptr<gpurent::StateStore>>* out)
{
  try {
    *out = gpurent::open_store(*db);
  } catch (const std::exception& e) {
    *out = gpurent::fail(gpurent::Errc::internal, std::string("state database: ") + e.what());
  }
}
