// SPDX-License-Identifier: MIT
#include "cli/job_support.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "cli/app.hpp"
#include "cli/job_ids.hpp"
#include "cli/job_steps.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "common/rounding.hpp"
#include "common/units.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

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

nlohmann::json text_json(const std::string& s)
{
  // Local and remote names may not be UTF-8: keep the document valid.
  return nlohmann::json::parse(nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::pair<std::string, std::vector<std::string>> name_and_rest(std::vector<std::string> args, const SshFlags& flags)
{
  std::string name;
  if (flags.host.empty() && !args.empty()) {
    name = std::move(args.front());
    args.erase(args.begin());
  }
  return {std::move(name), std::move(args)};
}

Result<std::vector<std::pair<std::string, std::string>>> parse_env(const std::vector<std::string>& kvs)
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : kvs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return fail(Errc::usage, "--env " + kv + ": write it as NAME=VALUE");
    }
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

std::string new_job_id(Services& s)
{
  std::random_device rd;
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(s.clock.now().time_since_epoch()).count();
  return make_job_id(now, rd());
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

namespace {

std::vector<std::string> numbered_ids(const std::vector<JobRecord>& recorded, const std::vector<RemoteJob>& listed)
{
  std::vector<JobStartTime> all;
  for (const auto& j : recorded) {
    all.push_back({j.job_id, to_unix(j.started)});
  }
  for (const auto& r : listed) {
    if (std::none_of(recorded.begin(), recorded.end(), [&](const JobRecord& j) { return j.job_id == r.id; })) {
      all.push_back({r.id, r.started.value_or(0)});
    }
  }
  return number_jobs(std::move(all));
}

// Records that gpurent stopped the job: a local record, made from the server's listing when
// the job was started elsewhere, in state cancelled.
void record_cancelled(Services& s, const JobServer& server, SshSession& session, const std::string& id)
{
  auto store = s.state();
  if (!store) {
    return;
  }
  auto local = (*store)->jobs(server.target);
  if (!local) {
    return;
  }
  const auto it = std::find_if(local->begin(), local->end(), [&](const JobRecord& j) { return j.job_id == id; });
  if (it != local->end()) {
    JobRecord j = *it;
    j.state = "cancelled";
    j.ended = j.ended.value_or(s.clock.now());
    (void)(*store)->update_job(j);
    return;
  }
  auto listed = list_server_jobs(session, id);
  if (!listed || listed->empty()) {
    return;
  }
  const RemoteJob& r = listed->front();
  JobRecord j;
  j.job_id = r.id;
  j.server_id = server.dest.server_id != 0 ? std::optional<std::int64_t>(server.dest.server_id) : std::nullopt;
  j.target = server.target;
  j.command = r.command;
  j.workdir = r.workdir;
  j.started = r.started ? from_unix(*r.started) : s.clock.now();
  j.log = job_log_path(r.id);
  auto added = (*store)->add_job(j);
  if (added) {
    added->state = "cancelled";
    added->exit_code = r.exit_code;
    added->ended = r.ended ? from_unix(*r.ended) : s.clock.now();
    (void)(*store)->update_job(*added);
  }
}

}  // namespace

Result<std::string> resolve_job(Services& s, const JobServer& server, const std::vector<RemoteJob>& listed, std::string_view ref)
{
  std::vector<JobRecord> recorded;
  if (auto store = s.state()) {
    if (auto local = (*store)->jobs(server.target)) {
      recorded = std::move(*local);
    }
  }
  return resolve_job_ref(ref, numbered_ids(recorded, listed), server.dest.name);
}

std::optional<std::size_t> job_number(const std::vector<JobRecord>& recorded, std::string_view id)
{
  return job_number_of(numbered_ids(recorded, {}), id);
}

std::map<std::string, std::size_t, std::less<>> job_numbers(const std::vector<JobRecord>& recorded)
{
  std::map<std::string, std::size_t, std::less<>> out;
  for (auto& id : numbered_ids(recorded, {})) {
    out.emplace(std::move(id), out.size() + 1);
  }
  return out;
}

std::vector<JobRecord> in_start_order(std::vector<JobRecord> recorded)
{
  const auto numbers = job_numbers(recorded);
  std::stable_sort(recorded.begin(), recorded.end(),
                   [&](const JobRecord& a, const JobRecord& b) { return numbers.at(a.job_id) < numbers.at(b.job_id); });
  return recorded;
}

std::optional<std::size_t> recorded_job_number(Services& s, const std::string& target, std::string_view id)
{
  auto store = s.state();
  if (!store) {
    return std::nullopt;
  }
  auto local = (*store)->jobs(target);
  return local ? job_number(*local, id) : std::nullopt;
}

Result<std::string> stop_job(Services& s, const JobServer& server, SshSession& session, const std::string& ref, unsigned grace)
{
  TRY_ASSIGN(const auto all, list_server_jobs(session));
  TRY_ASSIGN(const std::string id, resolve_job(s, server, own_jobs(server, all), ref));
  s.err << "gpurent: stopping job " << id << " on " << server.dest.name << " (SIGTERM, then SIGKILL after " << grace << " s)\n";
  TRY_ASSIGN(const auto r, session.exec(job_kill_command(id, grace), {}));
  TRY_ASSIGN(const KillOutcome k, parse_job_kill(r.out));
  switch (k) {
  case KillOutcome::missing: return fail(Errc::not_found, "the server has no job " + id + "; see `gpurent jobs " + server.dest.name + "`");
  case KillOutcome::not_started: return fail(Errc::unavailable, "job " + id + " has not started its command yet; try again in a moment");
  case KillOutcome::already_ended: s.err << "gpurent: job " << id << " had already ended\n"; break;
  case KillOutcome::stopped:
    s.err << "gpurent: job " << id << " stopped\n";
    record_cancelled(s, server, session, id);
    break;
  case KillOutcome::killed:
    s.err << "gpurent: job " << id << " did not stop within " << grace << " s: killed\n";
    record_cancelled(s, server, session, id);
    break;
  }
  return id;
}

std::string job_log_path(std::string_view id)
{
  return "~/.gpurent/jobs/" + std::string(id) + "/log";
}

bool job_ended(const JobRecord& j)
{
  return j.state == "succeeded" || j.state == "failed" || j.state == "cancelled" || j.state == "lost";
}

nlohmann::json job_json(const JobRecord& j, std::optional<std::size_t> number)
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
          {"number", number ? nlohmann::json(*number) : nlohmann::json(nullptr)},
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

std::vector<RemoteJob> own_jobs(const JobServer& server, std::vector<RemoteJob> listed)
{
  if (server.record && !server.record->group.empty()) {
    std::erase_if(listed, [&](const RemoteJob& j) { return other_nodes_job(j.id, server.record->group_rank); });
  }
  return listed;
}

Result<SettledJobs> settle_jobs(Services& s, const JobServer& server, SshSession& session, const std::vector<RemoteJob>& listed)
{
  const std::vector<RemoteJob> remote = own_jobs(server, listed);
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
      // Stopped by gpurent (`jobs --kill`, `run --stop`): cancelled, whatever signal ended it.
      next.state = j.state == "cancelled" ? j.state : std::string(to_string(job_state(r)));
      next.exit_code = r.exit_code;
      if (r.started) {
        next.started = from_unix(*r.started);
      }
      next.ended = r.ended ? std::optional<TimePoint>(from_unix(*r.ended)) : std::nullopt;
      if ((next.state == "lost" || next.state == "cancelled") && !next.ended) {
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
  out.jobs = in_start_order(std::move(local));
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
