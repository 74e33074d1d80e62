// SPDX-License-Identifier: MIT
#include "cli/start_support.hpp"

#include <ostream>

#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "providers/cost.hpp"
#include "providers/lifecycle.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

std::string gpu_text(std::string_view card, std::uint32_t gpus)
{
  return std::string(card) + " x" + std::to_string(gpus);
}

// What the provider lists for the server's card now: the nearest thing to "is a GPU free" that
// the drivers can ask (RunPod restarts a pod on the machine it was on; Vast's host keeps the GPU
// or not). Never fails: a provider that cannot answer is said so.
std::string availability(Provider& p, const ServerRecord& rec)
{
  auto offers = p.fetch_offers();
  if (!offers) {
    return "asking " + rec.provider + " what it lists failed (" + offers.error().message + ")";
  }
  const Offer* o = find_offer(*offers, rec.provider, rec.card, rec.gpus);
  const std::string where = rec.provider + " restarts it on the machine it was on, so whether a GPU is free there is "
                                           "known only from the start's answer";
  if (o == nullptr) {
    return rec.provider + " does not list " + gpu_text(rec.card, rec.gpus) + " right now (the start may be refused); " + where;
  }
  return rec.provider + " lists " + gpu_text(rec.card, rec.gpus) + " at " + per_hour(o->price_per_hour) + " now; " + where;
}

// After a start that failed or did not come up: one more look, and the record brought in line
// with it (stopped again, or left as it was). The error says what it bills and that nothing was
// destroyed.
Error not_started(Services& s, Provider& p, StateStore& store, const ServerRecord& rec, const Error& why,
                  const std::string& again)
{
  auto look = p.get(rec.provider_id);
  Error e = why;
  if (e.code == Errc::invalid_input) {
    e.code = Errc::unavailable;  // the provider's refusal, not the user's input (exit 1, not 2)
  }
  if (look && look->has_value() && (*look)->state == InstanceState::stopped) {
    if (rec.status != ServerStatus::stopped && rec.status != ServerStatus::hibernated) {
      (void)store.record_state(rec.id, ServerStatus::stopped, s.clock.now(), "start did not take: " + why.message);
    }
    auto now = store.get_server(rec.id);
    const MicroUsd stopped = billing_now(store, now && *now ? **now : rec);
    e.message = why.message + "; " + rec.name + " stays stopped (" + (*look)->raw_state + ") and bills " + per_hour(stopped) +
                " stopped; nothing was destroyed: try again later with `" + again + "`";
    return e;
  }
  if (look && (!look->has_value() || (*look)->state == InstanceState::terminated)) {
    e.message = why.message + "; " + rec.provider + " no longer has " + rec.name + " (" + rec.provider_id +
                "): `gpurent status --refresh` closes its record";
    return e;
  }
  const std::string state = look ? (*look)->raw_state : "not known (" + look.error().message + ")";
  e.message = why.message + "; " + rec.name + " (" + rec.provider + " " + rec.provider_id + ") is " + state +
              ", was NOT destroyed and may bill " + per_hour(rec.terms.price_per_hour) + ": check it with `gpurent status --refresh " +
              rec.name + "`, run `" + again + "` again, or stop it with `gpurent down " + rec.name + " --stop`";
  return e;
}

// SSH on the started server: the recorded host key, or the one the provider reports (both
// trusted); another key only with --accept-new-host-key; the first key of a server that never
// had one recorded on first use. Returns the fingerprint.
Result<std::string> verify_ssh(Services& s, const ServerRecord& rec, const Instance& in, const StartRequest& o,
                               std::vector<std::string>& changes)
{
  TRY_ASSIGN(SshOptions options, make_ssh_options(s, o.ssh));
  apply_remembered(s, options, o.ssh, rec);
  options.accept_new_host_key = false;
  if (!in.host_key.empty()) {
    options.expected_host_key = host_key_fingerprint_of(in.host_key).value_or(options.expected_host_key);
  }
  const std::string recorded = options.expected_host_key;
  // No key was ever seen (an `up` cut short before SSH answered): the first one is trusted and
  // recorded, as `up` does for a server it creates.
  options.accept_new_host_key = recorded.empty();
  const SshTarget target{rec.user.empty() ? "root" : rec.user, rec.host, rec.port};
  const WaitOptions wait = wait_options(s);
  auto probe = [&](const SshOptions& with) {
    return wait_ssh([&]() -> Result<std::string> {
      TRY_ASSIGN(auto session, connect_ssh(s, target, with));
      return session->host_key_fingerprint();
    }, s.clock, wait);
  };
  auto key = probe(options);
  if (!key && key.error().code == Errc::refused && !key.error().interrupted) {
    if (!o.ssh.accept_new_host_key) {
      Error e = key.error();
      e.message = rec.name + " is running (" + rec.provider + " " + rec.provider_id + ", billing " +
                  per_hour(rec.terms.price_per_hour) + ") but its host key was not accepted: " + key.error().message +
                  "; providers that re-create the container on start (RunPod) present a new key: once the provider's "
                  "console confirms it, run `" + o.verb + " " + rec.name + " --accept-new-host-key`, or stop it with "
                  "`gpurent down " + rec.name + " --stop`";
      return std::unexpected(e);
    }
    SshOptions fresh = options;
    fresh.expected_host_key.clear();
    fresh.accept_new_host_key = true;
    key = probe(fresh);
  }
  if (!key) {
    return std::unexpected(key.error());
  }
  if (!recorded.empty() && *key != recorded) {
    changes.push_back("host key: was " + recorded + ", now " + *key + " (accepted with --accept-new-host-key)");
  }
  return key;
}

}  // namespace

bool startable(const ServerRecord& rec) noexcept
{
  return rec.status == ServerStatus::stopped || rec.status == ServerStatus::hibernated ||
         (rec.status == ServerStatus::provisioning && !rec.provider_id.empty());
}

Result<StartReport> start_tracked(Services& s, const Config& cfg, StateStore& store, ServerRecord rec, const StartRequest& o)
{
  const std::string again = o.verb + " " + rec.name;
  StartReport report;
  if (rec.attached) {
    return fail(Errc::refused, rec.name + " is attached (rented in " + rec.provider + "'s console, which gpurent has no API for): "
                                          "start it there; `gpurent status` then shows it");
  }
  if (rec.status == ServerStatus::running) {
    report.record = rec;
    return report;
  }
  if (!startable(rec)) {
    return fail(Errc::refused, rec.name + " is " + std::string(to_string(rec.status)) + ", not stopped: nothing to start");
  }
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, rec.provider));
  Provider& p = *h.provider;
  const bool needs_start = rec.status != ServerStatus::provisioning;
  if (auto why = p.unsupported(Feature::start); why && needs_start) {
    return fail(Errc::refused, rec.provider + " cannot start a stopped server (" + *why + "); " + rec.name +
                                   " stays as it is and bills " + per_hour(billing_now(store, rec)));
  }
  TRY_ASSIGN(auto found, p.get(rec.provider_id));
  if (!found || found->state == InstanceState::terminated) {
    return fail(Errc::not_found, rec.provider + " no longer has " + rec.name + " (" + rec.provider_id +
                                     "): there is nothing to start; `gpurent status --refresh` closes its record");
  }
  const WaitOptions wait = [&] {
    WaitOptions w = wait_options(s);
    w.cancelled = [&s] { return s.signal_caught() != 0; };
    w.starting = true;
    return w;
  }();
  if (found->state != InstanceState::running && found->state != InstanceState::pending) {
    if (auto why = p.unsupported(Feature::start)) {
      return fail(Errc::refused, rec.name + " is " + found->raw_state + " at " + rec.provider + ", which cannot start a server (" +
                                     *why + "); it stays as it is and bills " + per_hour(billing_now(store, rec)));
    }
    const MicroUsd running = found->price_per_hour.n > 0 ? found->price_per_hour : rec.terms.price_per_hour;
    s.err << "gpurent: " << rec.name << " (" << rec.provider << " " << rec.provider_id << ", " << found->raw_state
          << " since " << iso_time(rec.status_since) << "): once running it bills " << per_hour(running)
          << " (it bills " << per_hour(billing_now(store, rec)) << " as it is now)\n"
          << "gpurent: " << availability(p, rec) << '\n';
    TRY(confirm(s, "Start " + rec.name + " on " + rec.provider + " (" + per_hour(running) + ")?"));
    if (auto started = p.start(rec.provider_id); !started) {
      return std::unexpected(not_started(s, p, store, rec, Error{started.error().code, rec.provider + " did not start " +
                                                                     rec.name + ": " + started.error().message}, again));
    }
    report.start_sent = true;
    TRY(store.record_state(rec.id, ServerStatus::provisioning, s.clock.now(), "start requested: " + rec.provider_id));
    rec.status = ServerStatus::provisioning;
  }
  auto up = wait_running(p, s.clock, rec.provider_id, wait, [&](const Instance& in) {
    if (!s.global.json) {
      s.err << "gpurent: " << rec.name << ": " << in.raw_state << (in.host.empty() ? "" : " at " + in.host) << '\n';
    }
  });
  if (!up) {
    return std::unexpected(not_started(s, p, store, rec, up.error(), again));
  }
  if (!up->card.empty() && (up->card != rec.card || (up->gpus != 0 && up->gpus != rec.gpus))) {
    report.changes.push_back("GPU: was " + gpu_text(rec.card, rec.gpus) + ", now " +
                             gpu_text(up->card, up->gpus != 0 ? up->gpus : rec.gpus));
  }
  if (up->host != rec.host || up->port != rec.port) {
    report.changes.push_back("address: was " + (rec.host.empty() ? std::string("none") : rec.host + ":" + std::to_string(rec.port)) +
                             ", now " + up->host + ":" + std::to_string(up->port));
  }
  const MicroUsd before = rec.terms.price_per_hour;
  TRY(adopt_reported_prices(s, store, rec, *up));
  if (rec.terms.price_per_hour != before) {
    report.changes.push_back("price: was " + per_hour(before) + ", now " + per_hour(rec.terms.price_per_hour));
  }
  // The connection is recorded once verified (or with --no-wait): a start whose SSH check failed
  // is looked at again by the next `start`, which then still sees what changed.
  rec.user = up->user.empty() ? rec.user : up->user;
  rec.host = up->host;
  rec.port = up->port;
  if (rec.status != ServerStatus::provisioning) {
    // Started by someone else meanwhile: billed from now, not verified until SSH answers.
    TRY(store.record_state(rec.id, ServerStatus::provisioning, s.clock.now(), rec.provider + " reports it " + up->raw_state));
    rec.status = ServerStatus::provisioning;
  }
  if (o.no_wait) {
    TRY(store.set_connection(rec.id, rec.user, rec.host, rec.port, rec.host_key));
    TRY(store.record_state(rec.id, ServerStatus::running, s.clock.now(), "started (SSH not checked: --no-wait)"));
  } else {
    auto key = verify_ssh(s, rec, *up, o, report.changes);
    if (!key) {
      Error e = key.error();  // stays provisioning: `start` looks at it again without a new call
      for (const auto& c : report.changes) {
        e.message += " (changed: " + c + ")";
      }
      return std::unexpected(e);
    }
    rec.host_key = *key;
    TRY(store.set_connection(rec.id, rec.user, rec.host, rec.port, rec.host_key));
    TRY(store.record_state(rec.id, ServerStatus::running, s.clock.now(), report.start_sent ? "started; SSH answered" : "SSH answered"));
  }
  TRY_ASSIGN(auto now, store.get_server(rec.id));
  report.record = now ? *now : rec;
  for (const auto& c : report.changes) {
    s.err << "gpurent: " << rec.name << ": " << c << '\n';
  }
  return report;
}

nlohmann::json start_json(const StartReport& r)
{
  const ServerRecord& v = r.record;
  return {{"name", v.name},
          {"provider", v.provider},
          {"provider_id", v.provider_id},
          {"card", v.card},
          {"gpus", v.gpus},
          {"state", std::string(to_string(v.status))},
          {"host", v.host},
          {"port", v.port},
          {"user", v.user},
          {"host_key", v.host_key},
          {"price_per_hour", to_units(v.terms.price_per_hour)},
          {"currency", v.terms.currency},
          {"started", r.start_sent},
          {"changes", r.changes}};
}

}  // namespace gpurent
