// SPDX-License-Identifier: MIT
// `gpurent jobs NAME [--json] [--kill JOB]`: the jobs on a server, numbered #1, #2, ... in start
// order, and their states (a job the server no longer knows is lost, one gpurent stopped is
// cancelled), with the out-of-memory diagnosis of failed ones and their --then steps, which it
// carries out for jobs that ended. A server that cannot be reached: the jobs on record (exit 4).
#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/commands.hpp"
#include "common/clock.hpp"
#include "cli/group_support.hpp"
#include "cli/job_support.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
namespace {

struct JobsCommandOptions {
  std::string name;
  std::string kill;
  unsigned grace = 10;
  SshFlags ssh;
};

std::string short_command(const std::string& c)
{
  std::string one;
  for (const char ch : c) {
    one.push_back(ch == '\n' ? ';' : ch);
  }
  return one.size() > 60 ? one.substr(0, 57) + "..." : one;
}

void print_jobs_text(Services& s, const std::vector<JobRecord>& jobs)
{
  if (jobs.empty()) {
    s.out << "no jobs\n";
    return;
  }
  const auto numbers = job_numbers(jobs);
  s.out << fmt::format("{:>3}  {:<22} {:<10} {:>4}  {:<20}  {:<20}  {}\n", "#", "ID", "STATE", "EXIT", "STARTED", "ENDED", "COMMAND");
  for (const auto& j : jobs) {
    const std::string state = j.state == "starting" ? "running" : j.state;
    s.out << fmt::format("{:>3}  {:<22} {:<10} {:>4}  {:<20}  {:<20}  {}\n", numbers.at(j.job_id), j.job_id, state,
                         j.exit_code ? std::to_string(*j.exit_code) : std::string("-"), iso_time(j.started),
                         j.ended ? iso_time(*j.ended) : std::string("-"), short_command(j.command));
    if (!j.git_commit.empty()) {
      s.out << "    pushed from commit " << j.git_commit.substr(0, 12) << (j.git_dirty ? " with uncommitted changes" : "") << "\n";
    }
    if (j.oom_json) {
      const auto oom = nlohmann::json::parse(*j.oom_json, nullptr, false);
      std::string what = "ran out of GPU memory";
      if (!oom.is_discarded() && oom.is_object() && oom.contains("need_gib") && oom.contains("total_gib")) {
        what += fmt::format(": needed {:.2f} GiB of {:.2f} GiB", oom["need_gib"].get<double>(), oom["total_gib"].get<double>());
      }
      s.out << "    oom: " << what << " (the fixes: `gpurent jobs --json`, or `gpurent logs NAME " << j.job_id << " | gpurent oom`)\n";
    }
    for (const auto& st : j.steps) {
      s.out << "    then " << st.step << ": " << st.state << (st.detail.empty() ? "" : " (" + st.detail + ")") << "\n";
    }
  }
}

void print_jobs(Services& s, const std::vector<JobRecord>& jobs)
{
  if (s.global.json) {
    const auto numbers = job_numbers(jobs);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& j : jobs) {
      list.push_back(job_json(j, numbers.at(j.job_id)));
    }
    s.out << nlohmann::json{{"jobs", list}}.dump() << '\n';
  } else {
    print_jobs_text(s, jobs);
  }
}

// The server cannot be reached (stopped, or SSH fails): the jobs recorded here, as last seen.
// Exit 4 (partial): the list is shown but not checked.
Result<int> show_recorded_jobs(Services& s, const JobServer& server, const std::string& why)
{
  TRY_ASSIGN(StateStore * store, s.state());
  TRY_ASSIGN(auto recorded, store->jobs(server.target));
  print_jobs(s, in_start_order(std::move(recorded)));
  return report_error(s, Error{Errc::partial, "could not reach " + server.dest.name + " (" + why + "); the jobs above are as "
                                              "gpurent last saw them; run `gpurent jobs " + server.dest.name + "` again once it answers"});
}

Result<int> run_jobs_command(Services& s, const JobsCommandOptions& o)
{
  if (o.ssh.host.empty() && !o.name.empty() && o.kill.empty()) {
    // Recorded as not running (stopped, hibernated, gone): nothing answers there; what it ran
    // is on record here (under the address it had).
    TRY_ASSIGN(StateStore * store, s.state());
    TRY_ASSIGN(const auto found, store->find_server(o.name));
    if (found && !found->host.empty() && found->status != ServerStatus::running &&
        found->status != ServerStatus::provisioning && found->status != ServerStatus::creating) {
      JobServer server;
      server.dest.target = SshTarget{found->user.empty() ? "root" : found->user, found->host, found->port};
      server.dest.name = found->name;
      server.dest.server_id = found->id;
      server.record = *found;
      server.target = to_string(server.dest.target);
      const bool startable = found->status == ServerStatus::stopped || found->status == ServerStatus::hibernated;
      return show_recorded_jobs(s, server,
                                startable ? found->name + " is " + std::string(to_string(found->status)) + " (since " +
                                                utc_iso8601(found->status_since) + "); start it with `gpurent start " +
                                                found->name + "`"
                                          : "it is recorded as " + std::string(to_string(found->status)));
    }
  }
  TRY_ASSIGN(const JobServer server, open_job_server(s, o.name, o.ssh));
  auto connected = connect_job_server(s, server);
  if (!connected) {
    const Error& e = connected.error();
    if (o.kill.empty() && (e.code == Errc::unavailable || e.code == Errc::timeout)) {
      return show_recorded_jobs(s, server, e.message);
    }
    return std::unexpected(e);
  }
  const std::unique_ptr<SshSession>& session = *connected;
  int code = 0;
  if (!o.kill.empty()) {
    TRY(stop_job(s, server, *session, o.kill, o.grace));
  }
  TRY_ASSIGN(const auto listed, list_server_jobs(*session));
  TRY_ASSIGN(const auto settled, settle_jobs(s, server, *session, listed));
  print_jobs(s, settled.jobs);
  if (settled.steps_failed) {
    code = report_error(s, Error{Errc::partial, "a --then step failed (see its detail); fix the cause and run the step by hand"});
  }
  return code;
}

}  // namespace

void add_jobs_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<JobsCommandOptions>();
  auto* sub = app.add_subcommand("jobs", "the jobs on a server (running, succeeded, failed, cancelled, lost) and their --then steps");
  sub->add_option("name", opts->name, "NAME of a tracked server or group (omit with --host)");
  sub->add_option("--kill", opts->kill, "stop job JOB first (SIGTERM, then SIGKILL after --grace seconds)");
  sub->add_option("--grace", opts->grace, "seconds between SIGTERM and SIGKILL (default 10)");
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    // A group: each member's own part of a group JOB (--kill JOB names the group's id).
    if (const auto group = opts->ssh.host.empty() ? find_group(s, opts->name) : std::nullopt) {
      s.exit_code = for_each_member(s, *group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
        JobsCommandOptions one = *opts;
        one.name = m.name;
        if (!one.kill.empty()) {
          one.kill = member_job_ref(s, *group, m, one.kill);
        }
        auto r = run_jobs_command(ms, one);
        return r ? *r : report_error(ms, r.error());
      });
      return;
    }
    auto r = run_jobs_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
