// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <thread>

#include "providers/state_store.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir()
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent-state-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

std::unique_ptr<StateStore> open_store(const std::filesystem::path& db)
{
  Result<std::unique_ptr<StateStore>> out = std::unexpected(Error{});
  gpurent_open_state_store(&db, &out);
  if (!out) {
    FAIL(out.error().message);
  }
  return std::move(*out);
}

ServerRecord sample(std::string name, TimePoint at)
{
  ServerRecord r;
  r.name = std::move(name);
  r.provider = "runpod";
  r.card = "rtx-4090";
  r.gpus = 2;
  r.terms.price_per_hour = MicroUsd{690'000};
  r.terms.billing.increment = 1s;
  r.terms.stopped.available = true;
  r.terms.stopped.fixed_per_hour = MicroUsd{2'740};
  r.terms.stopped.loses = "container disk";
  r.terms.hibernated.unavailable_reason = "RunPod has no hibernate";
  r.terms.destroy_loses = "volume disk";
  r.created_at = at;
  return r;
}

const TimePoint k_t0{std::chrono::seconds{1'790'000'000}};

}  // namespace

TEST_CASE("StateStore: records round-trip with rent terms, ledger and backups", "[providers][state_store]")
{
  TempDir dir;
  auto store = open_store(dir.path / "sub" / "state.db");
  CHECK(store->schema_version() >= 3);  // 3: SSH files, provider state, release check
  CHECK((std::filesystem::status(dir.path / "sub").permissions() & std::filesystem::perms::all) ==
        std::filesystem::perms::owner_all);

  auto rec = store->insert_server(sample("train-1", k_t0));
  REQUIRE(rec);
  CHECK(rec->id > 0);
  REQUIRE(store->set_provider_id(rec->id, "pod-abc"));
  RentTerms reported = rec->terms;
  reported.price_per_hour = MicroUsd{740'000};
  REQUIRE(store->set_terms(rec->id, reported));
  REQUIRE(store->set_connection(rec->id, "root", "127.0.0.1", 2222, "ssh-ed25519 AAAAkey"));
  REQUIRE(store->record_state(rec->id, ServerStatus::running, k_t0 + 90s, "ssh answered"));
  REQUIRE(store->record_state(rec->id, ServerStatus::stopped, k_t0 + 3600s, "down --stop"));

  auto found = store->find_server("train-1");
  REQUIRE(found);
  REQUIRE(found->has_value());
  const ServerRecord& r = **found;
  CHECK(r.provider_id == "pod-abc");
  CHECK(r.port == 2222);
  CHECK(r.host_key == "ssh-ed25519 AAAAkey");
  CHECK(r.gpus == 2);
  CHECK(r.terms.price_per_hour.n == 740'000);
  CHECK(r.terms.stopped.fixed_per_hour.n == 2'740);
  CHECK(r.terms.stopped.loses == "container disk");
  CHECK(r.terms.hibernated.unavailable_reason == "RunPod has no hibernate");
  CHECK(r.status == ServerStatus::stopped);
  CHECK(r.status_since == k_t0 + 3600s);
  CHECK(r.last_change == k_t0 + 3600s);

  auto ev = store->events(rec->id);
  REQUIRE(ev);
  REQUIRE(ev->size() == 3);
  CHECK((*ev)[0].status == ServerStatus::creating);
  CHECK((*ev)[1].at == k_t0 + 90s);
  CHECK((*ev)[2].note == "down --stop");

  SECTION("a group member keeps its group and rank; a server outside a group has none")
  {
    ServerRecord m = sample("pair-1", k_t0);
    m.group = "pair";
    m.group_rank = 1;
    REQUIRE(store->insert_server(m));
    auto got = store->find_server("pair-1");
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK((*got)->group == "pair");
    CHECK((*got)->group_rank == 1);
    CHECK(r.group.empty());
    CHECK(r.group_rank == 0);
  }

  SECTION("an open name is unique; a closed one can be reused")
  {
    auto dup = store->insert_server(sample("train-1", k_t0));
    REQUIRE_FALSE(dup);
    CHECK(dup.error().code == Errc::refused);
    REQUIRE(store->record_state(rec->id, ServerStatus::destroyed, k_t0 + 4000s, "confirmed gone"));
    auto again = store->record_state(rec->id, ServerStatus::running, k_t0 + 4001s, "");
    REQUIRE_FALSE(again);
    CHECK(again.error().code == Errc::refused);
    auto reuse = store->insert_server(sample("train-1", k_t0 + 5000s));
    REQUIRE(reuse);
    auto open_one = store->find_server("train-1");
    CHECK((*open_one)->id == reuse->id);
    CHECK(store->list_servers(false)->size() == 1);
    CHECK(store->list_servers(true)->size() == 2);
  }
  SECTION("latest backup")
  {
    CHECK_FALSE(store->latest_backup(rec->id)->has_value());
    REQUIRE(store->add_backup(BackupRecord{0, rec->id, k_t0 + 100s, "/b/m1.json", true, 3, Bytes{10}}));
    REQUIRE(store->add_backup(BackupRecord{0, rec->id, k_t0 + 200s, "/b/m2.json", false, 4, Bytes{20}}));
    auto latest = store->latest_backup(rec->id);
    REQUIRE(latest->has_value());
    CHECK((*latest)->manifest == "/b/m2.json");
    CHECK_FALSE((*latest)->verified);
    CHECK((*latest)->bytes.n == 20);
  }
  SECTION("doctor observations: round trip, oldest first, from a time on")
  {
    CHECK(store->doctor_observations(rec->id, k_t0)->empty());
    DoctorObservation busy{0, rec->id, k_t0 + 200s, {GpuSample{0, 30'010, 81'559, 87}, GpuSample{1, 5, 81'559, 0}}, 2};
    DoctorObservation idle{0, rec->id, k_t0 + 100s, {GpuSample{0, 3, 81'559, std::nullopt}}, std::nullopt};
    auto saved = store->add_doctor_observation(busy);
    REQUIRE(saved);
    CHECK(saved->id > 0);
    REQUIRE(store->add_doctor_observation(idle));
    auto all = store->doctor_observations(rec->id, k_t0);
    REQUIRE(all);
    REQUIRE(all->size() == 2);
    CHECK((*all)[0].at == k_t0 + 100s);
    CHECK((*all)[0].gpus == idle.gpus);
    CHECK_FALSE((*all)[0].compute_processes.has_value());
    CHECK((*all)[1].gpus == busy.gpus);
    CHECK((*all)[1].compute_processes == std::optional<std::uint32_t>(2));
    CHECK((*all)[1].server_id == rec->id);
    CHECK(store->doctor_observations(rec->id, k_t0 + 150s)->size() == 1);
    CHECK(store->doctor_observations(rec->id + 1, k_t0)->empty());
  }
  SECTION("reopening keeps everything")
  {
    const int version = store->schema_version();
    store.reset();
    auto again = open_store(dir.path / "sub" / "state.db");
    CHECK(again->schema_version() == version);
    CHECK((*again->find_server("train-1"))->status == ServerStatus::stopped);
  }
}

TEST_CASE("StateStore: stored billing terms of the wrong types are an error, not an exception", "[providers][state_store]")
{
  // Found by fuzz_state_rows (fuzz/crashes/fuzz_state_rows/): nlohmann's value() threw on a
  // string where a number belongs, and would cast a float to an integer (undefined behaviour).
  TempDir dir;
  const auto db = dir.path / "state.db";
  auto store = open_store(db);
  const auto rec = store->insert_server(sample("damaged", k_t0));
  REQUIRE(rec);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
  const auto set_terms = [&](const std::string& terms) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(raw, "UPDATE servers SET terms_json=? WHERE id=?", -1, &st, nullptr) == SQLITE_OK);
    sqlite3_bind_text(st, 1, terms.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, rec->id);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
  };
  for (const std::string bad : {R"({"stopped": {"fixed_per_hour": ""}})", R"({"stopped": {"fixed_per_hour": 1e300}})",
                                R"({"hibernated": {"available": "yes"}})", R"({"stopped": {"keeps": 5}})",
                                R"({"stopped": 7})", R"({"destroy_loses": false})", R"({"workspace_dir": []})"}) {
    INFO(bad);
    set_terms(bad);
    const auto found = store->find_server("damaged");
    REQUIRE_FALSE(found.has_value());
    CHECK(found.error().code == Errc::internal);
    CHECK_THAT(found.error().message, Catch::Contains("unreadable billing terms"));
    CHECK_FALSE(store->list_servers(true).has_value());
  }
  set_terms(R"({"stopped": {"fixed_per_hour": 5}, "destroy_loses": "disk"})");  // missing fields keep their defaults
  const auto found = store->find_server("damaged");
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->terms.stopped.fixed_per_hour.n == 5);
  CHECK((*found)->terms.destroy_loses == "disk");
  sqlite3_close(raw);
}

TEST_CASE("StateStore: Unix times the clock cannot hold saturate instead of overflowing", "[providers][state_store]")
{
  // Found by fuzz_state_rows and fuzz_values (fuzz/crashes/): a stored time (or `attach
  // --since`) past the year 2262 overflowed the clock's nanoseconds (undefined behaviour).
  CHECK(from_unix(std::numeric_limits<std::int64_t>::max()) == TimePoint::max());
  CHECK(from_unix(117'964'813'107'200) == TimePoint::max());
  CHECK(from_unix(std::numeric_limits<std::int64_t>::min()) == TimePoint::min());
  for (const std::int64_t s : {std::int64_t{0}, std::int64_t{1'800'000'000}, std::int64_t{-1}, std::int64_t{9'000'000'000},
                               std::int64_t{-9'000'000'000}}) {
    CHECK(to_unix(from_unix(s)) == s);
  }
}

TEST_CASE("StateStore: remembered SSH files, the provider's word, the release check, new statuses",
          "[providers][state_store]")
{
  TempDir dir;
  auto store = open_store(dir.path / "state.db");
  ServerRecord r = sample("box", k_t0);
  r.attached = true;
  r.identity_file = "/home/u/.ssh/box_key";
  r.known_hosts_file = "/home/u/box_known_hosts";
  auto rec = store->insert_server(r);
  REQUIRE(rec);
  auto got = *store->get_server(rec->id);
  REQUIRE(got);
  CHECK(got->identity_file == "/home/u/.ssh/box_key");
  CHECK(got->known_hosts_file == "/home/u/box_known_hosts");
  CHECK(got->trouble.empty());
  CHECK_FALSE(got->unreachable_since);

  REQUIRE(store->set_provider_state(rec->id, "unhealthy", "unhealthy", "Lambda reports the instance unhealthy"));
  REQUIRE(store->set_unreachable_since(rec->id, k_t0 + 30s));
  REQUIRE(store->set_ssh_files(rec->id, "/k2", ""));
  RentTerms terms = r.terms;
  terms.price_per_hour = MicroUsd{354'167};
  terms.stopped.fixed_per_hour = MicroUsd{2'500};
  REQUIRE(store->set_terms(rec->id, terms));
  REQUIRE(store->record_state(rec->id, ServerStatus::release_pending, k_t0 + 60s, "backed up"));
  got = *store->find_server("box");
  REQUIRE(got);
  CHECK(got->provider_state == "unhealthy");
  CHECK(got->trouble == "unhealthy");
  CHECK(got->trouble_detail == "Lambda reports the instance unhealthy");
  CHECK(got->unreachable_since == k_t0 + 30s);
  CHECK(got->identity_file == "/k2");
  CHECK(got->known_hosts_file.empty());
  CHECK(got->terms.price_per_hour.n == 354'167);
  CHECK(got->terms.stopped.fixed_per_hour.n == 2'500);
  CHECK(got->terms.stopped.loses == "container disk");
  CHECK(got->status == ServerStatus::release_pending);
  CHECK_FALSE(is_closed(got->status));
  REQUIRE(store->set_unreachable_since(rec->id, std::nullopt));
  REQUIRE(store->record_state(rec->id, ServerStatus::destroy_failed, k_t0 + 90s, "destroy failed: HTTP 500"));
  got = *store->find_server("box");
  CHECK_FALSE(got->unreachable_since);
  CHECK(got->status == ServerStatus::destroy_failed);
  CHECK(parse_server_status("destroy_failed") == ServerStatus::destroy_failed);
  CHECK(parse_server_status("release_pending") == ServerStatus::release_pending);
  // Still open: a second server cannot take the name.
  CHECK(store->insert_server(sample("box", k_t0)).error().code == Errc::refused);
}

TEST_CASE("StateStore: state_dir honours GPURENT_STATE_DIR, then XDG_STATE_HOME, then HOME", "[providers][state_store]")
{
  std::map<std::string, std::string> env{{"HOME", "/h"}};
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  CHECK(*state_dir(get) == "/h/.local/state/gpurent");
  env["XDG_STATE_HOME"] = "/x";
  CHECK(*state_dir(get) == "/x/gpurent");
  env["GPURENT_STATE_DIR"] = "/s";
  CHECK(*state_dir(get) == "/s");
  env.clear();
  CHECK_FALSE(state_dir(get));
}

TEST_CASE("StateStore: 20 concurrent processes never lose or corrupt a record", "[providers][state_store]")
{
  TempDir dir;
  const auto db = dir.path / "state.db";
  constexpr int k_procs = 20;
  constexpr int k_servers = 5;
  std::vector<pid_t> kids;
  for (int p = 0; p < k_procs; ++p) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      Result<std::unique_ptr<StateStore>> out = std::unexpected(Error{});
      gpurent_open_state_store(&db, &out);
      if (!out) {
        _exit(10);
      }
      for (int i = 0; i < k_servers && code == 0; ++i) {
        auto rec = (*out)->insert_server(sample("p" + std::to_string(p) + "-" + std::to_string(i), k_t0));
        if (!rec) {
          code = 11;
          break;
        }
        for (int e = 1; e <= 4; ++e) {
          const auto st = (e % 2 == 1) ? ServerStatus::running : ServerStatus::stopped;
          if (!(*out)->record_state(rec->id, st, k_t0 + std::chrono::seconds{e}, "n")) {
            code = 12;
          }
        }
      }
      // Everyone also races for the same name: exactly one wins.
      auto shared = (*out)->insert_server(sample("shared", k_t0));
      if (!shared && shared.error().code != Errc::refused) {
        code = 13;
      }
      _exit(code);
    }
    kids.push_back(pid);
  }
  for (const pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto store = open_store(db);
  auto all = store->list_servers(true);
  REQUIRE(all);
  CHECK(all->size() == k_procs * k_servers + 1);
  for (const auto& s : *all) {
    auto ev = store->events(s.id);
    REQUIRE(ev);
    if (s.name == "shared") {
      CHECK(ev->size() == 1);
    } else {
      REQUIRE(ev->size() == 5);
      CHECK(s.status == ServerStatus::stopped);
      CHECK(ev->back().status == ServerStatus::stopped);
    }
  }
}

TEST_CASE("StateStore: a process killed mid-write leaves a consistent database", "[providers][state_store]")
{
  TempDir dir;
  const auto db = dir.path / "state.db";
  for (int round = 0; round < 6; ++round) {
    // The child says when its first record is written; the kill comes 30-105 ms after that, in
    // the middle of later writes. (A fixed sleep from the fork killed it before its first write on
    // a loaded machine: opening the store loads the sanitized IO module, hundreds of ms there.)
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(ready[0]);
      Result<std::unique_ptr<StateStore>> out = std::unexpected(Error{});
      gpurent_open_state_store(&db, &out);
      if (!out) {
        _exit(10);
      }
      for (int i = 0;; ++i) {
        auto rec = (*out)->insert_server(sample("r" + std::to_string(round) + "-" + std::to_string(i), k_t0));
        if (rec) {
          (void)(*out)->record_state(rec->id, ServerStatus::running, k_t0 + 1s, "");
          (void)(*out)->add_backup(BackupRecord{0, rec->id, k_t0 + 2s, "m", true, 1, Bytes{1}});
        }
        if (i == 0) {
          const char one = '1';
          (void)!write(ready[1], &one, 1);
          close(ready[1]);
        }
      }
    }
    close(ready[1]);
    char got = 0;
    CHECK(read(ready[0], &got, 1) == 1);  // the first record is in (or the child died: then 0)
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + 15 * round));
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
  }
  auto store = open_store(db);
  auto all = store->list_servers(true);
  REQUIRE(all);
  CHECK_FALSE(all->empty());
  for (const auto& s : *all) {
    auto ev = store->events(s.id);
    REQUIRE(ev);
    REQUIRE_FALSE(ev->empty());
    // The server's status and its last ledger event were written in one transaction.
    CHECK(ev->back().status == s.status);
    CHECK(ev->size() <= 2);
  }
  // And it is still writable.
  CHECK(store->insert_server(sample("after", k_t0)));
}

TEST_CASE("StateStore: jobs with their --then steps, one owner carries the steps out", "[providers][state_store]")
{
  TempDir dir;
  auto store = open_store(dir.path / "state.db");
  auto server = store->insert_server(sample("train", k_t0));
  REQUIRE(server);
  JobRecord j;
  j.job_id = "20260101-000000-0001";
  j.server_id = server->id;
  j.target = "root@10.0.0.1:22";
  j.command = "python train.py";
  j.workdir = "~/gpurent/proj";
  j.started = k_t0 + 10s;
  j.log = "~/.gpurent/jobs/20260101-000000-0001/log";
  j.steps = {JobStep{"backup:out:/home/me/out", "pending", ""}, JobStep{"down:destroy", "pending", ""}};
  auto added = store->add_job(j);
  REQUIRE(added);
  CHECK(added->id > 0);
  CHECK(store->add_job(j).error().code == Errc::refused);  // the same job on the same server
  JobRecord on_host = j;
  on_host.server_id = std::nullopt;
  on_host.target = "me@other:2222";
  REQUIRE(store->add_job(on_host));

  auto listed = store->jobs("root@10.0.0.1:22");
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  const JobRecord& got = listed->front();
  CHECK(got.job_id == j.job_id);
  CHECK(got.server_id == server->id);
  CHECK(got.command == j.command);
  CHECK(got.state == "starting");
  CHECK_FALSE(got.exit_code.has_value());
  CHECK(got.started == j.started);
  CHECK_FALSE(got.ended.has_value());
  CHECK_FALSE(got.oom_json.has_value());
  CHECK(got.steps == j.steps);
  CHECK(store->jobs("me@other:2222")->front().server_id == std::nullopt);
  CHECK(store->jobs_with_pending_steps()->size() == 2);

  // Only one gpurent carries the steps out; a holder that is gone can be replaced.
  CHECK(*store->claim_job_steps(got.id, "pid:1", {}));
  CHECK(*store->claim_job_steps(got.id, "pid:1", {}));  // the holder again
  CHECK_FALSE(*store->claim_job_steps(got.id, "pid:2", [](std::string_view) { return false; }));
  CHECK(*store->claim_job_steps(got.id, "pid:2", [](std::string_view h) { return h == "pid:1"; }));
  REQUIRE(store->release_job_steps(got.id, "pid:1"));  // not the holder: no effect
  CHECK_FALSE(*store->claim_job_steps(got.id, "pid:3", {}));
  REQUIRE(store->release_job_steps(got.id, "pid:2"));
  CHECK(*store->claim_job_steps(got.id, "pid:3", {}));

  JobRecord done = got;
  done.state = "failed";
  done.exit_code = 1;
  done.ended = k_t0 + 70s;
  done.oom_json = R"({"engine":"pytorch"})";
  done.steps[0].state = "done";
  done.steps[1].state = "failed";
  done.steps[1].detail = "refused: \"the backup\" failed";
  REQUIRE(store->update_job(done));
  const JobRecord again = store->jobs("root@10.0.0.1:22")->front();
  CHECK(again.state == "failed");
  CHECK(again.exit_code == 1);
  CHECK(again.ended == done.ended);
  CHECK(again.oom_json == done.oom_json);
  CHECK(again.steps == done.steps);
  CHECK(again.steps_owner == "pid:3");
  CHECK(store->jobs_with_pending_steps()->size() == 1);  // only the --host job still has pending steps
  JobRecord ghost = done;
  ghost.id = 999;
  CHECK(store->update_job(ghost).error().code == Errc::not_found);
}

TEST_CASE("StateStore: the directories push/run used on a server, and the pending backup plan", "[providers][state_store][backup_plan]")
{
  TempDir dir;
  const auto db = dir.path / "state.db";
  auto store = open_store(db);
  CHECK(store->schema_version() == 8);  // 8: push directories and backup plans
  const auto a = store->insert_server(sample("a", k_t0));
  const auto b = store->insert_server(sample("b", k_t0));
  REQUIRE(a);
  REQUIRE(b);

  SECTION("push directories: one row per directory, the first push kept, the latest moved")
  {
    CHECK(store->push_dirs(a->id)->empty());
    REQUIRE(store->record_push_dir(a->id, "~/gpurent/train", k_t0 + 10s));
    REQUIRE(store->record_push_dir(a->id, "/workspace/src", k_t0 + 20s));
    REQUIRE(store->record_push_dir(a->id, "~/gpurent/train", k_t0 + 30s));
    REQUIRE(store->record_push_dir(b->id, "~/gpurent/other", k_t0 + 5s));
    const auto dirs = store->push_dirs(a->id);
    REQUIRE(dirs);
    REQUIRE(dirs->size() == 2);
    CHECK((*dirs)[0].remote_dir == "~/gpurent/train");
    CHECK((*dirs)[0].first_at == k_t0 + 10s);
    CHECK((*dirs)[0].last_at == k_t0 + 30s);
    CHECK((*dirs)[0].server_id == a->id);
    CHECK((*dirs)[1].remote_dir == "/workspace/src");
    CHECK(store->push_dirs(b->id)->size() == 1);
  }
  SECTION("backup plans: recorded, replaced, read back exactly, dropped; one per server")
  {
    CHECK_FALSE(store->backup_plan(a->id)->has_value());
    const BackupPlanRecord plan{a->id, {"~/gpurent/train", "/workspace", "it's \"odd\"\nname"}, "/home/u/bk/a",
                                {"bigckpt"}, "./bk/a", k_t0 + 40s};
    REQUIRE(store->put_backup_plan(plan));
    auto got = store->backup_plan(a->id);
    REQUIRE(got);
    REQUIRE(got->has_value());
    CHECK(**got == plan);
    CHECK_FALSE(store->backup_plan(b->id)->has_value());
    BackupPlanRecord other = plan;
    other.remote_paths = {"/workspace"};
    other.given_paths.clear();
    other.given_to.clear();
    REQUIRE(store->put_backup_plan(other));
    CHECK(**store->backup_plan(a->id) == other);
    // Kept across a reopen (an interrupted `down` is resumed by the next process).
    store.reset();
    store = open_store(db);
    CHECK(**store->backup_plan(a->id) == other);
    REQUIRE(store->clear_backup_plan(a->id));
    CHECK_FALSE(store->backup_plan(a->id)->has_value());
    REQUIRE(store->clear_backup_plan(a->id));  // nothing to drop: fine
  }
  SECTION("a damaged plan row is an error, not an exception")
  {
    REQUIRE(store->put_backup_plan(BackupPlanRecord{a->id, {"x"}, "/d", {}, "", k_t0}));
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "UPDATE backup_plans SET remote_paths_json='[1,2]'", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
    const auto got = store->backup_plan(a->id);
    REQUIRE_FALSE(got);
    CHECK(got.error().message.find("damaged") != std::string::npos);
  }
}
