// SPDX-License-Identifier: MIT
#include "cli/job_support.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sstream>

#include "cli/app.hpp"
#include "cli/job_steps.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "common/rounding.hpp"
#include "common/units.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

constexpr std::size_t k_largest_shown = 10;

nlohmann::json text_json(const std::string& s)
{
  // Local and remote names may not be UTF-8: keep the document valid.
  return nlohmann::json::parse(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// The progress bar of a push on stderr: only on a TTY, never under --json.
class PushBar final : public PushObserver {
public:
  PushBar(Services& s, bool enabled) : m_s(s), m_enabled(enabled), m_start(std::chrono::steady_clock::now()) {}
  void on_progress(std::uint64_t done, std::uint64_t total) override
  {
    if (!m_enabled || total == 0) {
      return;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    m_s.err << fmt::format("\rpushing {} / {}  {}/s\x1b[K", format_bytes(done), format_bytes(total), format_bytes(static_cast<std::uint64_t>(rate)))
            << std::flush;
    m_drawn = true;
  }
  void on_warning(std::string_view message) override
  {
    clear();
    report_warning(m_s, message);
  }
  void clear()
  {
    if (m_drawn) {
      m_s.err << "\r\x1b[K" << std::flush;
      m_drawn = false;
    }
  }

private:
  Services& m_s;
  bool m_enabled;
  bool m_drawn = false;
  std::chrono::steady_clock::time_point m_start;
};

// "pid:N" of this process; another gpurent's claim is gone when its process is.
std::string my_owner()
{
  return "pid:" + std::to_string(::getpid());
}

bool owner_gone(std::string_view owner)
{
  if (!owner.starts_with("pid:")) {
    return true;
  }
  const long pid = std::strtol(std::string(owner.substr(4)).c_str(), nullptr, 10);
  return pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
}

bool has_pending(const JobRecord& j)
{
  return std::any_of(j.steps.begin(), j.steps.end(), [](const JobStep& st) { return st.state == "pending" || st.state == "running"; });
}

// Claims and carries out the steps of one ended job. False when a step failed.
bool carry_out_steps(Services& s, StateStore& store, const JobServer& server, JobRecord& j)
{
  if (!job_ended(j) || !has_pending(j)) {
    return true;
  }
  const std::string me = my_owner();
  auto claimed = store.claim_job_steps(j.id, me, owner_gone);
  if (!claimed || !*claimed) {
    return true;  // another gpurent carries them out
  }
  const bool ok = run_then_steps(s, store, server, j);
  (void)store.release_job_steps(j.id, me);
  return ok;
}

}  // namespace

std::pair<std::string, std::vector<std::string>> name_and_rest(std::vector<std::string> args, const SshFlags& flags)
{
  std::string name;
  if (flags.host.empty() && !args.empty()) {
    name = std::move(args.front());
    args.erase(args.begin());
  }
  return {std::move(name), std::move(args)};
}

Result<JobServer> open_job_server(Services& s, const std::string& name, const SshFlags& flags)
{
  JobServer server;
  server.flags = flags;
  TRY_ASSIGN(server.options, make_ssh_options(s, flags));
  TRY_ASSIGN(server.dest, resolve_destination(s, name, flags, server.options));
  if (server.dest.server_id != 0) {
    TRY_ASSIGN(StateStore * store, s.state());
    TRY_ASSIGN(server.record, store->get_server(server.dest.server_id));
  }
  server.target = to_string(server.dest.target);
  return server;
}

Result<std::unique_ptr<SshSession>> connect_job_server(Services& s, const JobServer& server)
{
  return connect_ssh(s, server.dest.target, server.options);
}

std::string default_push_dir(const std::filesystem::path& local)
{
  std::error_code ec;
  auto abs = std::filesystem::weakly_canonical(std::filesystem::absolute(local), ec);
  std::string base = (ec ? local : abs).filename().string();
  if (base.empty() || base == "." || base == "..") {
    base = "root";
  }
  return "~/gpurent/" + base;
}

Result<PushReport> push_to_server(Services& s, const JobServer& server, SshSession& session, const PushSettings& p)
{
  PushRequest req;
  req.local_root = p.local;
  req.remote_dir = p.to.empty() ? default_push_dir(p.local) : p.to;
  req.walk.excludes = p.excludes;
  if (const auto n = s.getenv("GPURENT_PUSH_SESSIONS")) {
    req.max_sessions = static_cast<std::size_t>(std::max(1L, std::strtol(n->c_str(), nullptr, 10)));
  }
  PushBar bar(s, s.stderr_tty && !s.global.json);
  const SessionFactory more = [&s, &server]() { return connect_job_server(s, server); };
  auto report = run_push(session, more, req, bar);
  bar.clear();
  return report;
}

nlohmann::json push_report_json(const PushReport& r)
{
  nlohmann::json largest = nlohmann::json::array();
  for (const auto& sk : largest_skipped(r.tree, k_largest_shown)) {
    largest.push_back({{"path", text_json(sk.path)},
                       {"bytes", sk.bytes},
                       {"files", sk.files},
                       {"directory", sk.directory},
                       {"exact", sk.exact},
                       {"reason", text_json(sk.reason)}});
  }
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : r.failed) {
    failed.push_back({{"path", text_json(f.path)}, {"error", text_json(f.error)}});
  }
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : r.warnings) {
    warnings.push_back(text_json(w));
  }
  return {{"remote_dir", text_json(r.remote_dir)},
          {"files_total", r.files_total},
          {"files_sent", r.files_sent},
          {"bytes_total", r.bytes_total},
          {"bytes_sent", r.bytes_sent},
          {"skipped", {{"count", r.tree.skipped_files}, {"bytes", r.tree.skipped_bytes}, {"largest", largest}}},
          {"seconds", round_to_places(r.seconds, 3)},
          {"sessions", r.sessions},
          {"verified", r.verified},
          {"verify_method", r.verify_method},
          {"failed", failed},
          {"warnings", warnings}};
}

void print_push_report(std::ostream& o, const PushReport& r)
{
  const double mbps = r.seconds > 0 ? static_cast<double>(r.bytes_sent) / r.seconds / 1e6 : 0;
  o << "Pushed to " << r.remote_dir << "\n";
  o << fmt::format("  files     {} ({} sent, {} unchanged, {} failed)\n", r.files_total, r.files_sent,
                   r.files_total - std::min(r.files_total, r.files_sent + r.failed.size()), r.failed.size());
  o << fmt::format("  data      {} sent of {} in {:.1f} s ({:.0f} MB/s{})\n", format_bytes(r.bytes_sent), format_bytes(r.bytes_total), r.seconds,
                   mbps, r.sessions > 1 ? fmt::format(", {} connections", r.sessions) : std::string());
  std::string verified = "no, see the failures below";
  if (r.verified && r.files_sent == 0) {
    verified = "yes, nothing changed";
  } else if (r.verified) {
    verified = "yes, SHA-256 computed on the server (" + r.verify_method + ") matches every file sent";
  } else if (r.verify_method == "size-only") {
    verified = "by size only (no openssl, sha256sum or shasum on the server)";
  }
  o << "  verified  " << verified << "\n";
  if (r.tree.skipped_files > 0 || !r.tree.skipped.empty()) {
    o << fmt::format("  skipped   {} file(s), {} (.gitignore, .gpurentignore, --exclude); the largest:\n", r.tree.skipped_files,
                     format_bytes(r.tree.skipped_bytes));
    for (const auto& sk : largest_skipped(r.tree, k_largest_shown)) {
      o << fmt::format("    {:>10}  {}{}  ({})\n", (sk.exact ? "" : ">=") + format_bytes(sk.bytes), sk.path, sk.directory ? "/" : "", sk.reason);
    }
  }
  for (const auto& f : r.failed) {
    o << "  FAILED    " << f.path << ": " << f.error << "\n";
  }
}

std::optional<std::string> oom_diagnosis(Services& s, const std::string& log, const std::string& card, bool json)
{
  const auto run_oom = [&](bool with_card) -> std::optional<std::string> {
    std::ostringstream out;
    std::ostringstream err;
    std::istringstream in(log);
    Services sub{out, err, in, s.env, s.clock};
    sub.global.no_color = true;
    std::vector<std::string> args;
    if (json) {
      args.emplace_back("--json");
    }
    args.insert(args.end(), {"oom", "-"});
    if (with_card) {
      args.insert(args.end(), {"--card", card});
    }
    const int code = run_app(args, sub);
    if (code == exit_code_for(Errc::usage) && with_card) {
      return std::nullopt;  // a card oom does not know: try without
    }
    // 3: the job does not fit on that card, which is part of the diagnosis.
    if ((code != 0 && code != exit_code_for(Errc::refused)) || out.str().empty()) {
      return std::string();
    }
    return out.str();
  };
  auto r = card.empty() ? std::nullopt : run_oom(true);
  if (!r) {
    r = run_oom(false);
  }
  if (!r || r->empty()) {
    return std::nullopt;
  }
  return r;
}

Result<std::vector<RemoteJob>> list_server_jobs(SshSession& session, std::optional<std::string_view> id)
{
  TRY_ASSIGN(const auto r, session.exec(job_list_command(id), {}));
  return parse_job_list(r.out);
}

Result<void> stop_job(Services& s, const JobServer& server, SshSession& session, const std::string& id, unsigned grace)
{
  if (!is_valid_job_id(id)) {
    return fail(Errc::usage, "'" + id + "' is not a job id; see `gpurent jobs " + server.dest.name + "`");
  }
  s.err << "gpurent: stopping job " << id << " on " << server.dest.name << " (SIGTERM, then SIGKILL after " << grace << " s)\n";
  TRY_ASSIGN(const auto r, session.exec(job_kill_command(id, grace), {}));
  TRY_ASSIGN(const KillOutcome k, parse_job_kill(r.out));
  switch (k) {
  case KillOutcome::missing: return fail(Errc::not_found, "the server has no job " + id + "; see `gpurent jobs " + server.dest.name + "`");
  case KillOutcome::not_started: return fail(Errc::unavailable, "job " + id + " has not started its command yet; try again in a moment");
  case KillOutcome::already_ended: s.err << "gpurent: job " << id << " had already ended\n"; break;
  case KillOutcome::stopped: s.err << "gpurent: job " << id << " stopped\n"; break;
  case KillOutcome::killed: s.err << "gpurent: job " << id << " did not stop within " << grace << " s: killed\n"; break;
  }
  return {};
}

std::string job_log_path(std::string_view id)
{
  return "~/.gpurent/jobs/" + std::string(id) + "/log";
}

bool job_ended(const JobRecord& j)
{
  return j.state == "succeeded" || j.state == "failed" || j.state == "lost";
}

nlohmann::json job_json(const JobRecord& j)
{
  nlohmann::json then = nlohmann::json::array();
  for (const auto& st : j.steps) {
    then.push_back({{"step", text_json(st.step)}, {"state", st.state}, {"detail", text_json(st.detail)}});
  }
  nlohmann::json oom = nullptr;
  if (j.oom_json) {
    oom = nlohmann::json::parse(*j.oom_json, nullptr, false);
    if (oom.is_discarded()) {
      oom = nullptr;
    }
  }
  return {{"id", j.job_id},
          {"command", text_json(j.command)},
          {"workdir", text_json(j.workdir)},
          {"state", j.state == "starting" ? std::string("running") : j.state},
          {"exit_code", j.exit_code ? nlohmann::json(*j.exit_code) : nlohmann::json(nullptr)},
          {"started", iso_time(j.started)},
          {"ended", j.ended ? nlohmann::json(iso_time(*j.ended)) : nlohmann::json(nullptr)},
          {"log", j.log},
          {"oom", oom},
          {"then", then}};
}

Result<SettledJobs> settle_jobs(Services& s, const JobServer& server, SshSession& session, const std::vector<RemoteJob>& remote)
{
  TRY_ASSIGN(StateStore * store, s.state());
  TRY_ASSIGN(auto local, store->jobs(server.target));
  std::map<std::string, const RemoteJob*> by_id;
  for (const auto& r : remote) {
    by_id[r.id] = &r;
  }
  // Jobs only the server knows (started from another machine): recorded, without steps.
  for (const auto& r : remote) {
    if (std::none_of(local.begin(), local.end(), [&](const JobRecord& j) { return j.job_id == r.id; })) {
      JobRecord j;
      j.job_id = r.id;
      j.server_id = server.dest.server_id != 0 ? std::optional<std::int64_t>(server.dest.server_id) : std::nullopt;
      j.target = server.target;
      j.command = r.command;
      j.workdir = r.workdir;
      j.state = "running";
      j.started = r.started ? from_unix(*r.started) : s.clock.now();
      j.log = job_log_path(r.id);
      TRY_ASSIGN(j, store->add_job(j));
      local.push_back(std::move(j));
    }
  }
  SettledJobs out;
  const std::string card = server.record ? server.record->card : std::string();
  for (auto& j : local) {
    const auto it = by_id.find(j.job_id);
    const bool was_ended = job_ended(j);
    JobRecord next = j;
    if (it != by_id.end()) {
      const RemoteJob& r = *it->second;
      next.state = std::string(to_string(job_state(r)));
      next.exit_code = r.exit_code;
      if (r.started) {
        next.started = from_unix(*r.started);
      }
      next.ended = r.ended ? std::optional<TimePoint>(from_unix(*r.ended)) : std::nullopt;
      if (next.state == "lost" && !next.ended) {
        next.ended = s.clock.now();
      }
    } else if (!was_ended) {
      next.state = "lost";  // the server no longer has it
      next.ended = s.clock.now();
    }
    if (!was_ended && next.state == "failed" && !next.oom_json) {
      auto tail = session.exec(job_log_tail_command(j.job_id, k_oom_log_tail), {});
      if (tail && tail->exit_status == 0) {
        next.oom_json = oom_diagnosis(s, tail->out, card, true);
      }
    }
    if (next.state != j.state || next.exit_code != j.exit_code || next.ended != j.ended || next.oom_json != j.oom_json ||
        next.started != j.started) {
      TRY(store->update_job(next));
      j = std::move(next);
    }
    if (!carry_out_steps(s, *store, server, j)) {
      out.steps_failed = true;
    }
  }
  out.jobs = std::move(local);
  return out;
}

void settle_pending_steps(Services& s, StateStore& store)
{
  auto pending = store.jobs_with_pending_steps();
  if (!pending || pending->empty()) {
    return;
  }
  std::set<std::int64_t> servers;
  for (const auto& j : *pending) {
    if (j.server_id) {
      servers.insert(*j.server_id);
    }
  }
  for (const auto id : servers) {
    auto rec = store.get_server(id);
    if (!rec || !*rec || (*rec)->status != ServerStatus::running) {
      continue;  // stopped or released: nothing answers (its jobs are settled when it runs again)
    }
    auto server = open_job_server(s, (*rec)->name, SshFlags{});
    auto session = server ? connect_job_server(s, *server) : Result<std::unique_ptr<SshSession>>(std::unexpected(server.error()));
    auto listed = session ? list_server_jobs(**session) : Result<std::vector<RemoteJob>>(std::unexpected(session.error()));
    auto settled = listed ? settle_jobs(s, *server, **session, *listed) : Result<SettledJobs>(std::unexpected(listed.error()));
    if (!settled) {
      report_warning(s, (*rec)->name + ": cannot check its jobs' --then steps: " + settled.error().message);
    }
  }
}

}  // namespace gpurent
