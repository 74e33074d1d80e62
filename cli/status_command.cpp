// SPDX-License-Identifier: MIT
// `gpurent status [NAME] [--refresh] [--json]`: every tracked server with its accrued cost from
// the ledger, its cost per hour now, last backup and warnings. --refresh asks each provider:
// servers it bills that gpurent does not track are listed; ones it no longer has are marked gone.
// A running server whose GPUs `gpurent doctor NAME` saw idle gets the idle warning.
#include <CLI/CLI.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/job_support.hpp"
#include "cli/lifecycle_support.hpp"
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
  default: return current;
  }
}

// Brings one provider's servers in the store in line with what the provider reports.
Result<void> refresh_provider(Services& s, const Config& cfg, StateStore& store, const std::string& provider,
                              std::vector<ServerRecord>& mine, std::vector<Untracked>& untracked)
{
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, provider));
  TRY_ASSIGN(auto listed, h.provider->list());
  std::set<std::string> matched;
  const auto now = s.clock.now();
  for (auto& rec : mine) {
    if (rec.provider != provider || rec.attached) {
      continue;
    }
    const Instance* found = nullptr;
    for (const auto& in : listed) {
      if ((!rec.provider_id.empty() && in.id == rec.provider_id) ||
          (rec.provider_id.empty() && in.name == rec.name && in.state != InstanceState::terminated)) {
        found = &in;
      }
    }
    if (found != nullptr && found->state == InstanceState::terminated) {
      matched.insert(found->id);
      found = nullptr;
    }
    if (found == nullptr) {
      // Not created (crash before the create call answered), destroyed as asked, or gone.
      const ServerStatus closed = rec.provider_id.empty() ? ServerStatus::failed
                                  : rec.status == ServerStatus::destroying ? ServerStatus::destroyed
                                                                           : ServerStatus::gone;
      const char* note = closed == ServerStatus::failed      ? "refresh: the provider never created it"
                         : closed == ServerStatus::destroyed ? "refresh: destroy confirmed by the provider"
                                                             : "refresh: the provider no longer has it";
      TRY(store.record_state(rec.id, closed, now, note));
      s.err << "gpurent: " << rec.name << ": " << to_string(closed) << " (" << (note + 9) << "); ledger closed\n";
      rec.status = closed;
      continue;
    }
    matched.insert(found->id);
    if (rec.provider_id.empty()) {
      TRY(store.set_provider_id(rec.id, found->id));
      rec.provider_id = found->id;
      s.err << "gpurent: " << rec.name << ": found at " << provider << " as " << found->id << " (the create call had not been recorded)\n";
    }
    if (!found->host.empty() && found->host != rec.host) {
      TRY(store.set_connection(rec.id, found->user, found->host, found->port, rec.host_key));
      rec.host = found->host;
      rec.port = found->port;
    }
    const ServerStatus next = rec.status == ServerStatus::destroying ? rec.status : status_for(found->state, rec.status);
    if (next != rec.status) {
      TRY(store.record_state(rec.id, next, now, "refresh: provider reports " + found->raw_state));
      rec.status = next;
    }
  }
  for (const auto& in : listed) {
    if (!matched.contains(in.id) && in.state != InstanceState::terminated) {
      untracked.push_back(Untracked{provider, in});
    }
  }
  return {};
}

nlohmann::json instance_json(StateStore& store, const ServerRecord& r, TimePoint now, std::vector<std::string>& warnings,
                             LedgerTotals& totals)
{
  auto ev = store.events(r.id);
  totals = ev ? accrue(r.terms, *ev, now) : LedgerTotals{};
  const MicroUsd rate = rate_in(r.terms, r.status);
  auto backup = store.latest_backup(r.id);
  nlohmann::json last_backup = nullptr;
  if (backup && backup->has_value()) {
    const BackupRecord& b = **backup;
    last_backup = {{"at", iso_time(b.at)}, {"verified", b.verified}, {"manifest", b.manifest}, {"files", b.files},
                   {"bytes", b.bytes.n}};
  }
  if (r.status == ServerStatus::stopped && r.terms.stopped.bills_full_rate) {
    warnings.push_back("stopped but billed at the full rate (" + per_hour(rate) + ")");
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
  if (r.status == ServerStatus::creating) {
    warnings.push_back("the create call was not confirmed: it may exist and bill; run `gpurent status --refresh`");
  }
  if (r.status == ServerStatus::destroying) {
    warnings.push_back("destroy not confirmed: it may still bill; run `gpurent status --refresh`");
  }
  if (r.status == ServerStatus::gone) {
    warnings.push_back("the provider no longer has it; billed until it was found gone");
  }
  return {{"name", r.name},
          {"provider", r.provider},
          {"provider_id", r.provider_id},
          {"card", r.card},
          {"gpus", r.gpus},
          {"state", std::string(to_string(r.status))},
          {"since", iso_time(r.status_since)},
          {"host", r.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.user + "@" + r.host + ":" + std::to_string(r.port))},
          {"accrued_cost", to_units(totals.accrued)},
          {"cost_per_hour_now", to_units(rate)},
          {"currency", r.terms.currency},
          {"last_backup", last_backup},
          {"attached", r.attached},
          {"idle", idle},
          {"warnings", warnings}};
}

Result<void> run_status(Services& s, const StatusOptions& o)
{
  TRY_ASSIGN(StateStore* store, s.state());
  settle_pending_steps(s, *store);  // --then steps of jobs that ended since (cli/job_support.hpp)
  std::vector<ServerRecord> servers;
  if (!o.name.empty()) {
    TRY_ASSIGN(auto one, store->find_server(o.name));
    if (!one) {
      return fail(Errc::not_found, "no server named '" + o.name + "' is tracked; see `gpurent status`");
    }
    servers.push_back(*one);
  } else {
    TRY_ASSIGN(servers, store->list_servers(false));
  }
  std::vector<Untracked> untracked;
  std::vector<std::string> refresh_errors;
  if (o.refresh) {
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
    for (const auto& p : providers) {
      auto r = refresh_provider(s, cfg, *store, p, servers, untracked);
      if (!r) {
        refresh_errors.push_back(r.error().message);
        report_warning(s, "refresh " + p + ": " + r.error().message);
      }
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
    list.push_back(instance_json(*store, r, now, warnings, totals));
    total += totals.accrued;
    text += r.name + "  " + r.provider + "  " + r.card + " x" + std::to_string(r.gpus) + "  " +
            std::string(to_string(r.status)) + " since " + iso_time(r.status_since) + "\n    accrued " +
            format_usd(totals.accrued) + ", now " + per_hour(rate_in(r.terms, r.status)) +
            (r.host.empty() ? "" : ", " + r.user + "@" + r.host + ":" + std::to_string(r.port)) + "\n";
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
                              {"card", u.instance.card},
                              {"gpus", u.instance.gpus},
                              {"cost_per_hour_now", to_units(u.instance.price_per_hour)}});
    text += "untracked: " + u.provider + " " + u.instance.id + " '" + u.instance.name + "' " +
            std::string(to_string(u.instance.state)) + " " + per_hour(u.instance.price_per_hour) +
            " (billed by the provider, not tracked by gpurent)\n";
  }
  if (s.global.json) {
    nlohmann::json doc = {{"instances", list}, {"untracked", untracked_json}, {"total_accrued", to_units(total)}};
    if (!refresh_errors.empty()) {
      doc["refresh_errors"] = refresh_errors;
    }
    s.out << doc.dump(2) << '\n';
  } else {
    s.out << (servers.empty() ? std::string("no tracked servers\n") : text);
    if (!servers.empty()) {
      s.out << "total accrued: " << format_usd(total) << "\n";
    }
  }
  if (!refresh_errors.empty()) {
    return fail(Errc::unavailable, "status --refresh: " + std::to_string(refresh_errors.size()) +
                                       " provider(s) could not be asked; the list above may be incomplete");
  }
  return {};
}

}  // namespace

void add_status_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand("status", "tracked servers: state, accrued cost, cost per hour now, warnings");
  sub->add_option("name", opts->name, "one server (also a closed one)");
  sub->add_flag("--refresh", opts->refresh, "ask each provider; list servers it bills that gpurent does not track");
  sub->callback([&s, opts] {
    auto r = run_status(s, *opts);
    s.exit_code = r ? 0 : report_error(s, r.error());
  });
}

}  // namespace gpurent
