// SPDX-License-Identifier: MIT
// `gpurent status [NAME] [--refresh] [--json]`: every tracked server with its accrued cost from
// the ledger, its cost per hour now, last backup and warnings. --refresh asks each provider:
// servers it bills that gpurent does not track are listed; ones it no longer has are marked gone.
// A running server whose GPUs `gpurent doctor NAME` saw idle gets the idle warning. A provider
// state that means trouble (unhealthy, preempted, crashed, offline, unknown) is shown as the
// state, with a warning; a server whose destroy failed is retried; an attached server waiting
// for its release is checked over SSH. Without --refresh, a running server whose armed autostop
// may have acted (its deadline passed) gets one get() from its provider, or, when the provider
// cannot be asked, "may be stopped: refresh". The text shows each server's autostop.
#include <algorithm>
#include <CLI/CLI.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/autostop_support.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/job_support.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/release_check.hpp"
#include "cli/server_warnings.hpp"
#include "cli/server_names.hpp"
#include "cli/services.hpp"
#include "providers/idle.hpp"
#include "providers/ledger.hpp"

namespace gpurent {
namespace {

struct StatusOptions {
  std::string name;
  bool refresh = false;
};

struct Untracked {
  std::string provider;
  Instance instance;
};

ServerStatus status_for(InstanceState st, ServerStatus current)
{
  switch (st) {
  case InstanceState::running: return ServerStatus::running;
  case InstanceState::stopped: return ServerStatus::stopped;
  case InstanceState::pending: return current == ServerStatus::creating ? ServerStatus::provisioning : current;
  case InstanceState::offline: return ServerStatus::offline;
  default:
    // failed, unknown, …: billed as before, shown as trouble; back from offline (which bills
    // nothing) into a state the provider does not define, it is billed as running (the most).
    return current == ServerStatus::offline ? ServerStatus::running : current;
  }
}

// The trouble to show for a tracked server: the provider's own, or a stop nobody asked gpurent for.
std::pair<std::string, std::string> trouble_for(const ServerRecord& rec, const Instance& in)
{
  if (!in.trouble.empty()) {
    return {in.trouble, in.trouble_detail};
  }
  const bool was_up = rec.status == ServerStatus::running || rec.status == ServerStatus::provisioning;
  if (in.state == InstanceState::stopped && (was_up || rec.trouble == "exited")) {
    return {"exited", rec.provider + " reports it " + in.raw_state + ": it stopped without `gpurent down`"};
  }
  return {};
}

bool destroy_pending(ServerStatus st)
{
  return st == ServerStatus::destroying || st == ServerStatus::destroy_failed;
}

// The exit of a refresh with problems: theirs when they all share one (a credential refused
// over plain http is `refused`, exit 3, not a network failure), else `unavailable`.
Errc refresh_summary_code(const std::vector<Error>& errors)
{
  const Errc first = errors.front().code;
  const bool one_code =
      std::all_of(errors.begin(), errors.end(), [first](const Error& e) { return e.code == first; });
  return one_code ? first : Errc::unavailable;
}

// Brings one provider's servers in the store in line with what the provider reports.
// `tracked`: every open server gpurent tracks (not only those refreshed now, which `status
// --refresh NAME` narrows to one): an instance that is one of them is never called untracked.
Result<void> refresh_provider(Services& s, const Config& cfg, StateStore& store, const std::string& provider,
                              std::vector<ServerRecord>& mine, const std::vector<ServerRecord>& tracked,
                              std::vector<Untracked>& untracked, std::vector<Error>& failures)
{
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, provider));
  Provider& p = *h.provider;
  TRY_ASSIGN(auto listed, p.list());
  std::set<std::string> matched;
  for (auto& rec : mine) {
    if (rec.provider != provider || rec.attached || is_closed(rec.status)) {
      continue;
    }
    std::optional<Instance> current;
    for (const auto& in : listed) {
      if ((!rec.provider_id.empty() && in.id == rec.provider_id) ||
          (rec.provider_id.empty() && in.name == rec.name && in.state != InstanceState::terminated)) {
        current = in;
      }
    }
    std::string ended_as;  // the provider's own word for an end, e.g. Lambda's "preempted"
    if (current && current->state == InstanceState::terminated) {
      matched.insert(current->id);
      ended_as = current->trouble;
      current.reset();
    }
    if (!current && !rec.provider_id.empty()) {
      // Not in the list: the provider must confirm by id before the record is closed.
      auto got = p.get(rec.provider_id);
      if (!got) {
        failures.push_back({got.error().code, rec.name + ": " + got.error().message});
        continue;
      }
      if (*got && (*got)->state != InstanceState::terminated) {
        current = **got;
      }
    }
    const auto now = s.clock.now();
    if (!current) {
      // Not created (crash before the create call answered), destroyed as asked, or gone.
      const ServerStatus closed = rec.provider_id.empty() ? ServerStatus::failed
                                  : destroy_pending(rec.status)  ? ServerStatus::destroyed
                                                                 : ServerStatus::gone;
      const char* note = closed == ServerStatus::failed      ? "refresh: the provider never created it"
                         : closed == ServerStatus::destroyed ? "refresh: destroy confirmed by the provider"
                         : ended_as == "preempted"           ? "refresh: the provider preempted it (gone, no longer billed)"
                                                             : "refresh: the provider no longer has it";
      TRY(store.record_state(rec.id, closed, autostop_event_time(store, rec, closed, now), note));
      s.err << "gpurent: " << rec.name << ": " << to_string(closed) << " (" << (note + 9) << "); ledger closed\n";
      rec.status = closed;
      continue;
    }
    matched.insert(current->id);
    if (rec.provider_id.empty()) {
      TRY(store.set_provider_id(rec.id, current->id));
      rec.provider_id = current->id;
      s.err << "gpurent: " << rec.name << ": found at " << provider << " as " << current->id << " (the create call had not been recorded)\n";
    }
    if (!current->host.empty() && current->host != rec.host) {
      TRY(store.set_connection(rec.id, current->user, current->host, current->port, rec.host_key));
      rec.host = current->host;
      rec.port = current->port;
    }
    TRY(adopt_reported_prices(s, store, rec, *current));
    const auto [trouble, detail] = autostop_trouble(store, rec, *current, trouble_for(rec, *current));
    if (current->raw_state != rec.provider_state || trouble != rec.trouble || detail != rec.trouble_detail) {
      TRY(store.set_provider_state(rec.id, current->raw_state, trouble, detail));
      if (!trouble.empty() && trouble != rec.trouble) {
        report_warning(s, rec.name + " is " + trouble + ": " + detail);
      }
      rec.provider_state = current->raw_state;
      rec.trouble = trouble;
      rec.trouble_detail = detail;
    }
    if (destroy_pending(rec.status)) {
      // Asked to be destroyed and still there: send the destroy again (after a look) and confirm.
      s.err << "gpurent: " << rec.name << " is " << to_string(rec.status) << " and " << provider << " still has it ("
            << current->raw_state << "): retrying the destroy\n";
      TRY_ASSIGN(DestroyRecord d, destroy_tracked(s, p, store, rec, "status --refresh: retry", true));
      rec.status = d.status;
      if (d.outcome.confirmed) {
        s.err << "gpurent: " << rec.name << ": destroyed (confirmed by " << provider << "); " << d.billed << '\n';
      } else {
        failures.push_back({d.outcome.error.code, rec.name + ": " + d.outcome.error.message});
      }
      continue;
    }
    const ServerStatus next = status_for(current->state, rec.status);
    if (next != rec.status) {
      const TimePoint at = autostop_event_time(store, rec, next, now);
      TRY(store.record_state(rec.id, next, at, "refresh: provider reports " + current->raw_state));
      rec.status = next;
      rec.status_since = at;
    }
  }
  const auto is_tracked = [&](const Instance& in) {
    return std::any_of(tracked.begin(), tracked.end(), [&](const ServerRecord& r) {
      return r.provider == provider && !is_closed(r.status) &&
             ((!r.provider_id.empty() && r.provider_id == in.id) || (r.provider_id.empty() && r.name == in.name));
    });
  };
  for (const auto& in : listed) {
    if (!matched.contains(in.id) && in.state != InstanceState::terminated && !is_tracked(in)) {
      untracked.push_back(Untracked{provider, in});
    }
  }
  return {};
}

nlohmann::json instance_json(StateStore& store, const ServerRecord& r, TimePoint now, std::vector<std::string>& warnings,
                             LedgerTotals& totals, MicroUsd& rate)
{
  auto ev = store.events(r.id);
  totals = ev ? accrue(r.terms, *ev, now) : LedgerTotals{};
  rate = ev ? rate_now(r.terms, *ev) : rate_in(r.terms, r.status);
  auto backup = store.latest_backup(r.id);
  nlohmann::json last_backup = nullptr;
  if (backup && backup->has_value()) {
    const BackupRecord& b = **backup;
    last_backup = {{"at", iso_time(b.at)}, {"verified", b.verified}, {"manifest", b.manifest}, {"files", b.files},
                   {"bytes", b.bytes.n}};
  }
  if (r.status == ServerStatus::stopped && r.terms.stopped.bills_full_rate) {
    warnings.push_back("stopped but billed at the full rate (" + per_hour(rate) + ")");
  } else if (r.status == ServerStatus::stopped && rate.n > 0) {
    warnings.push_back("stopped: storage still bills " + per_hour(rate) +
                       (r.terms.stopped.storage_note.empty() ? std::string{} : " (" + r.terms.stopped.storage_note + ")"));
  } else if (r.status == ServerStatus::stopped && !r.terms.stopped.storage_note.empty()) {
    warnings.push_back("stopped: " + r.terms.stopped.storage_note);
  }
  if (r.status == ServerStatus::hibernated) {
    warnings.push_back("hibernated: " + per_hour(rate));
  }
  if (!is_closed(r.status)) {
    const bool fresh = backup && backup->has_value() && (*backup)->verified && (*backup)->at >= r.last_change;
    if (!fresh) {
      warnings.push_back(backup && backup->has_value() ? "no backup since the last change" : "no backup yet");
    }
  }
  nlohmann::json idle = nullptr;
  if (r.status == ServerStatus::running) {
    auto observed = store.doctor_observations(r.id, r.status_since);
    const auto span = observed ? idle_span(r.status, r.status_since, *observed, now) : std::nullopt;
    if (span) {
      warnings.push_back(idle_warning(*span));
      idle = {{"since", iso_time(span->since)},
              {"minutes", span->minutes},
              {"last_check", iso_time(span->last_seen)},
              {"checks", span->observations}};
    }
  }
  for (auto& w : lifecycle_warnings(r, rate, ev && !ev->empty() ? std::string_view(ev->back().note) : "")) {
    warnings.push_back(std::move(w));
  }
  const nlohmann::json autostop = autostop_status_json(store, r, now, warnings);
  nlohmann::json trouble = nullptr;
  if (!r.trouble.empty()) {
    trouble = {{"state", r.trouble}, {"detail", r.trouble_detail}};
  }
  nlohmann::json view{{"name", r.name},
                     {"provider", r.provider},
                     {"provider_id", r.provider_id},
                     {"card", r.card},
                     {"gpus", r.gpus},
                     {"state", shown_state(r)},
                     {"billing_state", std::string(to_string(r.status))},
                     {"provider_state", r.provider_state.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.provider_state)},
                     {"trouble", trouble},
                     {"since", iso_time(r.status_since)},
                     {"billed_s", totals.billed_full_s.count()},
                     {"increment_s", r.terms.billing.increment.count()},
                     {"host", r.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.user + "@" + r.host + ":" + std::to_string(r.port))},
                     {"accrued_cost", to_units(totals.accrued)},
                     {"cost_per_hour_now", to_units(rate)},
                     {"currency", r.terms.currency},
                     {"last_backup", last_backup},
                     {"attached", r.attached},
                     {"idle", idle},
                     {"autostop", autostop},
                     {"warnings", warnings}};
  add_group_keys(view, r);
  return view;
}

// A running server whose armed autostop's deadline passed: one get() of it settles whether the
// watchdog stopped it. False when the provider could not be asked (no key, unreachable).
bool settle_autostopped(Services& s, const Config& cfg, StateStore& store, ServerRecord& r)
{
  if (r.provider_id.empty() || !has_api_key(cfg, r.provider)) {
    return false;
  }
  auto h = open_provider(s, cfg, r.provider);
  if (!h) {
    return false;
  }
  auto got = h->provider->get(r.provider_id);
  if (!got) {
    s.err << "gpurent: " << r.name << ": asking " << r.provider << " whether autostop stopped it failed (" << got.error().message << ")\n";
    return false;
  }
  const auto now = s.clock.now();
  const bool gone = !*got || (*got)->state == InstanceState::terminated;
  const ServerStatus next = gone ? ServerStatus::gone : status_for((*got)->state, r.status);
  if (!gone) {
    auto [trouble, detail] = autostop_trouble(store, r, **got, trouble_for(r, **got));
    if ((*got)->raw_state != r.provider_state || trouble != r.trouble) {
      (void)store.set_provider_state(r.id, (*got)->raw_state, trouble, detail);
      r.provider_state = (*got)->raw_state;
      r.trouble = trouble;
      r.trouble_detail = detail;
    }
  }
  if (next != r.status) {
    const TimePoint at = autostop_event_time(store, r, next, now);
    // "refresh:": what `status --refresh` would have recorded (autostop's release reads it so).
    if (!store.record_state(r.id, next, at, gone ? "refresh: the provider no longer has it (its autostop deadline had passed)"
                                                 : "refresh: provider reports " + (*got)->raw_state +
                                                       " (its autostop deadline had passed)")) {
      return false;
    }
    s.err << "gpurent: " << r.name << ": " << to_string(next) << " (" << r.provider << " says so; its autostop deadline had passed)\n";
    r.status = next;
    r.status_since = at;
  }
  return true;
}

Result<void> run_status(Services& s, const StatusOptions& o)
{
  TRY_ASSIGN(StateStore* store, s.state());
  settle_pending_steps(s, *store);  // --then steps of jobs that ended since (cli/job_support.hpp)
  std::vector<ServerRecord> servers;
  if (!o.name.empty()) {
    TRY_ASSIGN(auto one, store->find_server(o.name));
    if (one && !is_closed(one->status)) {
      servers.push_back(*one);
    } else if (auto group = find_group(s, o.name)) {
      servers = group->members;  // a group NAME: its open members, rank order
    } else if (one) {
      servers.push_back(*one);
    } else {
      return fail(Errc::not_found, "no server or group named '" + o.name + "' is tracked; " +
                                       unknown_name_hint(*store, o.name, "see `gpurent status`"));
    }
  } else {
    TRY_ASSIGN(servers, store->list_servers(false));
  }
  std::vector<Untracked> untracked;
  std::vector<Error> refresh_errors;
  if (o.refresh) {
    refresh_autostops(s, *store, servers);  // what the watchdogs did, at the times they did it
    TRY_ASSIGN(const Config cfg, load_config(s));
    std::set<std::string> providers;
    for (const auto& r : servers) {
      if (!r.attached && !is_closed(r.status)) {
        providers.insert(r.provider);
      }
    }
    for (const char* p : {"lambda", "runpod", "vast"}) {
      if (has_api_key(cfg, p)) {
        providers.insert(p);
      }
    }
    TRY_ASSIGN(const auto tracked, store->list_servers(false));
    for (const auto& p : providers) {
      std::vector<Error> failures;
      auto r = refresh_provider(s, cfg, *store, p, servers, tracked, untracked, failures);
      if (!r) {
        failures.push_back(r.error());
      }
      for (const auto& f : failures) {
        refresh_errors.push_back(f);
        report_warning(s, "refresh " + p + ": " + f.message);
      }
    }
    for (auto& r : servers) {
      if (r.attached && r.status == ServerStatus::release_pending) {
        TRY(check_release(s, *store, r));
      }
      if (r.status == ServerStatus::stopped) {
        // Autostop's second stage after a stop (the stopped server runs no watchdog).
        auto released = release_autostopped(s, *store, r);
        if (!released) {
          refresh_errors.push_back({released.error().code, r.name + ": autostop release: " + released.error().message});
          report_warning(s, "autostop release of " + r.name + ": " + released.error().message);
        }
      }
    }
  }
  std::set<std::int64_t> may_be_stopped;  // autostop may have acted, and the provider could not be asked
  if (!o.refresh) {
    std::optional<Config> cfg;
    for (auto& r : servers) {
      const auto deadline = autostop_deadline(*store, r);
      if (!deadline || *deadline > s.clock.now()) {
        continue;
      }
      if (!cfg) {
        auto loaded = load_config(s);
        cfg = loaded ? *loaded : Config{};
      }
      if (!settle_autostopped(s, *cfg, *store, r)) {
        may_be_stopped.insert(r.id);
      }
    }
  }
  nlohmann::json closed_now = nlohmann::json::array();
  for (const auto& r : servers) {
    if (is_closed(r.status) && o.refresh && o.name.empty()) {
      closed_now.push_back({{"name", r.name}, {"provider", r.provider}, {"state", std::string(to_string(r.status))}});
    }
  }
  if (o.name.empty()) {
    // Ledgers the refresh just closed (gone, destroyed, never created) leave the list.
    std::erase_if(servers, [](const ServerRecord& r) { return is_closed(r.status); });
  }
  const auto now = s.clock.now();
  nlohmann::json list = nlohmann::json::array();
  MicroUsd total{0};
  std::string text;
  for (const auto& r : servers) {
    std::vector<std::string> warnings;
    LedgerTotals totals;
    MicroUsd rate;
    const bool unsure = may_be_stopped.contains(r.id);
    if (unsure) {
      warnings.push_back("may be stopped: its autostop deadline has passed and " + r.provider +
                         " could not be asked; `gpurent status --refresh` settles it");
    }
    list.push_back(instance_json(*store, r, now, warnings, totals, rate));
    list.back()["may_be_stopped"] = unsure;
    total += totals.accrued;
    const std::string shown = shown_state(r);
    text += r.name + "  " + r.provider + "  " + r.card + " x" + std::to_string(r.gpus) + "  " + shown +
            (shown != to_string(r.status) ? " (billed as " + std::string(to_string(r.status)) + ")" : std::string{}) +
            (unsure ? " (may be stopped: refresh)" : "") +
            " since " + iso_time(r.status_since) +
            (r.group.empty() ? std::string{} : "  (group " + r.group + ", node " + std::to_string(r.group_rank) + ")") +
            "\n    accrued " +
            money_text(totals.accrued) + ", now " +
            per_hour(rate) +
            (r.host.empty() ? "" : ", " + r.user + "@" + r.host + ":" + std::to_string(r.port)) + "\n";
    if (const std::string line = autostop_status_line(*store, r); !line.empty()) {
      text += "    autostop " + line + "\n";
    }
    for (const auto& w : warnings) {
      text += "    ! " + w + "\n";
    }
  }
  nlohmann::json untracked_json = nlohmann::json::array();
  for (const auto& u : untracked) {
    untracked_json.push_back({{"provider", u.provider},
                              {"provider_id", u.instance.id},
                              {"name", u.instance.name},
                              {"state", std::string(to_string(u.instance.state))},
                              {"provider_state", u.instance.raw_state},
                              {"card", u.instance.card},
                              {"gpus", u.instance.gpus},
                              {"cost_per_hour_now", to_units(u.instance.price_per_hour)}});
    text += "untracked: " + u.provider + " " + u.instance.id + " '" + u.instance.name + "' " +
            std::string(to_string(u.instance.state)) + " " + per_hour(u.instance.price_per_hour) +
            " (billed by the provider, not tracked by gpurent)\n";
  }
  if (s.global.json) {
    nlohmann::json doc = {{"instances", list}, {"untracked", untracked_json}, {"total_accrued", to_units(total)}};
    if (o.refresh) {
      doc["closed"] = closed_now;
    }
    if (!refresh_errors.empty()) {
      auto& errors = doc["refresh_errors"] = nlohmann::json::array();
      for (const auto& e : refresh_errors) {
        errors.push_back(e.message);
      }
    }
    s.out << doc.dump(2) << '\n';
  } else {
    s.out << (servers.empty() ? std::string("no tracked servers\n") : text);
    if (!servers.empty()) {
      s.out << "total accrued: " << money_text(total) << "\n";
    }
  }
  if (!refresh_errors.empty()) {
    return fail(refresh_summary_code(refresh_errors),
                "status --refresh: " + std::to_string(refresh_errors.size()) +
                    " problem(s) (above): the list may be incomplete, or a destroy is still not confirmed");
  }
  return {};
}

}  // namespace

void add_status_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand("status", "tracked servers: state, accrued cost, cost per hour now, warnings");
  sub->add_option("name", opts->name, "one server (also a closed one), or a server group");
  sub->add_flag("--refresh", opts->refresh, "ask each provider; list servers it bills that gpurent does not track");
  sub->callback([&s, opts] {
    auto r = run_status(s, *opts);
    s.exit_code = r ? 0 : report_error(s, r.error());
  });
}

}  // namespace gpurent
