// SPDX-License-Identifier: MIT
#pragma once
// StateStore port: the record of rented servers, their billing ledger, their backups, what
// `gpurent doctor` saw on them and the jobs `gpurent run` started.
// One SQLite implementation (providers/state/sqlite_*.cpp, in the IO module); the
// rest of gpurent speaks only these structs.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_observation.hpp"
#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/billing.hpp"

namespace gpurent {

// Where a tracked server is in its life. Every change is a ledger event with its time.
enum class ServerStatus {
  creating,      // recorded before the create call; the provider may or may not have it
  provisioning,  // the provider answered with an id; not yet running / SSH not yet seen
  running,
  stopped,
  hibernated,
  destroying,    // a destroy request was sent (or is about to be); not yet confirmed gone
  destroyed,     // confirmed gone by the provider (or by the user for attached servers): ledger closed
  gone,          // the provider no longer has it, found by `status --refresh`: ledger closed
  failed,        // the create call failed and nothing was created: ledger closed, nothing billed
  destroy_failed,   // the destroy request failed and the provider still has it: billed, retried by
                    // the next `down --destroy` or `status --refresh`
  release_pending,  // attached server backed up for destroying: billed until the user releases it
                    // in the console (`down NAME --released`) or gpurent sees the host gone
  offline,          // the provider's host is disconnected; the provider bills nothing meanwhile
                    // (Vast: "not charged active rental or storage costs ... offline")
};

[[nodiscard]] std::string_view to_string(ServerStatus s) noexcept;
[[nodiscard]] std::optional<ServerStatus> parse_server_status(std::string_view s) noexcept;
// destroyed, gone and failed close the ledger.
[[nodiscard]] constexpr bool is_closed(ServerStatus s) noexcept
{
  return s == ServerStatus::destroyed || s == ServerStatus::gone || s == ServerStatus::failed;
}

// Billing rules as they were when the server was rented (prices and rules change over time).
struct RentTerms {
  MicroUsd price_per_hour;  // whole server, in the state `running`
  std::string currency = "USD";
  BillingPolicy billing;    // increment, minimum, charged at deploy (spot billing when spot)
  StateRule stopped;
  StateRule hibernated;
  std::string destroy_loses;
  std::string workspace_dir;
};

struct ServerRecord {
  std::int64_t id = 0;        // local row id (assigned by the store)
  std::string name;           // unique among servers whose ledger is open
  std::string provider;
  std::string provider_id;    // empty until the provider answered the create call
  std::string card;
  std::uint32_t gpus = 1;
  bool spot = false;
  bool attached = false;      // rented elsewhere and tracked with `gpurent attach`
  std::string region;
  RentTerms terms;
  std::string user = "root";  // SSH
  std::string host;
  std::uint16_t port = 22;
  std::string host_key;       // "<type> <base64>" as seen or as reported by the provider
  ServerStatus status = ServerStatus::creating;
  TimePoint created_at{};
  TimePoint status_since{};
  TimePoint last_change{};    // last change on the server (state change, ssh session): backups must be newer
  // SSH settings given at attach/up, used again by backup, ssh, doctor and down (empty: defaults).
  std::string identity_file;     // private key path
  std::string known_hosts_file;  // known-hosts file
  // What `status --refresh` last heard from the provider: its own word for the state, and a
  // state that needs attention (Instance::trouble, e.g. "unhealthy") with its account of it.
  std::string provider_state;
  std::string trouble;
  std::string trouble_detail;
  // release_pending: when SSH to the host first failed (refused/unreachable) with no success since.
  std::optional<TimePoint> unreachable_since;
  // The server group it belongs to (`up --nodes N --group NAME`, `attach --group NAME`; empty:
  // none) and its node rank there: 0 for the member rented or attached first.
  std::string group;
  std::uint32_t group_rank = 0;
};

struct LedgerEvent {
  std::int64_t id = 0;
  std::int64_t server_id = 0;
  TimePoint at{};
  ServerStatus status = ServerStatus::creating;
  std::string note;
};

struct BackupRecord {
  std::int64_t id = 0;
  std::int64_t server_id = 0;
  TimePoint at{};
  std::string manifest;  // path of the manifest written by the backup
  bool verified = false;
  std::uint64_t files = 0;
  Bytes bytes;
};

// A directory `push` or `run` put files in on a tracked server (remote_dir as pushed to:
// "~/gpurent/NAME" or an absolute path): what `down --destroy` backs up besides the workspace.
struct PushDirRecord {
  std::int64_t server_id = 0;
  std::string remote_dir;
  TimePoint first_at{};  // the first push there
  TimePoint last_at{};   // the latest
};

// The backup `down --destroy` is about to run (recorded before it starts, dropped once it
// finished or failed): an interrupted one is resumed as it was, never replanned.
struct BackupPlanRecord {
  std::int64_t server_id = 0;
  std::vector<std::string> remote_paths;  // exactly what the backup copies, in order
  std::string dest;                       // the local destination (absolute)
  std::vector<std::string> given_paths;   // --path as the user gave them
  std::string given_to;                   // --to as the user gave it ("" when not given)
  TimePoint started_at{};
  auto operator<=>(const BackupPlanRecord&) const = default;
};

// One `--then` step of a job and how far it got.
struct JobStep {
  std::string step;    // as given: "backup:REMOTE[:LOCAL]" (LOCAL made absolute), "down:destroy"
  std::string state = "pending";  // pending, running, done, failed, skipped
  std::string detail;  // what it did, or why it failed
  auto operator<=>(const JobStep&) const = default;
};

// A job started by `gpurent run`. The server keeps the authoritative record (~/.gpurent/jobs);
// this one remembers what the server cannot: the steps to carry out after it, and its OOM report.
struct JobRecord {
  std::int64_t id = 0;                    // local row id (assigned by the store)
  std::string job_id;                     // the id on the server
  std::optional<std::int64_t> server_id;  // the tracked server; nullopt for --host
  std::string target;                     // user@host:port
  std::string command;
  std::string workdir;
  std::string state = "starting";         // starting, running, succeeded, failed, lost
  std::optional<int> exit_code;
  TimePoint started{};
  std::optional<TimePoint> ended;
  std::string log;                        // the log's path on the server
  std::optional<std::string> oom_json;    // `gpurent oom --json` of its log (a failed job that ran out of memory)
  std::vector<JobStep> steps;
  std::string steps_owner;                // the gpurent process carrying out the steps, empty when none
  std::string git_commit;                 // the commit of the pushed tree (git rev-parse HEAD); empty: none or not a repository
  bool git_dirty = false;                 // the pushed tree had uncommitted changes to tracked files
};

// The autostop watchdog `gpurent autostop` armed on a tracked server (one per server), and the
// last state gpurent read from it (so `status` can say it without SSH).
struct AutostopRecord {
  std::int64_t server_id = 0;
  std::string settings_json;  // what was armed (cli/autostop_support.cpp writes and reads it)
  TimePoint armed_at{};
  bool active = true;         // false after --cancel, or once the watchdog ended
  std::string last_json;      // the last view read from the server; empty when never read
  std::optional<TimePoint> read_at;
};

class StateStore {
public:
  virtual ~StateStore() = default;
  [[nodiscard]] virtual int schema_version() const = 0;
  // Records a new server and its first ledger event (record.status at record.created_at), in one
  // transaction. Errc::refused when an open server already has that name.
  [[nodiscard]] virtual Result<ServerRecord> insert_server(const ServerRecord& record) = 0;
  // The server with that name whose ledger is open, else the most recent closed one.
  [[nodiscard]] virtual Result<std::optional<ServerRecord>> find_server(std::string_view name) = 0;
  [[nodiscard]] virtual Result<std::optional<ServerRecord>> get_server(std::int64_t id) = 0;
  [[nodiscard]] virtual Result<std::vector<ServerRecord>> list_servers(bool include_closed) = 0;
  [[nodiscard]] virtual Result<void> set_provider_id(std::int64_t id, std::string_view provider_id) = 0;
  [[nodiscard]] virtual Result<void> set_connection(std::int64_t id, std::string_view user, std::string_view host,
                                                    std::uint16_t port, std::string_view host_key) = 0;
  // The rent terms (price and state rules) as the provider reported them once the server existed.
  [[nodiscard]] virtual Result<void> set_terms(std::int64_t id, const RentTerms& terms) = 0;
  [[nodiscard]] virtual Result<void> set_ssh_files(std::int64_t id, std::string_view identity_file,
                                                   std::string_view known_hosts_file) = 0;
  [[nodiscard]] virtual Result<void> set_provider_state(std::int64_t id, std::string_view provider_state,
                                                        std::string_view trouble, std::string_view detail) = 0;
  [[nodiscard]] virtual Result<void> set_unreachable_since(std::int64_t id, std::optional<TimePoint> since) = 0;
  // Appends a ledger event and moves the server to `status` (one transaction). A server whose
  // ledger is closed cannot change state (Errc::refused). Also moves last_change.
  [[nodiscard]] virtual Result<void> record_state(std::int64_t id, ServerStatus status, TimePoint at,
                                                  std::string_view note) = 0;
  [[nodiscard]] virtual Result<void> mark_changed(std::int64_t id, TimePoint at) = 0;
  [[nodiscard]] virtual Result<std::vector<LedgerEvent>> events(std::int64_t id) = 0;
  [[nodiscard]] virtual Result<BackupRecord> add_backup(const BackupRecord& backup) = 0;
  [[nodiscard]] virtual Result<std::optional<BackupRecord>> latest_backup(std::int64_t server_id) = 0;
  // Records what `gpurent doctor` saw on a tracked server (the id is assigned by the store).
  [[nodiscard]] virtual Result<DoctorObservation> add_doctor_observation(const DoctorObservation& observation) = 0;
  // The server's doctor observations taken at or after `since`, oldest first.
  [[nodiscard]] virtual Result<std::vector<DoctorObservation>> doctor_observations(std::int64_t server_id,
                                                                                   TimePoint since) = 0;
  // Records a job before it is started (the id is assigned by the store). Errc::refused when
  // the server already has a recorded job with that id.
  [[nodiscard]] virtual Result<JobRecord> add_job(const JobRecord& job) = 0;
  // Stores state, exit_code, ended, log, oom_json and steps of the job with job.id.
  [[nodiscard]] virtual Result<void> update_job(const JobRecord& job) = 0;
  // The jobs recorded for one server (user@host:port), oldest first.
  [[nodiscard]] virtual Result<std::vector<JobRecord>> jobs(std::string_view target) = 0;
  // Jobs with a step still pending, oldest first (what `status` checks on).
  [[nodiscard]] virtual Result<std::vector<JobRecord>> jobs_with_pending_steps() = 0;
  // Makes `owner` the one who carries out the job's steps, in one transaction: true when nobody
  // held them or `holder_gone(holder)` says the holder is gone; false when someone else does.
  [[nodiscard]] virtual Result<bool> claim_job_steps(std::int64_t id, std::string_view owner,
                                                     const std::function<bool(std::string_view)>& holder_gone) = 0;
  [[nodiscard]] virtual Result<void> release_job_steps(std::int64_t id, std::string_view owner) = 0;
  // Records (replaces) the autostop of a server; the one recorded for it, if any.
  [[nodiscard]] virtual Result<void> put_autostop(const AutostopRecord& autostop) = 0;
  [[nodiscard]] virtual Result<std::optional<AutostopRecord>> autostop(std::int64_t server_id) = 0;
  // Records that `push`/`run` used `remote_dir` on the server at `at` (first_at kept, last_at moved).
  [[nodiscard]] virtual Result<void> record_push_dir(std::int64_t server_id, std::string_view remote_dir, TimePoint at) = 0;
  // The server's push directories, the first pushed to first.
  [[nodiscard]] virtual Result<std::vector<PushDirRecord>> push_dirs(std::int64_t server_id) = 0;
  // Records (replaces) the server's pending backup plan; the one recorded, if any; drops it.
  [[nodiscard]] virtual Result<void> put_backup_plan(const BackupPlanRecord& plan) = 0;
  [[nodiscard]] virtual Result<std::optional<BackupPlanRecord>> backup_plan(std::int64_t server_id) = 0;
  [[nodiscard]] virtual Result<void> clear_backup_plan(std::int64_t server_id) = 0;
};

// $GPURENT_STATE_DIR, else $XDG_STATE_HOME/gpurent, else $HOME/.local/state/gpurent.
// `env` returns an unset or empty variable as nullopt.
[[nodiscard]] Result<std::filesystem::path> state_dir(
    const std::function<std::optional<std::string>(const std::string&)>& env);

// Seconds since the Unix epoch, as the store keeps times. from_unix saturates at the clock's ends
// (TimePoint::min/max: the years 1677 and 2262).
[[nodiscard]] std::int64_t to_unix(TimePoint t) noexcept;
[[nodiscard]] TimePoint from_unix(std::int64_t s) noexcept;

}  // namespace gpurent

// The IO module's factory (providers/state/sqlite_state_store.cpp): opens or creates the
// database (WAL, busy timeout, migrations) and its directory (mode 0700).
extern "C" void gpurent_open_state_store(const std::filesystem::path* db,
                                         gpurent::Result<std::unique_ptr<gpurent::StateStore>>* out);
