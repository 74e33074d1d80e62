// SPDX-License-Identifier: MIT
// The SQLite StateStore (providers/state/sqlite_detail.hpp): server rows, their billing terms as
// JSON, and the ledger of events each state change appends in the same transaction.
#include <chrono>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "providers/state/sqlite_detail.hpp"

namespace gpurent::sqlite_detail {
namespace {

nlohmann::json rule_to_json(const StateRule& r)
{
  return {{"available", r.available},       {"unavailable_reason", r.unavailable_reason},
          {"bills_full_rate", r.bills_full_rate}, {"fixed_per_hour", r.fixed_per_hour.n},
          {"keeps", r.keeps},               {"loses", r.loses},
          {"allowed_on_spot", r.allowed_on_spot}, {"spot_reason", r.spot_reason},
          {"storage_note", r.storage_note}};
}

// The stored terms must have the types insert_server writes (a hand edit or a damaged disk may
// differ): nlohmann's value() throws on another type, and casts a float to an integer.
bool has_types(const nlohmann::json& j, std::initializer_list<const char*> strings, std::initializer_list<const char*> bools,
               std::initializer_list<const char*> integers)
{
  const auto ok = [&](std::initializer_list<const char*> keys, bool (nlohmann::json::*is)() const noexcept) {
    for (const char* k : keys) {
      const auto it = j.find(k);
      if (it != j.end() && !((*it).*is)()) {
        return false;
      }
    }
    return true;
  };
  return j.is_object() && ok(strings, &nlohmann::json::is_string) && ok(bools, &nlohmann::json::is_boolean) &&
         ok(integers, &nlohmann::json::is_number_integer);
}

bool terms_readable(const nlohmann::json& terms)
{
  const auto rule_ok = [&](const char* key) {
    const auto it = terms.find(key);
    return it == terms.end() ||
           has_types(*it, {"unavailable_reason", "keeps", "loses", "spot_reason", "storage_note"},
                     {"available", "bills_full_rate", "allowed_on_spot"}, {"fixed_per_hour"});
  };
  return has_types(terms, {"destroy_loses", "workspace_dir"}, {}, {}) && rule_ok("stopped") && rule_ok("hibernated");
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

constexpr const char* k_server_columns =
    "id,name,provider,provider_id,card,gpus,spot,attached,region,price_micro,currency,increment_s,minimum_s,"
    "deploy_s,terms_json,ssh_user,host,port,host_key,status,status_since,created_at,last_change,"
    "ssh_identity,ssh_known_hosts,provider_state,trouble,trouble_detail,unreachable_since,group_name,group_rank";

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
  if (terms.is_discarded() || !terms_readable(terms)) {
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
  r.group = st.text(29);
  r.group_rank = static_cast<std::uint32_t>(st.i64(30));
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

}  // namespace

template <class Bind>
Result<std::optional<ServerRecord>> SqliteStateStore::query_one(const std::string& sql, Bind&& bind)
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

Result<ServerRecord> SqliteStateStore::insert_server(const ServerRecord& rec)
{
  TRY(begin());
  const std::string terms_text = terms_json(rec.terms);
  const std::string status{to_string(rec.status)};
  const std::string sql = std::string("INSERT INTO servers(") + (k_server_columns + 3) +
                          ",closed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
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
  st.bind(29, rec.group).bind(30, static_cast<std::int64_t>(rec.group_rank));
  st.bind(31, std::int64_t{is_closed(rec.status)});
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

Result<std::optional<ServerRecord>> SqliteStateStore::find_server(std::string_view name)
{
  const std::string sql = std::string("SELECT ") + k_server_columns +
                          " FROM servers WHERE name=? ORDER BY closed ASC, id DESC LIMIT 1";
  return query_one(sql, [&](Stmt& st) { st.bind(1, name); });
}

Result<std::optional<ServerRecord>> SqliteStateStore::get_server(std::int64_t id)
{
  const std::string sql = std::string("SELECT ") + k_server_columns + " FROM servers WHERE id=?";
  return query_one(sql, [&](Stmt& st) { st.bind(1, id); });
}

Result<std::vector<ServerRecord>> SqliteStateStore::list_servers(bool include_closed)
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

Result<void> SqliteStateStore::set_provider_id(std::int64_t id, std::string_view provider_id)
{
  return exec_write("UPDATE servers SET provider_id=? WHERE id=?", [&](Stmt& st) { st.bind(1, provider_id).bind(2, id); });
}

Result<void> SqliteStateStore::set_connection(std::int64_t id, std::string_view user, std::string_view host, std::uint16_t port,
                                              std::string_view host_key)
{
  return exec_write("UPDATE servers SET ssh_user=?, host=?, port=?, host_key=? WHERE id=?", [&](Stmt& st) {
    st.bind(1, user).bind(2, host).bind(3, std::int64_t{port}).bind(4, host_key).bind(5, id);
  });
}

Result<void> SqliteStateStore::set_terms(std::int64_t id, const RentTerms& t)
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

Result<void> SqliteStateStore::set_ssh_files(std::int64_t id, std::string_view identity, std::string_view known_hosts)
{
  return exec_write("UPDATE servers SET ssh_identity=?, ssh_known_hosts=? WHERE id=?",
                    [&](Stmt& st) { st.bind(1, identity).bind(2, known_hosts).bind(3, id); });
}

Result<void> SqliteStateStore::set_provider_state(std::int64_t id, std::string_view provider_state, std::string_view trouble,
                                                  std::string_view detail)
{
  return exec_write("UPDATE servers SET provider_state=?, trouble=?, trouble_detail=? WHERE id=?", [&](Stmt& st) {
    st.bind(1, provider_state).bind(2, trouble).bind(3, detail).bind(4, id);
  });
}

Result<void> SqliteStateStore::set_unreachable_since(std::int64_t id, std::optional<TimePoint> since)
{
  const std::optional<std::int64_t> at = since ? std::optional<std::int64_t>{to_unix(*since)} : std::nullopt;
  return exec_write("UPDATE servers SET unreachable_since=? WHERE id=?", [&](Stmt& st) { st.bind(1, at).bind(2, id); });
}

Result<void> SqliteStateStore::record_state(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note)
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

Result<void> SqliteStateStore::mark_changed(std::int64_t id, TimePoint at)
{
  return exec_write("UPDATE servers SET last_change=MAX(last_change, ?) WHERE id=?",
                    [&](Stmt& st) { st.bind(1, to_unix(at)).bind(2, id); });
}

Result<std::vector<LedgerEvent>> SqliteStateStore::events(std::int64_t id)
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

Result<void> SqliteStateStore::append_event(std::int64_t id, ServerStatus status, TimePoint at, std::string_view note)
{
  const std::string s{to_string(status)};
  Stmt st(db(), "INSERT INTO events(server_id, at, status, note) VALUES(?,?,?,?)");
  st.bind(1, id).bind(2, to_unix(at)).bind(3, s).bind(4, note);
  if (st.step() != SQLITE_DONE) {
    return rollback_with(db_error(db(), "append ledger event"));
  }
  return {};
}

}  // namespace gpurent::sqlite_detail
