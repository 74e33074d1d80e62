// SPDX-License-Identifier: MIT
// `gpurent autostop NAME --idle 30m [--then stop|hibernate|destroy] [--release-after 24h]
// [--gpu-util 5] [--server-credential ENV] [--backup-to USER@HOST:PATH] [--on-idle CMD]`: arms a
// watchdog on the server that stops (or destroys) it through the provider's API once its GPUs,
// jobs and sessions have been idle that long. `gpurent autostop NAME` shows it; --pause
// DURATION, --resume, --cancel steer it. docs/autostop.md.
#include <CLI/CLI.hpp>

#include <ostream>

#include "cli/autostop_support.hpp"
#include "cli/commands.hpp"
#include "cli/group_support.hpp"
#include "cli/services.hpp"
#include "sync/autostop_agent.hpp"

namespace gpurent {
namespace {

struct AutostopCommandOptions {
  std::string name;
  AutostopRequest request;
  std::string pause;
  bool resume = false;
  bool cancel = false;
  SshFlags ssh;
};

Result<void> steer(SshSession& session, const std::string& command, const std::string& what, const std::string& name)
{
  TRY_ASSIGN(const ExecResult r, session.exec(command, {}));
  if (r.out.starts_with("none")) {
    return fail(Errc::not_found, "no autostop watchdog runs on " + name + "; arm one with `gpurent autostop " + name + " --idle 30m`");
  }
  if (!r.out.starts_with("ok")) {
    return fail(Errc::invalid_input, what + " printed something unexpected; is a POSIX shell the login shell on the server?");
  }
  return {};
}

// `autostop NAME` for a stopped server: the last view read from its watchdog, with the release
// (the second stage, which gpurent carries out: cli/autostop_release.cpp) as the next action.
Result<int> show_stopped(Services& s, StateStore& store, ServerRecord rec)
{
  TRY_ASSIGN(const auto released, release_autostopped(s, store, rec));
  TRY_ASSIGN(const auto stored, store.autostop(rec.id));
  auto doc = nlohmann::json::parse(stored && !stored->last_json.empty() ? stored->last_json : "{}", nullptr, false);
  if (!doc.is_object()) {
    doc = nlohmann::json::object();
  }
  const AutostopRelease d = released.value_or(AutostopRelease{});
  const auto rel = autostop_release_json(d);
  doc["armed"] = false;
  doc["server_state"] = std::string(to_string(rec.status));
  doc["next_action"] = rec.status == ServerStatus::stopped ? rel["next_action"] : nlohmann::json("none");
  doc["next_action_at"] = rec.status == ServerStatus::stopped ? rel["next_action_at"] : nlohmann::json(nullptr);
  doc["release"] = rel;
  if (s.global.json) {
    s.out << doc.dump() << '\n';
    return 0;
  }
  s.out << rec.name << ": " << to_string(rec.status) << " since " << iso_time(rec.status_since)
        << "; no autostop watchdog runs on it\n";
  if (rec.status != ServerStatus::stopped) {
    s.out << "  next: none\n";
  } else if (d.kind == AutostopReleaseKind::wait) {
    s.out << "  next: destroy (the release) at the first `gpurent status --refresh` or `gpurent autostop " << rec.name
          << "` after " << iso_time(from_unix(*d.at)) << "\n";
  } else {
    s.out << "  next: none (" << d.why << ")\n";
  }
  return 0;
}

Result<int> run_autostop_command(Services& s, const AutostopCommandOptions& o)
{
  const int steering = (o.pause.empty() ? 0 : 1) + (o.resume ? 1 : 0) + (o.cancel ? 1 : 0);
  if (steering > 1 || (steering == 1 && !o.request.idle.empty())) {
    return fail(Errc::usage, "autostop: give one of --idle (arm), --pause, --resume or --cancel");
  }
  std::optional<std::int64_t> pause_s;
  if (!o.pause.empty()) {
    TRY_ASSIGN(pause_s, parse_autostop_duration(o.pause, "--pause"));
  }
  if (!o.request.idle.empty()) {
    TRY(check_autostop_request(o.request));  // before connecting: a usage error is not a network one
  }
  if (steering == 0 && o.request.idle.empty() && o.ssh.host.empty()) {
    TRY_ASSIGN(StateStore * store, s.state());
    TRY_ASSIGN(auto found, store->find_server(o.name));
    if (found && (found->status == ServerStatus::stopped || is_closed(found->status)) &&
        autostop_release_input(*store, *found, s.clock.now())) {
      return show_stopped(s, *store, *found);  // a stopped server cannot be read: what gpurent recorded
    }
  }
  TRY_ASSIGN(const JobServer server, open_job_server(s, o.name, o.ssh));
  TRY_ASSIGN(auto session, connect_job_server(s, server));
  AutostopView view;
  if (!o.request.idle.empty()) {
    TRY_ASSIGN(view, arm_autostop(s, server, *session, o.request));
  } else {
    if (pause_s) {
      TRY(steer(*session, autostop_pause_command(to_unix(s.clock.now()) + *pause_s), "--pause", server.dest.name));
      s.err << "gpurent: autostop on " << server.dest.name << " paused; the idle count starts again after the pause\n";
    } else if (o.resume) {
      TRY(steer(*session, autostop_resume_command(), "--resume", server.dest.name));
      s.err << "gpurent: autostop on " << server.dest.name << " resumed\n";
    } else if (o.cancel) {
      TRY(steer(*session, autostop_cancel_command(), "--cancel", server.dest.name));
      s.err << "gpurent: autostop on " << server.dest.name << " cancelled; the watchdog ended\n";
    }
    TRY_ASSIGN(view, read_autostop(s, server, *session));
  }
  if (s.global.json) {
    s.out << autostop_json(view).dump() << '\n';
  } else {
    print_autostop_text(s.out, server.dest.name, view);
  }
  return 0;
}

}  // namespace

std::shared_ptr<std::string> add_autostop_flag(CLI::App& sub)
{
  auto value = std::make_shared<std::string>();
  sub.add_option("--autostop", *value, "arm autostop: stop after this long idle, e.g. 30m or 1h:destroy (see `gpurent help autostop`)");
  return value;
}

void add_autostop_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<AutostopCommandOptions>();
  auto& rq = opts->request;
  auto* sub = app.add_subcommand("autostop", "a watchdog on the server that stops it when its GPUs, jobs and sessions are idle");
  sub->add_option("name", opts->name, "NAME of a tracked server or group (omit with --host)");
  sub->add_option("--idle", rq.idle, "arm: act after this long idle (30m, 2h, 1h30m; a bare number is minutes)");
  sub->add_option("--then", rq.then, "what to do when idle: stop (default), hibernate or destroy");
  sub->add_option("--release-after", rq.release_after, "destroy this long after the first action (a second stage)");
  sub->add_option("--gpu-util", rq.gpu_util, "a GPU below this utilization % counts as idle (default 5)");
  sub->add_option("--server-credential", rq.server_credential,
                  "hand the API key in this local environment variable to the server (stored 0600 there)");
  sub->add_option("--backup-to", rq.backup_to, "before a destroy, the server backs up to USER@HOST:PATH or ssh://USER@HOST:PORT/PATH (verified)");
  sub->add_option("--backup-dir", rq.backup_dir, "what the server backs up (default: the provider's workspace, else ~)");
  sub->add_flag("--no-backup", rq.no_backup, "allow the destroy stage without a backup");
  sub->add_option("--on-idle", rq.on_idle, "a shell command the server runs when idle (e.g. a webhook with curl)");
  sub->add_option("--pause", opts->pause, "pause the watchdog for this long (the idle count starts again after)");
  sub->add_flag("--resume", opts->resume, "end a pause now");
  sub->add_flag("--cancel", opts->cancel, "end the watchdog");
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    if (for_group_named(s, *opts, &AutostopCommandOptions::name, run_autostop_command)) {
      return;
    }
    auto r = run_autostop_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
