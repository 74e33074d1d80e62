// SPDX-License-Identifier: MIT
// `gpurent logs NAME [JOB] [-f] [--tail N]`: a job's output (default: the latest job); -f follows
// it across reconnects until it ends. Carries out the --then steps of jobs it sees ended.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/group_support.hpp"
#include "cli/job_follow.hpp"
#include "cli/job_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
namespace {

struct LogsCommandOptions {
  std::vector<std::string> args;  // NAME [JOB]; with --host only [JOB]
  bool follow = false;
  std::optional<std::uint64_t> tail;
  std::int64_t node = -1;  // --node K: that member of a group
  SshFlags ssh;
};

Result<int> run_logs_command(Services& s, const LogsCommandOptions& o)
{
  const auto [name, args] = name_and_rest(o.args, o.ssh);
  if (args.size() > 1) {
    return fail(Errc::usage, "logs: give at most one JOB (extra: " + args[1] + ")");
  }
  TRY_ASSIGN(const JobServer server, open_job_server(s, name, o.ssh));
  TRY_ASSIGN(auto session, connect_job_server(s, server));
  TRY_ASSIGN(const auto all, list_server_jobs(*session));
  const std::vector<RemoteJob> listed = own_jobs(server, all);
  std::string id;
  if (!args.empty()) {
    TRY_ASSIGN(id, resolve_job(s, server, listed, args.front()));
  } else if (!listed.empty()) {
    const auto latest = std::max_element(listed.begin(), listed.end(), [](const RemoteJob& a, const RemoteJob& b) {
      return a.started.value_or(0) != b.started.value_or(0) ? a.started.value_or(0) < b.started.value_or(0) : a.id < b.id;
    });
    id = latest->id;
  } else {
    return fail(Errc::not_found, server.dest.name + " has no jobs; start one with `gpurent run " + server.dest.name + " -- CMD`");
  }
  if (!is_valid_job_id(id)) {
    return fail(Errc::usage, "'" + id + "' is not a job id; see `gpurent jobs " + server.dest.name + "`");
  }
  // The log as it is now (and as it grows, with -f); under --json it is gathered into the document.
  std::string gathered;
  std::ostringstream followed;
  std::ostream& out = s.global.json ? static_cast<std::ostream&>(followed) : s.out;
  TRY_ASSIGN(auto ch, session->open_exec(job_log_command(id, o.tail)));
  std::string err;
  TRY_ASSIGN(const auto end, ch->finish(
                                 {},
                                 [&](const char* p, std::size_t n) -> Result<void> {
                                   if (s.global.json) {
                                     gathered.append(p, n);
                                   } else {
                                     out.write(p, static_cast<std::streamsize>(n));
                                   }
                                   return {};
                                 },
                                 [&](const char* p, std::size_t n) -> Result<void> {
                                   err.append(p, n);
                                   return {};
                                 },
                                 {}));
  const auto size = parse_log_size(err);
  if (end.exit_status != 0 || !size) {
    return fail(Errc::not_found, server.dest.name + " has no job " + id + "; see `gpurent jobs " + server.dest.name + "`");
  }
  out.flush();
  const auto show_json = [&](const JobRecord& j) {
    nlohmann::json doc = job_json(j, recorded_job_number(s, j.target, j.job_id));
    doc["output"] = nlohmann::json::parse(nlohmann::json(gathered + followed.str()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    s.out << doc.dump() << '\n';
  };
  if (o.follow) {
    TRY_ASSIGN(const FollowOutcome outcome, follow_job(s, server, session, id, *size, out));
    if (outcome.how == FollowOutcome::How::detached) {
      s.err << "\ngpurent: stopped following; job " << id << " keeps running\n";
      return 0;
    }
    return finish_followed_job(s, server, session, id, show_json);
  }
  TRY_ASSIGN(const auto settled, settle_jobs(s, server, *session, listed));
  if (s.global.json) {
    for (const auto& j : settled.jobs) {
      if (j.job_id == id) {
        show_json(j);
      }
    }
  }
  return settled.steps_failed ? report_error(s, Error{Errc::partial, "a --then step failed (see its detail); fix the cause and run the step by hand"}) : 0;
}

// `logs GROUP [JOB]`: every node's log, each line prefixed with "[MEMBER] " (under --json one
// document with each node's); `--node K` is that node's log as for one server (also -f).
int group_logs(Services& s, const ServerGroup& group, const LogsCommandOptions& o)
{
  // Each member's own part of the group job (JOB-r<rank>; without JOB, of the latest group job).
  auto for_member = [&](const ServerRecord& m) {
    LogsCommandOptions one = o;
    one.args.front() = m.name;
    one.node = -1;
    const std::string ref = member_job_ref(s, group, m, one.args.size() > 1 ? one.args[1] : std::string());
    if (one.args.size() > 1) {
      one.args[1] = ref.empty() ? one.args[1] : ref;
    } else if (!ref.empty()) {
      one.args.push_back(ref);
    }
    return one;
  };
  if (o.node >= 0) {
    auto m = member_at(group, static_cast<std::uint32_t>(o.node));
    if (!m) {
      return report_error(s, m.error());
    }
    auto r = run_logs_command(s, for_member(**m));
    return r ? *r : report_error(s, r.error());
  }
  if (o.follow) {
    return report_error(s, Error{Errc::usage, "logs " + group.name + " -f: follow one node with --node K (0 to " +
                                                  std::to_string(group.members.back().group_rank) + "), or all of them "
                                                  "with `gpurent run` (it follows every node)"});
  }
  if (s.global.json) {
    return for_each_member(s, group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
      auto r = run_logs_command(ms, for_member(m));
      return r ? *r : report_error(ms, r.error());
    });
  }
  int worst = 0;
  for (const auto& m : group.members) {
    std::ostringstream captured;
    int code = 0;
    {
      Services ms = member_services(s, captured);
      auto r = run_logs_command(ms, for_member(m));
      code = r ? *r : report_error(ms, r.error());
    }
    std::istringstream lines(captured.str());
    for (std::string line; std::getline(lines, line);) {
      s.out << "[" << m.name << "] " << line << '\n';
    }
    worst = code != 0 ? code : worst;
  }
  return worst;
}

}  // namespace

void add_logs_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<LogsCommandOptions>();
  auto* sub = app.add_subcommand("logs", "a job's output (default: the latest job); -f follows it until it ends");
  sub->add_option("args", opts->args, "NAME (a tracked server or group) then JOB; with --host only JOB");
  sub->add_flag("-f,--follow", opts->follow, "follow the output until the job ends (across reconnects; Ctrl-C stops following)");
  sub->add_option("--tail", opts->tail, "only the last N lines");
  sub->add_option("--node", opts->node, "with a group NAME: only node K's log (default: every node's, prefixed)")
      ->check(CLI::Range(0, 63));
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    if (auto group = opts->ssh.host.empty() && !opts->args.empty() ? find_group(s, opts->args.front()) : std::nullopt) {
      s.exit_code = group_logs(s, *group, *opts);
      return;
    }
    if (opts->node >= 0) {
      s.exit_code = report_error(s, Error{Errc::usage, "--node is for a server group NAME"});
      return;
    }
    auto r = run_logs_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
