// SPDX-License-Identifier: MIT
#include "cli/autostop_support.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "cli/config.hpp"
#include "cli/credential_guard.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "providers/lambda/lambda_provider.hpp"
#include "providers/runpod/runpod_provider.hpp"
#include "providers/vast/vast_provider.hpp"
#include "sync/autostop_agent.hpp"

namespace gpurent {
namespace {

std::int64_t unix_now(Services& s) { return to_unix(s.clock.now()); }

std::string api_url(const Config& cfg, std::string_view api)
{
  if (api == "lambda") {
    return cfg.lambda_api_url.value_or(lambda::k_default_base_url);
  }
  if (api == "runpod") {
    return cfg.runpod_api_url.value_or(runpod::k_default_base_url);
  }
  if (api == "vast") {
    return cfg.vast_api_url.value_or(vast::k_default_base_url);
  }
  return "";
}


struct Prepared {
  AutostopSettings settings;
  std::string secret;
  std::vector<std::string> notes;
};

// The request's own values, read without the server: a usage error before any connection.
Result<AutostopSettings> request_settings(const AutostopRequest& rq)
{
  AutostopSettings st;
  if (rq.idle.empty()) {
    return fail(Errc::usage, "autostop: give the idle limit, e.g. --idle 30m");
  }
  TRY_ASSIGN(st.idle_s, parse_autostop_duration(rq.idle, "--idle"));
  // mark-idle: the watchdog never calls the provider (it runs with no API: --on-idle, then marks
  // the server idle); `then` is not read by it then.
  const auto then = rq.then == k_mark_idle ? std::optional<AutostopAction>(AutostopAction::stop) : parse_autostop_action(rq.then);
  if (!then) {
    return fail(Errc::usage, "--then " + rq.then + ": use stop, hibernate, destroy or mark-idle");
  }
  st.then = *then;
  if (rq.then == k_mark_idle && !rq.release_after.empty()) {
    return fail(Errc::usage, "--release-after: --then mark-idle never acts through the provider, so there is no second stage");
  }
  if (!rq.release_after.empty()) {
    TRY_ASSIGN(st.release_after_s, parse_autostop_duration(rq.release_after, "--release-after"));
  }
  if (rq.gpu_util < 1 || rq.gpu_util > 100) {
    return fail(Errc::usage, "--gpu-util " + std::to_string(rq.gpu_util) + ": give a percentage from 1 to 100");
  }
  st.gpu_util_pct = rq.gpu_util;
  if (!rq.backup_to.empty()) {
    TRY_ASSIGN(st.backup_target, parse_backup_target(rq.backup_to));
  }
  st.backup_to = rq.backup_to;
  return st;
}

Result<Prepared> prepare(Services& s, const JobServer& server, const AutostopRequest& rq)
{
  Prepared p;
  auto& st = p.settings;
  TRY_ASSIGN(st, request_settings(rq));
  st.interval_s = 60;
  if (const auto iv = s.getenv("GPURENT_AUTOSTOP_INTERVAL_S")) {
    st.interval_s = std::max<std::int64_t>(1, std::strtoll(iv->c_str(), nullptr, 10));
  }
  const auto& rec = server.record;
  const std::string provider = rec ? rec->provider : std::string("(--host)");
  const bool mark_idle = rq.then == k_mark_idle;
  const AutostopApi api = rec && !rec->attached && !mark_idle ? autostop_api(rec->provider, !rec->provider_id.empty()) : AutostopApi{};
  if (api.provider.empty() && !mark_idle) {
    const std::string who = !rec ? server.dest.name + " (--host)"
                            : rec->attached ? rec->name + " (attached: rented in " + rec->provider + "'s console)"
                                            : rec->name + " (" + rec->provider + ", no API gpurent can call)";
    return fail(Errc::refused, who + " cannot be stopped through an API, so autostop cannot stop its billing; choose what it "
                                     "does when idle instead: --then mark-idle (runs --on-idle CMD if given, marks it idle; "
                                     "billing goes on until you stop or release it yourself)");
  }
  const bool destroy_stage = !api.provider.empty() && (st.then == AutostopAction::destroy || st.release_after_s > 0);
  if (!api.provider.empty()) {
    if (st.then == AutostopAction::hibernate) {
      return fail(Errc::refused, provider + " cannot hibernate a server; use --then stop" +
                                     (api.can_stop ? std::string() : std::string(" or destroy")));
    }
    if (st.then == AutostopAction::stop && !api.can_stop) {
      return fail(Errc::refused, provider + " has no stop, only terminate; use --then destroy (with --backup-to or --no-backup)");
    }
    st.api = api.provider;
    TRY_ASSIGN(const Config cfg, load_config(s));
    st.api_url = api_url(cfg, api.provider);
    st.instance_id = rec->provider_id;
  }
  if (destroy_stage && rq.backup_to.empty() && !rq.no_backup) {
    return fail(Errc::refused, "a destroy stage deletes the server's disk: give --backup-to USER@HOST:PATH or ssh://USER@HOST:PORT/PATH (the server backs "
                               "up there and verifies it first) or --no-backup");
  }
  st.backup_dir = !rq.backup_dir.empty() ? rq.backup_dir : server.dest.workspace_dir;
  st.no_backup = rq.no_backup;
  st.on_idle = rq.on_idle;
  st.armed_at = unix_now(s);
  if (!rq.server_credential.empty()) {
    const auto v = s.getenv(rq.server_credential);
    if (!v) {
      return fail(Errc::usage, "--server-credential " + rq.server_credential + ": that environment variable is not set here");
    }
    if (api.provider.empty()) {
      return fail(Errc::usage, "--server-credential: " + provider + " servers cannot be stopped through an API; nothing would use it");
    }
    st.credential = "file";
    p.secret = *v;
    p.notes.push_back("handing the value of $" + rq.server_credential + " to the server (~/.gpurent/autostop/credential, mode "
                      "0600); anyone with root there can use it, so prefer a key limited to this server where " + provider +
                      " offers one");
  } else if (api.provider == "runpod" || api.provider == "vast") {
    st.credential = "instance";
  } else if (api.provider == "lambda") {
    return fail(Errc::refused, "Lambda documents no key scoped to the instance: hand one over with --server-credential ENV "
                               "(e.g. --server-credential LAMBDA_API_KEY; stored 0600 on the server)");
  }
  if (!api.provider.empty() && st.credential != "none") {
    // The watchdog sends that credential to the API URL from the server: the same rule as here.
    TRY_ASSIGN(const Config cfg, load_config(s));
    TRY(guard_credential_url(s, cfg, st.api_url, "the autostop credential", config_value_source(cfg, st.api + "_api_url")));
  }
  if (api.provider.empty() && rec && !rec->attached && !rec->provider_id.empty()) {
    p.notes.push_back("--then mark-idle: the watchdog never calls " + provider + "'s API; when idle it runs --on-idle" +
                      (rq.on_idle.empty() ? std::string(" (none given)") : std::string()) +
                      " and marks the server idle; billing goes on until you stop or release it yourself");
  } else if (api.provider.empty()) {
    p.notes.push_back((rec && rec->attached ? "an attached server" : provider + " servers") +
                      std::string(" cannot be stopped through an API: when idle, the watchdog runs --on-idle") +
                      (rq.on_idle.empty() ? std::string(" (none given)") : std::string()) +
                      " and marks the server idle; billing goes on until you stop or release it yourself");
  }
  return p;
}

}  // namespace

Result<void> check_autostop_request(const AutostopRequest& request)
{
  TRY(request_settings(request));
  return {};
}

std::string autostop_duration_text(std::int64_t s)
{
  if (s % 3600 == 0 && s >= 3600) {
    return std::to_string(s / 3600) + "h";
  }
  if (s % 60 == 0 && s >= 60) {
    return std::to_string(s / 60) + "m";
  }
  return std::to_string(s) + "s";
}

Result<std::int64_t> parse_autostop_duration(std::string_view text, std::string_view flag)
{
  const auto d = read_duration(text, 60, true);  // a bare number is minutes
  if (d) {
    return *d;
  }
  switch (d.error()) {
  case DurationError::too_long: return fail(Errc::usage, std::string(flag) + " " + std::string(text) + ": too long");
  case DurationError::malformed:
    return fail(Errc::usage, std::string(flag) + " " + std::string(text) + ": write a duration like 30m, 2h, 1h30m or 90s");
  case DurationError::empty: return fail(Errc::usage, std::string(flag) + ": give a duration like 30m");
  case DurationError::zero: break;
  }
  return fail(Errc::usage, std::string(flag) + " " + std::string(text) + ": must be longer than 0");
}

Result<AutostopRequest> parse_autostop_flag(std::string_view value)
{
  AutostopRequest r;
  const auto colon = value.find(':');
  r.idle = std::string(value.substr(0, colon));
  if (colon != std::string_view::npos) {
    r.then = std::string(value.substr(colon + 1));
  }
  TRY(parse_autostop_duration(r.idle, "--autostop"));
  if (!parse_autostop_action(r.then) && r.then != k_mark_idle) {
    return fail(Errc::usage, "--autostop " + std::string(value) + ": write it as 30m[:stop|hibernate|destroy|mark-idle]");
  }
  return r;
}

Result<AutostopView> arm_autostop(Services& s, const JobServer& server, SshSession& session, const AutostopRequest& rq)
{
  TRY_ASSIGN(Prepared p, prepare(s, server, rq));
  for (const auto& n : p.notes) {
    s.err << "gpurent: autostop: " << n << "\n";
  }
  const bool check_backup = !p.settings.backup_to.empty();
  TRY_ASSIGN(const ExecResult ran, session.exec(autostop_arm_command(p.settings, check_backup), p.secret));
  TRY_ASSIGN(const AutostopArmed armed, parse_autostop_arm(ran.out));
  bool can_stop = !p.settings.api.empty();
  if (can_stop && !armed.has_curl) {
    report_warning(s, "autostop: the server has no curl, so the watchdog cannot call the " + p.settings.api +
                          " API; install curl there and arm it again");
    can_stop = false;
  }
  if (can_stop && p.settings.credential == "instance" && !armed.instance_key) {
    report_warning(s, std::string("autostop: the server has no ") +
                          (p.settings.api == "runpod" ? "RUNPOD_API_KEY" : "CONTAINER_API_KEY") +
                          " (the provider's key scoped to this server); hand one over with --server-credential ENV");
    can_stop = false;
  }
  if (!can_stop && !p.settings.api.empty()) {
    // Armed to stop, but it could not: nothing must look armed that cannot stop the bill.
    const auto cancelled = session.exec(autostop_cancel_command(), {});
    return fail(Errc::refused, "autostop on " + server.dest.name + " could not stop billing (above), so the watchdog was " +
                                   (cancelled ? "ended again" : "asked to end (check with `gpurent autostop " + server.dest.name + "`)") +
                                   "; fix that and arm it again, or choose --then mark-idle (marks it idle; billing goes on)");
  }
  s.err << "gpurent: autostop armed on " << server.dest.name << " (" << armed.launcher << ", pid "
        << (armed.pid ? std::to_string(*armed.pid) : std::string("?")) << "): after " << autostop_duration_text(p.settings.idle_s)
        << " idle it will " << (p.settings.api.empty() ? std::string("mark the server idle") : std::string(to_string(p.settings.then)))
        << (can_stop ? "" : " (it cannot stop billing)") << "\n";
  if (can_stop && p.settings.then == AutostopAction::stop && p.settings.release_after_s > 0) {
    s.err << "gpurent: autostop: a stopped server runs no watchdog, so the release (destroy) once it has been stopped "
          << autostop_duration_text(p.settings.release_after_s) << " happens at the next `gpurent status --refresh` or `gpurent autostop "
          << server.dest.name << "` after that time; it stays stopped (and may bill) until one runs; "
          << (p.settings.no_backup ? std::string("no backup (--no-backup)")
                                   : "the server backs up to " + p.settings.backup_to +
                                         " just before the stop, and gpurent destroys only after checking that verified backup there (or, "
                                         "where it cannot log in to " + p.settings.backup_to + ", seeing it in the watchdog's log)")
          << "\n";
  }
  if (server.record) {
    TRY_ASSIGN(StateStore * store, s.state());
    AutostopRecord a;
    a.server_id = server.record->id;
    a.settings_json = nlohmann::json{{"can_stop_billing", can_stop},
                                     {"idle_limit_s", p.settings.idle_s},
                                     {"then", rq.then == k_mark_idle ? std::string(k_mark_idle)
                                                                     : std::string(to_string(p.settings.then))},
                                     {"release_after_s", p.settings.release_after_s},
                                     {"interval_s", p.settings.interval_s},
                                     {"api", p.settings.api},
                                     {"no_backup", p.settings.no_backup},
                                     {"backup_to", p.settings.backup_to},
                                     {"armed_at_unix", p.settings.armed_at},
                                     {"backup_stem", autostop_backup_stem(p.settings.instance_id, p.settings.armed_at)}}
                          .dump();
    a.armed_at = s.clock.now();
    TRY(store->put_autostop(a));
  }
  return read_autostop(s, server, session);
}

Result<AutostopView> read_autostop(Services& s, const JobServer& server, SshSession& session)
{
  TRY_ASSIGN(const ExecResult ran, session.exec(autostop_read_command(), {}));
  TRY_ASSIGN(const AutostopRemote remote, parse_autostop_state(ran.out));
  AutostopView v = autostop_view(remote);
  if (!server.record) {
    return v;
  }
  TRY_ASSIGN(StateStore * store, s.state());
  TRY_ASSIGN(auto stored, store->autostop(server.record->id));
  if (!stored) {
    return v;
  }
  const auto settings = nlohmann::json::parse(stored->settings_json, nullptr, false);
  if (settings.is_object() && settings.value("can_stop_billing", true) == false) {
    v.can_stop_billing = false;
  }
  nlohmann::json last = autostop_json(v);
  last["interval_s"] = v.settings.interval_s;
  last["idle_since"] = v.last_sample && v.last_sample->idle_since ? nlohmann::json(*v.last_sample->idle_since) : nlohmann::json(nullptr);
  const auto log = parse_autostop_log(remote.log);
  // What the release after a stop needs later, when the stopped server can no longer be read:
  // the stop the watchdog logged and the latest backup of this arming (kept once seen).
  const auto before = nlohmann::json::parse(stored->last_json.empty() ? "null" : stored->last_json, nullptr, false);
  if (const auto b = autostop_latest_backup(log); b && b->at >= to_unix(stored->armed_at)) {
    last["backup"] = {{"at", b->at}, {"ok", b->ok}, {"stage", b->stage}, {"detail", b->detail}};
  } else if (before.is_object() && before.contains("backup") && before["backup"].is_object() &&
             before["backup"].value("at", std::int64_t{0}) >= to_unix(stored->armed_at)) {
    last["backup"] = before["backup"];
  }
  if (const auto done = autostop_billing_action(log); done && done->what == "stop" && done->at >= to_unix(stored->armed_at)) {
    last["stop_at"] = done->at;
  }
  stored->last_json = last.dump();
  stored->read_at = s.clock.now();
  stored->active = v.armed;
  TRY(store->put_autostop(*stored));
  // The ledger: a stop or destroy the watchdog carried out, at the time it did.
  if (const auto done = autostop_billing_action(log); done && !v.settings.api.empty() && v.settings.armed_at > 0 &&
                                                      done->at >= v.settings.armed_at) {
    TRY_ASSIGN(auto rec, store->get_server(server.record->id));
    if (rec && rec->status == ServerStatus::running) {
      const ServerStatus next = done->what == "destroy" ? ServerStatus::destroying : ServerStatus::stopped;
      TRY(store->record_state(rec->id, next, from_unix(done->at), "autostop: " + done->what + " after " +
                                                                      autostop_duration_text(v.settings.idle_s) + " idle (" + done->detail + ")"));
      s.err << "gpurent: " << rec->name << ": autostop " << (next == ServerStatus::stopped ? "stopped" : "destroyed") << " it at "
            << iso_time(from_unix(done->at)) << "\n";
    }
  }
  return v;
}

Result<std::optional<AutostopView>> arm_autostop_flag(Services& s, const std::string& name, const std::string& value,
                                                      const SshFlags& flags, const std::string& server_credential)
{
  if (value.empty()) {
    return std::optional<AutostopView>{};
  }
  auto armed = [&]() -> Result<AutostopView> {
    TRY_ASSIGN(AutostopRequest rq, parse_autostop_flag(value));
    rq.server_credential = server_credential;
    TRY_ASSIGN(const JobServer server, open_job_server(s, name, flags));
    TRY_ASSIGN(auto session, connect_job_server(s, server));
    return arm_autostop(s, server, *session, rq);
  }();
  if (!armed) {
    report_warning(s, "--autostop: not armed: " + armed.error().message + "; arm it with `gpurent autostop " + name + " --idle ...`");
    return std::unexpected(armed.error());
  }
  return std::optional<AutostopView>{*armed};
}

}  // namespace gpurent
