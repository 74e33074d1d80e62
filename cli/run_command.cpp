// SPDX-License-Identifier: MIT
// `gpurent run NAME [--workdir DIR] [--to REMOTE_DIR] [--exclude GLOB]... [--no-push] [--env K=V]...
// [-d] [--then STEP]... -- CMD...`: push, start CMD detached on the server (it survives a dropped
// connection), follow its output, explain an out-of-memory exit, then carry out the --then
// steps. `gpurent run NAME --stop JOB` stops a job.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/autostop_support.hpp"
#include "cli/backup_place.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/job_follow.hpp"
#include "cli/job_steps.hpp"
#include "cli/job_support.hpp"
#include "cli/push_support.hpp"
#include "cli/run_group.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

struct RunCommandOptions : RunSettings {
  std::string name;
  std::vector<std::string> then;
  std::string stop;
};

// `run GROUP …`: every node (cli/run_group.hpp); --stop JOB stops it on every node.
int run_on_group(Services& s, const ServerGroup& group, RunCommandOptions& o);

void print_push_line(Services& s, const PushReport& r)
{
  s.err << "gpurent: pushed " << r.files_sent << " of " << r.files_total << " file(s) to " << r.remote_dir << " in "
        << static_cast<long>(r.seconds * 10) / 10.0 << " s" << (r.verified ? " (verified)" : "");
  if (r.tree.skipped_files > 0) {
    const auto largest = largest_skipped(r.tree, 3);
    s.err << "; left out " << r.tree.skipped_files << " ignored file(s), the largest:";
    for (const auto& sk : largest) {
      s.err << " " << sk.path << (sk.directory ? "/" : "") << " (" << sk.reason << ")";
    }
  }
  if (!r.deleted.empty()) {
    s.err << "; deleted " << r.deleted.size() << " path(s) no longer in the local directory (--delete)";
  }
  if (r.delete_without_record) {
    s.err << "; deleted nothing: no record of an earlier push (--delete; this push wrote one)";
  }
  if (!r.never_pushed.empty()) {
    s.err << "; kept " << r.never_pushed.size() << " path(s) gpurent never pushed (job outputs?)";
  }
  s.err << "\n";
}

Result<int> run_run_command(Services& s, RunCommandOptions& o)
{
  TRY_ASSIGN(const JobServer server, open_job_server(s, o.name, o.ssh));
  if (!o.stop.empty()) {
    TRY_ASSIGN(auto session, connect_job_server(s, server));
    TRY_ASSIGN(const std::string stopped, stop_job(s, server, *session, o.stop, o.grace));
    TRY_ASSIGN(const auto listed, list_server_jobs(*session));
    TRY_ASSIGN(const auto settled, settle_jobs(s, server, *session, listed));
    if (s.global.json) {
      for (const auto& j : settled.jobs) {
        if (j.job_id == stopped) {
          s.out << nlohmann::json{{"job", job_json(j, job_number(settled.jobs, j.job_id))}}.dump() << '\n';
        }
      }
    }
    return settled.steps_failed ? report_error(s, Error{Errc::partial, "a --then step failed (see its detail); fix the cause and run the step by hand"}) : 0;
  }
  if (o.command.empty()) {
    return fail(Errc::usage, "run: give the command after --, e.g. `gpurent run " + server.dest.name + " -- python train.py`");
  }
  if (o.no_push && o.delete_extra) {
    return fail(Errc::usage, "run: --delete deletes what the push would not send; it needs the push (drop --no-push)");
  }
  TRY_ASSIGN(const auto env, parse_env(o.env));
  const std::string remote_dir = o.to.empty() ? default_push_dir(o.workdir) : o.to;
  const bool tracked = server.record && !server.record->attached;
  std::filesystem::path backups;
  if (!o.then.empty()) {
    TRY_ASSIGN(const Config cfg, load_config(s));
    backups = default_backup_dir(s, cfg.backup_dir, server.dest.name).value_or(std::filesystem::path{});
  }
  TRY_ASSIGN(auto steps, prepare_then_steps(o.then, remote_dir, std::filesystem::current_path(), backups, server.dest.name,
                                            tracked));
  TRY_ASSIGN(StateStore * store, s.state());
  PushSettings push{o.workdir, remote_dir, o.excludes, o.with_git, o.allow_secrets};
  push.delete_extra = o.delete_extra;
  std::optional<LocalTree> tree;
  if (!o.no_push) {
    TRY_ASSIGN(tree, walk_for_push(s, push));  // likely secrets are refused before connecting
  }
  TRY_ASSIGN(auto session, connect_job_server(s, server));

  JobRecord job;  // the commit the pushed tree is at goes with the job
  if (tree && tree->git) {
    job.git_commit = tree->git_commit.value_or("");
    job.git_dirty = tree->git_dirty;
  }
  nlohmann::json push_json = nullptr;
  if (tree) {
    TRY_ASSIGN(const PushReport report, push_to_server(s, server, *session, push, std::move(*tree)));
    push_json = push_report_json(report);
    print_push_line(s, report);
    if (!report.failed.empty()) {
      for (const auto& f : report.failed) {
        s.err << "  not pushed: " << f.path << ": " << f.error << "\n";
      }
      return fail(Errc::partial, "not starting the job: " + std::to_string(report.failed.size()) +
                                     " file(s) were not pushed intact; run again");
    }
  }

  // Recorded before it is started, so a crash in between leaves a trace (seen as lost later).
  job.job_id = new_job_id(s);
  job.server_id = server.dest.server_id != 0 ? std::optional<std::int64_t>(server.dest.server_id) : std::nullopt;
  job.target = server.target;
  job.command = command_line_text(o.command);
  job.workdir = remote_dir;
  job.started = s.clock.now();
  job.log = job_log_path(job.job_id);
  job.steps = std::move(steps);
  TRY_ASSIGN(job, store->add_job(job));
  TRY_ASSIGN(const JobStartScript start, job_start_command(JobLaunch{job.job_id, remote_dir, job.command, env}));
  auto started = session->exec(start.command, start.input);  // --env values on stdin, out of `ps`
  auto parsed = started ? parse_job_start(started->out) : Result<JobStart>(std::unexpected(started.error()));
  if (!parsed) {
    job.state = "failed";
    job.ended = s.clock.now();
    for (auto& st : job.steps) {
      st.state = "skipped";
      st.detail = "the job did not start";
    }
    (void)store->update_job(job);
    return fail(parsed.error().code, "the job did not start on " + server.dest.name + ": " + parsed.error().message);
  }
  job.state = "running";
  TRY(store->update_job(job));
  if (server.dest.server_id != 0) {
    (void)store->mark_changed(server.dest.server_id, s.clock.now());
  }
  s.err << "gpurent: job " << job.job_id << " started on " << server.dest.name << " in " << remote_dir << " (" << parsed->launcher
        << "); its output: " << job.log << "\n";
  const auto show_json = [&](const JobRecord& j) {
    s.out << nlohmann::json{{"job", job_json(j, recorded_job_number(s, j.target, j.job_id))}, {"push", push_json}}.dump() << '\n';
  };
  if (o.detach) {
    s.err << "gpurent: follow it with `gpurent logs " << server.dest.name << " " << job.job_id << " -f`\n";
    if (s.global.json) {
      show_json(job);
    } else {
      s.out << job.job_id << '\n';
    }
    return 0;
  }
  s.err << "gpurent: following its output; Ctrl-C detaches (the job keeps running)\n";
  TRY_ASSIGN(const FollowOutcome outcome, follow_job(s, server, session, job.job_id, 0, s.global.json ? s.err : s.out));
  if (outcome.how == FollowOutcome::How::detached) {
    s.err << "\ngpurent: detached; job " << job.job_id << " keeps running on " << server.dest.name << ". Follow it with `gpurent logs "
          << server.dest.name << " " << job.job_id << " -f`, stop it with `gpurent jobs " << server.dest.name << " --kill "
          << job.job_id << "`" << (job.steps.empty() ? "" : "; the --then steps run at the next `gpurent jobs/logs/status` after it ends")
          << "\n";
    if (s.global.json) {
      show_json(job);
    }
    return 0;
  }
  return finish_followed_job(s, server, session, job.job_id, show_json);
}

int run_on_group(Services& s, const ServerGroup& group, RunCommandOptions& o)
{
  if (!o.stop.empty()) {
    return for_each_member(s, group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
      RunCommandOptions one = o;
      one.name = m.name;
      one.stop = member_job_ref(s, group, m, o.stop);  // the group's JOB: this node's JOB-r<rank>
      auto r = run_run_command(ms, one);
      return r ? *r : report_error(ms, r.error());
    });
  }
  if (!o.then.empty()) {
    return report_error(s, Error{Errc::usage, "--then is for one server; after a group's job, run `gpurent backup " + group.name +
                                                  "` (every node) or `gpurent down " + group.name + " --destroy`"});
  }
  return run_group_job(s, group, o);
}

}  // namespace

void add_run_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<RunCommandOptions>();
  auto* sub = app.add_subcommand("run", "push, run a command detached on a server, follow it, explain an OOM, then --then steps");
  sub->add_option("name", opts->name, "NAME of a tracked server or group (omit with --host)");
  sub->add_option("command", opts->command, "after --, the command (one word: shell code as typed; several: that argument list)");
  sub->add_option("--workdir", opts->workdir, "local working tree to push (default .)");
  sub->add_option("--to", opts->to, "remote directory to push to and run in (default ~/gpurent/<name of --workdir>)");
  sub->add_option("--exclude", opts->excludes, "leave out paths matching this pattern (.gitignore syntax; repeatable)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  sub->add_flag("--with-git", opts->with_git, "also push the .git directory (the repository's history)");
  sub->add_option("--allow-secret", opts->allow_secrets, "push this likely secret (or every one below this directory) on purpose (repeatable)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  sub->add_flag("--delete", opts->delete_extra,
                "the push also deletes from the server what an earlier push sent and --workdir no longer has, never job outputs "
                "(as `push --delete`; --yes to confirm)");
  sub->add_flag("--no-push", opts->no_push, "do not push; run in the remote directory as it is");
  sub->add_option("--env", opts->env, "NAME=VALUE exported for the command (repeatable)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  sub->add_flag("-d,--detach", opts->detach, "start it and return (follow later with `gpurent logs NAME JOB -f`)");
  sub->add_option("--then", opts->then, "after the job: backup:REMOTE[:LOCAL] or down:stop|hibernate|destroy (repeatable, in order)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  sub->add_option("--stop", opts->stop, "stop job JOB instead (SIGTERM, then SIGKILL after --grace seconds)");
  sub->add_option("--grace", opts->grace, "seconds between SIGTERM and SIGKILL for --stop (default 10)");
  sub->add_option("--master-addr", opts->master_addr, "with a group: MASTER_ADDR for every node (default: node 0's address)");
  sub->add_option("--master-port", opts->master_port, "with a group: MASTER_PORT for every node (default 29500)")
      ->check(CLI::Range(1, 65535));
  add_ssh_flags(*sub, opts->ssh);
  auto autostop = add_autostop_flag(*sub);
  sub->callback([&s, opts, autostop] {
    auto& o = *opts;
    if (!o.ssh.host.empty() && !o.name.empty()) {
      o.command.insert(o.command.begin(), o.name);  // with --host there is no NAME: the first word is the command's
      o.name.clear();
    }
    if (auto group = o.ssh.host.empty() ? find_group(s, o.name) : std::nullopt) {
      for (const auto& m : group->members) {
        (void)arm_autostop_flag(s, m.name, *autostop, o.ssh);
      }
      s.exit_code = run_on_group(s, *group, o);
      return;
    }
    (void)arm_autostop_flag(s, o.name, *autostop, o.ssh);
    auto r = run_run_command(s, o);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
