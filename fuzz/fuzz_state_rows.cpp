// SPDX-License-Identifier: MIT
// Fuzz target for the state store's readers of its own rows (providers/state/
// sqlite_*.cpp): what an older or newer gpurent, a damaged disk or a hand edit may
// have left in the database. One real SQLite database (in a temporary directory) holds a
// server, a ledger event, a backup and a doctor observation; each input overwrites their
// stored text (billing terms JSON, status names, GPU samples JSON) and integers (times, port,
// counts) through a second connection, then every read of the store runs. Any rows give
// records or an error, never an escaping exception, a crash or a sanitizer report.
// Input: fields separated by the byte 0x1e: terms_json, server status, gpus_json, event
// status, then the bytes that fill the integer columns.
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/state_store.hpp"

namespace {

struct Db {
  std::unique_ptr<gpurent::StateStore> store;
  sqlite3* raw = nullptr;  // the second connection that plants the rows
  std::filesystem::path dir;
  ~Db()
  {
    sqlite3_close_v2(raw);
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Db& db()
{
  static const std::unique_ptr<Db> d = [] {
    auto p = std::make_unique<Db>();
    Db& x = *p;
    std::string templ = (std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp") + std::string("/gpurent-fuzz-XXXXXX");
    if (::mkdtemp(templ.data()) == nullptr) {
      std::abort();
    }
    x.dir = templ;
    const std::filesystem::path file = x.dir / "state.db";
    gpurent::Result<std::unique_ptr<gpurent::StateStore>> opened = gpurent::fail(gpurent::Errc::internal, "");
    gpurent_open_state_store(&file, &opened);
    if (!opened) {
      std::abort();
    }
    x.store = std::move(*opened);
    gpurent::ServerRecord rec;
    rec.name = "fuzz";
    rec.provider = "runpod";
    rec.card = "rtx-4090";
    rec.terms.price_per_hour = gpurent::MicroUsd{690'000};
    rec.created_at = gpurent::from_unix(1'800'000'000);
    const auto server = x.store->insert_server(rec);
    const gpurent::DoctorObservation obs{0, server ? server->id : 1, rec.created_at, {{0, 10, 24'000, 0U}}, 0U};
    const gpurent::BackupRecord backup{0, server ? server->id : 1, rec.created_at, "/tmp/m.json", true, 1, gpurent::Bytes{1}};
    if (!server || !x.store->add_doctor_observation(obs) || !x.store->add_backup(backup) ||
        sqlite3_open_v2(file.c_str(), &x.raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK ||
        sqlite3_exec(x.raw, "PRAGMA synchronous=OFF", nullptr, nullptr, nullptr) != SQLITE_OK) {
      std::abort();
    }
    return p;
  }();
  return *d;
}

// Runs `sql` with text and integer parameters (a text field given as "\x01NULL" binds NULL,
// "\x01INT<n>" binds an integer: SQLite columns hold whatever was written to them).
void plant(sqlite3* raw, const char* sql, const std::vector<std::string_view>& texts, const std::vector<std::int64_t>& ints)
{
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(raw, sql, -1, &st, nullptr) != SQLITE_OK) {
    std::abort();
  }
  int i = 1;
  for (const auto t : texts) {
    if (t == "\x01NULL") {
      sqlite3_bind_null(st, i++);
    } else if (t.starts_with("\x01INT")) {
      sqlite3_bind_int64(st, i++, static_cast<std::int64_t>(t.size()) * 1'000'003);
    } else {
      sqlite3_bind_text(st, i++, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    }
  }
  for (const auto v : ints) {
    sqlite3_bind_int64(st, i++, v);
  }
  (void)sqlite3_step(st);  // a NOT NULL column refuses NULL: the row keeps its old value
  sqlite3_finalize(st);
}

template <class T>
void check(const gpurent::Result<T>& r)
{
  if (!r && r.error().message.empty()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  auto& d = db();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> f;
  std::size_t start = 0;
  while (f.size() < 4) {
    const auto end = text.find('\x1e', start);
    f.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    start = end == std::string_view::npos ? text.size() : end + 1;
  }
  // Eight integers from what is left (zero-padded).
  std::int64_t ints[8]{};
  const auto rest = text.substr(start);
  std::memcpy(ints, rest.data(), std::min(rest.size(), sizeof ints));

  plant(d.raw, "UPDATE servers SET terms_json=?, status=?, status_since=?, created_at=?, last_change=?, port=?, gpus=? WHERE id=1",
        {f[0], f[1]}, {ints[0], ints[1], ints[2], ints[3], ints[4]});
  plant(d.raw, "UPDATE events SET status=?, at=? WHERE id=1", {f[3]}, {ints[5]});
  plant(d.raw, "UPDATE doctor_observations SET gpus_json=?, at=?, compute_processes=? WHERE id=1", {f[2]}, {ints[6], ints[7]});
  plant(d.raw, "UPDATE backups SET at=?, files=?, bytes=? WHERE id=1", {}, {ints[5], ints[6], ints[7]});

  auto& s = *d.store;
  check(s.list_servers(true));
  check(s.find_server("fuzz"));
  const auto server = s.get_server(1);
  check(server);
  if (server && *server && (*server)->id != 1) {
    std::abort();
  }
  check(s.events(1));
  check(s.latest_backup(1));
  const auto obs = s.doctor_observations(1, gpurent::TimePoint::min());
  check(obs);
  if (obs) {
    for (const auto& o : *obs) {
      for (const auto& g : o.gpus) {
        if (g.utilization_pct && *g.utilization_pct > 100) {
          std::abort();
        }
      }
    }
  }
  return 0;
}
