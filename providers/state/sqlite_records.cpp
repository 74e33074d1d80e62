// SPDX-License-Identifier: MIT
// The SQLite StateStore (providers/state/sqlite_detail.hpp): verified backups, and what `gpurent
// doctor` saw on a server (its GPUs kept as JSON, read back strictly).
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "providers/state/sqlite_detail.hpp"

namespace gpurent::sqlite_detail {
namespace {

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

}  // namespace

Result<BackupRecord> SqliteStateStore::add_backup(const BackupRecord& b)
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

Result<std::optional<BackupRecord>> SqliteStateStore::latest_backup(std::int64_t server_id)
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

Result<DoctorObservation> SqliteStateStore::add_doctor_observation(const DoctorObservation& o)
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

Result<std::vector<DoctorObservation>> SqliteStateStore::doctor_observations(std::int64_t server_id, TimePoint since)
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

Result<void> SqliteStateStore::put_autostop(const AutostopRecord& a)
{
  Stmt st(db(), "INSERT OR REPLACE INTO autostop(server_id,settings_json,armed_at,active,last_json,read_at) VALUES(?,?,?,?,?,?)");
  st.bind(1, a.server_id).bind(2, a.settings_json).bind(3, to_unix(a.armed_at)).bind(4, std::int64_t{a.active});
  st.bind(5, a.last_json).bind(6, a.read_at ? std::optional<std::int64_t>{to_unix(*a.read_at)} : std::nullopt);
  if (!st.ok() || st.step() != SQLITE_DONE) {
    return std::unexpected(db_error(db(), "record autostop"));
  }
  return {};
}

Result<std::optional<AutostopRecord>> SqliteStateStore::autostop(std::int64_t server_id)
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

}  // namespace gpurent::sqlite_detail
