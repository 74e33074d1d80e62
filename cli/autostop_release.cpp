// SPDX-License-Identifier: MIT
// The second autostop stage for a server the first stage stopped (sync/autostop_release.hpp):
// the watchdog ended with the stop, so `status --refresh` and `autostop NAME` carry the release
// out, through the destroy `down --destroy` uses (recorded first, one DELETE, closed only when
// the provider confirms). docs/autostop.md "Stages".
#include <ostream>

#include "cli/autostop_support.hpp"
#include "cli/config.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"

namespace gpurent {
namespace {

std::optional<std::int64_t> int_at(const nlohmann::json& j, const char* key)
{
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) {
    return j[key].get<std::int64_t>();
  }
  return std::nullopt;
}

// The stop the ledger holds was seen by `status --refresh` (the provider's word), not asked for
// by `gpurent down --stop` or confirmed by the user.
bool stopped_by_refresh(StateStore& store, const ServerRecord& r)
{
  const auto ev = store.events(r.id);
  return ev && !ev->empty() && ev->back().status == ServerStatus::stopped && ev->back().note.starts_with("refresh:");
}

}  // namespace

std::optional<AutostopReleaseInput> autostop_release_input(StateStore& store, const ServerRecord& r, TimePoint now)
{
  auto rec = store.autostop(r.id);
  if (!rec || !*rec) {
    return std::nullopt;
  }
  const auto settings = nlohmann::json::parse((*rec)->settings_json, nullptr, false);
  const auto last = nlohmann::json::parse((*rec)->last_json.empty() ? "null" : (*rec)->last_json, nullptr, false);
  if (!settings.is_object()) {
    return std::nullopt;
  }
  AutostopReleaseInput in;
  in.then = settings.value("then", "");
  in.release_after_s = int_at(settings, "release_after_s").value_or(0);
  in.can_stop_billing = settings.value("can_stop_billing", false) && !r.attached;
  in.no_backup = settings.value("no_backup", false);
  in.armed_at = to_unix((*rec)->armed_at);
  in.stopped = r.status == ServerStatus::stopped;
  in.stopped_at = to_unix(r.status_since);
  in.now = to_unix(now);
  if (last.is_object()) {
    const bool ended_by_hand = last.contains("ended") && last["ended"].is_object() &&
                               last["ended"].value("why", "") != "stop";
    // Autostop's stop: the one its log showed, or the one its last read idle run predicts.
    const auto logged = int_at(last, "stop_at");
    const auto since = int_at(last, "idle_since");
    const auto limit = int_at(last, "idle_limit_s");
    if (logged && *logged == in.stopped_at) {
      in.autostop_stop_at = logged;
    } else if (!ended_by_hand && since && limit && *since + *limit == in.stopped_at) {
      in.autostop_stop_at = *since + *limit;
    } else if (!ended_by_hand && (*rec)->active && stopped_by_refresh(store, r)) {
      // gpurent did not read the idle run (the usual case: the watchdog stops the server and
      // ends with it between two looks); the provider reported the stop while the watchdog was
      // armed and able to stop it, and no gpurent command stopped it.
      in.autostop_stop_at = in.stopped_at;
    }
    if (last.contains("backup") && last["backup"].is_object()) {
      const auto& b = last["backup"];
      AutostopEvent e;
      e.kind = "backup";
      e.at = int_at(b, "at").value_or(0);
      e.ok = b.value("ok", false);
      e.stage = static_cast<int>(int_at(b, "stage").value_or(0));
      e.detail = b.value("detail", "");
      in.backup = e;
    }
  }
  return in;
}

nlohmann::json autostop_release_json(const AutostopRelease& d)
{
  const char* next = d.kind == AutostopReleaseKind::wait || d.kind == AutostopReleaseKind::release ? "destroy" : "none";
  return {{"next_action", next},
          {"next_action_at", d.at && std::string_view(next) == "destroy" ? nlohmann::json(iso_time(from_unix(*d.at)))
                                                                          : nlohmann::json(nullptr)},
          {"release_due_at", d.at ? nlohmann::json(iso_time(from_unix(*d.at))) : nlohmann::json(nullptr)},
          {"why", d.why.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.why)}};
}

Result<std::optional<AutostopRelease>> release_autostopped(Services& s, StateStore& store, ServerRecord& r)
{
  if (r.status != ServerStatus::stopped || r.attached) {
    return std::optional<AutostopRelease>{};
  }
  const auto in = autostop_release_input(store, r, s.clock.now());
  if (!in) {
    return std::optional<AutostopRelease>{};
  }
  const AutostopRelease d = autostop_release_decision(*in);
  if (d.kind == AutostopReleaseKind::refused && d.at && in->now >= *d.at) {
    report_warning(s, r.name + ": autostop's release (destroy) was due at " + iso_time(from_unix(*d.at)) + ", but " + d.why +
                          ". It stays stopped and may still bill: check the backup at its target, then `gpurent down " + r.name +
                          " --destroy --no-backup` (a stopped server cannot be backed up), or start it and `gpurent down " +
                          r.name + " --destroy`");
  }
  if (d.kind != AutostopReleaseKind::release) {
    return std::optional<AutostopRelease>{d};
  }
  s.err << "gpurent: " << r.name << ": autostop stopped it at " << iso_time(from_unix(in->stopped_at)) << "; releasing it now ("
        << (in->no_backup ? std::string("--no-backup was given when arming")
                          : "the server's verified backup: " + in->backup->detail)
        << ")\n";
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, r.provider));
  TRY_ASSIGN(DestroyRecord done, destroy_tracked(s, *h.provider, store, r, "autostop release after " +
                                                     std::to_string(in->release_after_s) + " s stopped", false));
  r.status = done.status;
  if (auto rec = store.autostop(r.id); rec && *rec) {
    auto last = nlohmann::json::parse((*rec)->last_json.empty() ? "{}" : (*rec)->last_json, nullptr, false);
    if (!last.is_object()) {
      last = nlohmann::json::object();
    }
    last["release"] = {{"at", iso_time(s.clock.now())},
                       {"result", std::string(to_string(done.status))},
                       {"detail", done.outcome.confirmed ? std::string("confirmed by ") + r.provider : done.outcome.error.message}};
    (*rec)->last_json = last.dump();
    (*rec)->active = false;
    TRY(store.put_autostop(**rec));
  }
  if (!done.outcome.confirmed) {
    return fail(Errc::unavailable, r.name + " is " + std::string(to_string(done.status)) + ", not confirmed destroyed (" +
                                       done.outcome.error.message + "); it may still bill");
  }
  s.err << "gpurent: " << r.name << ": destroyed by autostop's release (confirmed by " << r.provider << "); " << done.billed << '\n';
  return std::optional<AutostopRelease>{d};
}

}  // namespace gpurent
