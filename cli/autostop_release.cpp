// SPDX-License-Identifier: MIT
// The second autostop stage for a server the first stage stopped (sync/autostop_release.hpp):
// the watchdog ended with the stop, so `status --refresh` and `autostop NAME` carry the release
// out, through the destroy `down --destroy` uses (recorded first, one DELETE, closed only when
// the provider confirms). docs/autostop.md "Stages".
#include <functional>
#include <ostream>

#include "cli/autostop_support.hpp"
#include "cli/config.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "sync/autostop_target.hpp"

namespace gpurent {
namespace {

std::optional<std::int64_t> int_at(const nlohmann::json& j, const char* key)
{
  if (j.is_object() && j.contains(key) && j[key].is_number_integer()) {
    return j[key].get<std::int64_t>();
  }
  return std::nullopt;
}

std::string string_at(const nlohmann::json& j, const char* key)
{
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// The stop the ledger holds was seen by `status --refresh` (the provider's word), not asked for
// by `gpurent down --stop` or confirmed by the user.
bool stopped_by_refresh(StateStore& store, const ServerRecord& r)
{
  const auto ev = store.events(r.id);
  return ev && !ev->empty() && ev->back().status == ServerStatus::stopped && ev->back().note.starts_with("refresh:");
}

// The verified backup at the target, checked from here: the server is stopped, so the target
// is the only witness left (sync/autostop_target.hpp). An error: gpurent could not log in there
// (unreachable, unknown host key, no key it accepts).
Result<TargetBackupCheck> check_backup_at_target(Services& s, const BackupTarget& target, const std::string& stem)
{
  TRY_ASSIGN(const SshOptions options, make_ssh_options(s, SshFlags{}));
  TRY_ASSIGN(auto session, connect_ssh(s, target.ssh_target(), options));
  TRY_ASSIGN(const ExecResult ran, session->exec(autostop_target_check_command(target, stem)));
  return parse_autostop_target_check(ran.out, target, stem);
}

// Changes what gpurent recorded of the server's autostop (its `last` document, an object).
Result<void> update_autostop_last(StateStore& store, const ServerRecord& r,
                                  const std::function<void(nlohmann::json&, AutostopRecord&)>& change)
{
  auto rec = store.autostop(r.id);
  if (!rec || !*rec) {
    return {};
  }
  auto last = nlohmann::json::parse((*rec)->last_json.empty() ? "{}" : (*rec)->last_json, nullptr, false);
  if (!last.is_object()) {
    last = nlohmann::json::object();
  }
  change(last, **rec);
  (*rec)->last_json = last.dump();
  return store.put_autostop(**rec);
}

// Where the release waits only on the backup (autostop_release_wants_target_check), checks it
// at the target and updates `in` and `d`; a target gpurent cannot log in to leaves the log's
// word to decide. Returns how the backup was checked, for the user.
std::string check_target(Services& s, StateStore& store, const ServerRecord& r, AutostopReleaseInput& in, AutostopRelease& d)
{
  if (!autostop_release_wants_target_check(in)) {
    return {};
  }
  const auto target = parse_backup_target(in.backup_to);
  if (!target) {
    return {};
  }
  const std::string dest = target->ssh_destination();
  const auto check = check_backup_at_target(s, *target, in.backup_stem);
  if (!check) {
    if (d.kind == AutostopReleaseKind::refused) {
      d.why += "; gpurent could not check " + dest + " itself either (" + check.error().message + ")";
    }
    return "not checked at " + dest + " (" + check.error().message + "): as the watchdog logged it";
  }
  d = autostop_release_after_target_check(in, *check);
  if (!check->verified) {
    return {};
  }
  const AutostopEvent& b = *check->verified;
  (void)update_autostop_last(store, r, [&](nlohmann::json& last, AutostopRecord&) {
    last["backup"] = {{"at", b.at}, {"ok", b.ok}, {"stage", b.stage}, {"detail", b.detail},
                      {"checked_at_target", iso_time(s.clock.now())}};
  });
  return "checked at " + dest + " just now";
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
  in.backup_to = string_at(settings, "backup_to");
  in.backup_stem = string_at(settings, "backup_stem");
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
  auto in = autostop_release_input(store, r, s.clock.now());
  if (!in) {
    return std::optional<AutostopRelease>{};
  }
  AutostopRelease d = autostop_release_decision(*in);
  const std::string checked = check_target(s, store, r, *in, d);
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
                          : "the server's verified backup: " + in->backup->detail + (checked.empty() ? "" : ", " + checked))
        << ")\n";
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, r.provider));
  TRY_ASSIGN(DestroyRecord done, destroy_tracked(s, *h.provider, store, r, "autostop release after " +
                                                     std::to_string(in->release_after_s) + " s stopped", false));
  r.status = done.status;
  TRY(update_autostop_last(store, r, [&](nlohmann::json& last, AutostopRecord& rec) {
    last["release"] = {{"at", iso_time(s.clock.now())},
                       {"result", std::string(to_string(done.status))},
                       {"detail", done.outcome.confirmed ? std::string("confirmed by ") + r.provider : done.outcome.error.message}};
    rec.active = false;
  }));
  if (!done.outcome.confirmed) {
    return fail(Errc::unavailable, r.name + " is " + std::string(to_string(done.status)) + ", not confirmed destroyed (" +
                                       done.outcome.error.message + "); it may still bill");
  }
  s.err << "gpurent: " << r.name << ": destroyed by autostop's release (confirmed by " << r.provider << "); " << done.billed << '\n';
  return std::optional<AutostopRelease>{d};
}

}  // namespace gpurent
