// SPDX-License-Identifier: MIT
// `gpurent down NAME --stop | --hibernate | --destroy | --released`: says what the new state
// costs per hour and what it loses BEFORE acting; refuses a state the provider lacks; --destroy
// backs up first and refuses (exit 3) unless the latest backup is verified and newer than the
// last change; one destroy request, and the ledger is closed only once the provider confirms.
// An attached server cannot be destroyed by gpurent: it becomes `release_pending` (still billed)
// until `--released` (the user's word) or `status --refresh` sees the host gone.
#include <CLI/CLI.hpp>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/backup_place.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/destroy_backup.hpp"
#include "cli/group_support.hpp"
#include "cli/down.hpp"
#include "cli/interrupt.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/server_names.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "common/rounding.hpp"
#include "providers/ledger.hpp"
#include "sync/backup.hpp"

namespace gpurent {
namespace {

struct DownOptions {
  std::string name;
  bool stop = false;
  bool hibernate = false;
  bool destroy = false;
  bool released = false;
  bool no_backup = false;
  bool force = false;
  std::string to;
  std::vector<std::string> paths;
  SshFlags ssh;
  InterruptWatch* watch = nullptr;  // the command's own (not when run --then or autostop calls down)
};

// The backup before a destroy stops at the next block of data once a signal is caught.
class DownBackupObserver final : public BackupObserver {
public:
  explicit DownBackupObserver(const Services& s) : m_s(s) {}
  void on_progress(const BackupProgress&) override {}
  void on_warning(std::string_view) override {}
  [[nodiscard]] bool cancelled() const override { return m_s.signal_caught() != 0; }

private:
  const Services& m_s;
};

void last_words(const DownOptions& o, const std::string& text)
{
  if (o.watch != nullptr) {
    o.watch->set_last_words(text);
  }
}

// What an interrupted `down` leaves: what it was doing, then what still bills.
Error interrupted_down(Services& s, StateStore& store, const ServerRecord& rec, const std::string& what,
                       const std::string& next)
{
  auto now = store.find_server(rec.name);
  const ServerRecord& latest = now && *now ? **now : rec;  // the destroy or stop may have moved it on
  return interrupted_error(what + " (" + caught_signal_name(s) + "): " + rec.name + " is recorded as " +
                           std::string(to_string(latest.status)) + " and bills " + per_hour(billing_now(store, latest)) +
                           "; " + next);
}

// The flags as the user gave them, for a hint that repeats them.
DownFlags given_flags(const Services& s, const DownOptions& o)
{
  const char* mode = o.destroy ? "destroy" : o.stop ? "stop" : o.hibernate ? "hibernate" : "released";
  return DownFlags{o.name, mode, o.no_backup, o.force, o.paths, o.to, o.ssh, s.global.yes, s.global.json, s.global.verbose};
}

// A stopped (or hibernated) server answers no SSH: it cannot be backed up until it runs again.
std::string start_first(const ServerRecord& rec)
{
  const std::string start = rec.attached ? "start it in " + rec.provider + "'s console"
                                         : "start it with `gpurent start " + rec.name + "`";
  return "refusing to destroy " + rec.name + ": it is " + std::string(to_string(rec.status)) +
         ", so it cannot be backed up: " + start + ", then run `gpurent down " + rec.name +
         " --destroy` again; or, if nothing on it matters, `gpurent down " + rec.name + " --destroy --no-backup`";
}

nlohmann::json down_view(StateStore& store, const ServerRecord& rec, ServerStatus state, TimePoint now,
                         const std::string& loses)
{
  auto ev = store.events(rec.id);
  const LedgerTotals totals = ev ? accrue(rec.terms, *ev, now) : LedgerTotals{};
  const MicroUsd rate = ev ? rate_now(rec.terms, *ev) : MicroUsd{0};
  return nlohmann::json{{"name", rec.name},
                        {"provider", rec.provider},
                        {"state", std::string(to_string(state))},
                        {"cost_per_hour_now", to_units(rate)},
                        {"accrued_cost", to_units(totals.accrued)},
                        {"currency", rec.terms.currency},
                        {"loses", loses}};
}

// `down NAME --released`: the user's word that an attached server was released in the console.
Result<nlohmann::json> confirm_released(Services& s, StateStore& store, const ServerRecord& rec)
{
  if (!rec.attached) {
    return fail(Errc::usage, "--released is for servers tracked with `gpurent attach`; " + rec.name + " is on " +
                                 rec.provider + "'s API: use `gpurent down " + rec.name + " --destroy`, which "
                                 "asks the provider to confirm");
  }
  if (rec.status != ServerStatus::release_pending) {
    report_warning(s, rec.name + " was not backed up by `gpurent down " + rec.name + " --destroy` first");
  }
  TRY(store.record_state(rec.id, ServerStatus::destroyed, s.clock.now(), "released in the console: confirmed by the user"));
  s.err << "gpurent: " << rec.name << ": released (your word); the ledger is closed\n";
  return down_view(store, rec, ServerStatus::destroyed, s.clock.now(), rec.terms.destroy_loses);
}

std::string release_action(const ServerRecord& rec)
{
  return "destroy it in " + rec.provider + "'s console (" + rec.user + "@" + rec.host + ":" + std::to_string(rec.port) +
         "), then run `gpurent down " + rec.name + " --released`";
}

// A server created with no recorded id (a crash before the create answered): find it by name.
Result<bool> adopt_by_name(Services& s, Provider& p, StateStore& store, ServerRecord& rec)
{
  TRY_ASSIGN(auto found, find_named(p, s.clock, rec.name, wait_options(s)));
  if (!found) {
    TRY(store.record_state(rec.id, ServerStatus::failed, s.clock.now(), "down: the provider never created it"));
    s.err << "gpurent: " << rec.name << ": " << rec.provider << " has no server by that name: it was never created; "
          << "the record is closed\n";
    return false;
  }
  TRY(store.set_provider_id(rec.id, found->id));
  rec.provider_id = found->id;
  return true;
}

Result<nlohmann::json> run_down_steps(Services& s, const DownOptions& o, std::optional<PreparedBackup>& backup)
{
  const int chosen = int{o.stop} + int{o.hibernate} + int{o.destroy} + int{o.released};
  if (chosen != 1) {
    return fail(Errc::usage, "down: give exactly one of --stop, --hibernate, --destroy, --released");
  }
  TRY_ASSIGN(StateStore* store, s.state());
  TRY_ASSIGN(auto found, store->find_server(o.name));
  if (!found || is_closed(found->status)) {
    return fail(Errc::not_found, "no tracked server named '" + o.name + "' is open; " +
                                     unknown_name_hint(*store, o.name, "see `gpurent status`"));
  }
  ServerRecord rec = *found;
  if (o.released) {
    return confirm_released(s, *store, rec);
  }
  TRY_ASSIGN(const Config cfg, load_config(s));
  const ServerStatus target = o.destroy ? ServerStatus::destroyed : o.stop ? ServerStatus::stopped : ServerStatus::hibernated;
  const char* verb = o.destroy ? "destroy" : o.stop ? "stop" : "hibernate";
  const bool destroy_again = o.destroy && (rec.status == ServerStatus::destroying || rec.status == ServerStatus::destroy_failed);
  if (!o.destroy && (rec.status == ServerStatus::destroying || rec.status == ServerStatus::destroy_failed ||
                     rec.status == ServerStatus::release_pending)) {
    return fail(Errc::refused, "cannot " + std::string(verb) + " " + rec.name + ": it is " +
                                   std::string(to_string(rec.status)) + "; finish with `gpurent down " + rec.name +
                                   (rec.attached ? " --released`" : " --destroy`"));
  }
  if (o.destroy && rec.status == ServerStatus::release_pending) {
    s.err << "gpurent: " << rec.name << " is backed up and waiting for you: " << release_action(rec)
          << "; it bills until then\n";
    return down_view(*store, rec, rec.status, s.clock.now(), rec.terms.destroy_loses);
  }

  // 1. The state must exist at this provider (and for this kind of server).
  if (!o.destroy) {
    const StateRule& rule = o.stop ? rec.terms.stopped : rec.terms.hibernated;
    if (!rule.available) {
      return fail(Errc::refused, "cannot " + std::string(verb) + " " + rec.name + ": " + rule.unavailable_reason);
    }
    if (rec.spot && !rule.allowed_on_spot) {
      return fail(Errc::refused, "cannot " + std::string(verb) + " " + rec.name + ": " +
                                     (rule.spot_reason.empty() ? "not allowed on a spot server" : rule.spot_reason));
    }
  }
  std::optional<ProviderHandle> handle;
  if (!rec.attached) {
    TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, rec.provider));
    const Feature f = o.stop ? Feature::stop : Feature::hibernate;
    if (!o.destroy) {
      if (auto why = h.provider->unsupported(f)) {
        return fail(Errc::refused, "cannot " + std::string(verb) + " " + rec.name + ": " + *why);
      }
    }
    handle = std::move(h);
  }

  // 2. What the new state costs and loses, before anything happens.
  TRY_ASSIGN(auto events_before, store->events(rec.id));
  const MicroUsd now_rate = rate_now(rec.terms, events_before);
  const MicroUsd new_rate = o.destroy ? (rec.attached ? now_rate : MicroUsd{0}) : rate_in(rec.terms, target);
  std::string loses = o.destroy ? rec.terms.destroy_loses : (o.stop ? rec.terms.stopped.loses : rec.terms.hibernated.loses);
  std::string keeps = o.destroy ? std::string{} : (o.stop ? rec.terms.stopped.keeps : rec.terms.hibernated.keeps);
  s.err << "gpurent: " << verb << " " << rec.name << " (" << rec.provider << " " << rec.card << " x" << rec.gpus
        << "): cost per hour " << per_hour(now_rate) << " -> " << per_hour(new_rate);
  if (!o.destroy && (o.stop ? rec.terms.stopped.bills_full_rate : rec.terms.hibernated.bills_full_rate)) {
    s.err << " (still billed at the FULL rate)";
  }
  if (o.destroy && rec.attached) {
    s.err << " until you release it in " << rec.provider << "'s console";
  }
  s.err << "\n  loses: " << (loses.empty() ? "nothing stated by the provider" : loses) << '\n';
  if (!keeps.empty()) {
    s.err << "  keeps: " << keeps << '\n';
  }
  const std::string& note = o.stop ? rec.terms.stopped.storage_note : rec.terms.hibernated.storage_note;
  if (!o.destroy && !note.empty()) {
    s.err << "  plus storage: " << note << '\n';
  }

  // 3. What the backup holds, found out and shown before the question (the server is asked
  //    what is at each path, nothing is copied yet).
  const bool backs_up = o.destroy && !destroy_again && !o.no_backup && !o.force;
  if (backs_up) {
    if (rec.host.empty()) {
      return fail(Errc::refused, "cannot back up " + rec.name + " before destroying it: no SSH address is known; "
                                 "use --no-backup if nothing on it matters");
    }
    if (rec.status == ServerStatus::stopped || rec.status == ServerStatus::hibernated) {
      return fail(Errc::refused, start_first(rec));
    }
    auto prepared = prepare_destroy_backup(s, *store, rec, cfg, given_flags(s, o));
    if (!prepared) {
      if (prepared.error().code == Errc::refused || prepared.error().interrupted) {
        return std::unexpected(prepared.error());
      }
      return fail(Errc::refused, "refusing to destroy " + rec.name + ": the backup failed (" + prepared.error().message +
                                     "); fix it and retry, or pass --no-backup");
    }
    backup = std::move(*prepared);
    s.err << backup_plan_text(*backup);
  }

  // 4. Asked before anything slow or billable happens: the backup below may take hours of
  //    billed time, and an unconfirmed destroy must not start it.
  TRY(confirm(s, std::string("Really ") + verb + " " + rec.name + "?" +
                     (backs_up ? " (a verified backup runs first; the destroy follows only if it succeeds)" : "")));

  // 5. Destroy only after a verified backup newer than the last change (a retried destroy was
  //    decided, backed up or not, the first time).
  if (destroy_again) {
    s.err << "gpurent: " << rec.name << " is " << to_string(rec.status) << ": retrying the destroy (no new backup)\n";
  } else if (o.destroy) {
    if (o.no_backup || o.force) {
      report_warning(s, "destroying without a verified backup (" + std::string(o.force ? "--force" : "--no-backup") + ")");
    } else {
      const std::string resume = down_command_line(given_flags(s, o));
      last_words(o, "gpurent: " + rec.name + " was NOT destroyed and bills " + per_hour(now_rate) +
                        "; its backup is incomplete: `" + resume + "` resumes it (" + backup->plan.dest + ")\n");
      DownBackupObserver observer(s);
      auto b = run_destroy_backup(s, *store, rec, *backup, observer);
      if (!b && (b.error().interrupted || s.signal_caught() != 0)) {
        return std::unexpected(interrupted_down(s, *store, rec, "backing up " + rec.name + " before destroying it",
                                                "nothing was destroyed; the files copied so far are kept in " +
                                                    backup->plan.dest + ", and `" + resume +
                                                    "` resumes the backup, then destroys (the same paths, to the same place)"));
      }
      if (!b) {
        return fail(Errc::refused, "refusing to destroy " + rec.name + ": the backup failed (" + b.error().message +
                                       "); fix it and retry, or pass --no-backup");
      }
      TRY_ASSIGN(auto latest, store->latest_backup(rec.id));
      if (!latest || !latest->verified || latest->at < rec.last_change) {
        return fail(Errc::refused, "refusing to destroy " + rec.name + ": the latest backup is not verified or is "
                                   "older than the last change; run `gpurent backup " + rec.name + "` or pass --no-backup");
      }
    }
  }
  if (s.signal_caught() != 0) {
    return std::unexpected(interrupted_down(s, *store, rec, "before the " + std::string(verb) + " request",
                                            "nothing was asked of " + rec.provider + (o.destroy && !o.no_backup && !o.force ?
                                            " (the backup stands)" : std::string{}) + "; run `" + down_command_line(given_flags(s, o)) +
                                            "` again to " + verb + " it"));
  }
  const auto wait = wait_options(s);
  if (rec.attached && o.destroy) {
    // gpurent cannot destroy it: it stays billed until the user says it is released (never --yes).
    TRY(store->record_state(rec.id, ServerStatus::release_pending, s.clock.now(),
                            "backed up for destroying; waiting for the release in the console"));
    s.err << "gpurent: " << rec.name << " was rented outside gpurent, so gpurent cannot destroy it: " << release_action(rec)
          << ". It is billed until then; `gpurent status --refresh` also takes it as released once its SSH stays "
             "unreachable for a minute or presents another host key\n";
    return down_view(*store, rec, ServerStatus::release_pending, s.clock.now(), loses);
  }
  if (rec.attached) {
    s.err << "gpurent: " << rec.name << " was rented outside gpurent: " << verb << " it in " << rec.provider
          << "'s console now (" << rec.user << "@" << rec.host << ")\n";
    TRY(confirm(s, "Has " + rec.name + " been " + (o.stop ? "stopped" : "hibernated") + " in the provider's console?"));
    TRY(store->record_state(rec.id, target, s.clock.now(), std::string(verb) + " confirmed by the user"));
  } else if (o.destroy) {
    Provider& p = *handle->provider;
    if (rec.provider_id.empty()) {
      TRY_ASSIGN(const bool exists, adopt_by_name(s, p, *store, rec));
      if (!exists) {
        return down_view(*store, rec, ServerStatus::failed, s.clock.now(), loses);
      }
    }
    last_words(o, "gpurent: " + rec.name + " is recorded as destroying and may bill " + per_hour(now_rate) +
                      " until " + rec.provider + " confirms it: `gpurent status --refresh` confirms it\n");
    TRY_ASSIGN(DestroyRecord d, destroy_tracked(s, p, *store, rec, "gpurent down --destroy", destroy_again));
    if (!d.outcome.confirmed && d.outcome.error.interrupted) {
      return std::unexpected(interrupted_down(s, *store, rec, interrupted_step(d.outcome.error),
                                              "`gpurent status --refresh` asks " + rec.provider + " whether it is gone, "
                                              "and `gpurent down " + rec.name + " --destroy` sends the destroy again "
                                              "(once: it looks first)"));
    }
    if (!d.outcome.confirmed) {
      return fail(Errc::unavailable, rec.name + " is " + std::string(to_string(d.status)) + ", not confirmed destroyed (" +
                                         d.outcome.error.message + "); it may still bill");
    }
    s.err << "gpurent: " << rec.name << " destroyed (confirmed by " << rec.provider << "); " << d.billed << '\n';
  } else {
    Provider& p = *handle->provider;
    TRY(o.stop ? p.stop(rec.provider_id) : p.hibernate(rec.provider_id));
    if (o.stop) {
      last_words(o, "gpurent: " + rec.name + " was asked to stop; it is recorded as " + std::string(to_string(rec.status)) +
                        " (" + per_hour(now_rate) + ") until `gpurent status --refresh` sees it stopped\n");
      if (auto stopped = wait_stopped(p, s.clock, rec.provider_id, wait); !stopped) {
        if (stopped.error().interrupted) {
          return std::unexpected(interrupted_down(s, *store, rec, interrupted_step(stopped.error()),
                                                  "the stop was sent; `gpurent status --refresh` records it once " +
                                                      rec.provider + " reports it stopped"));
        }
        return std::unexpected(stopped.error());
      }
    }
    TRY(store->record_state(rec.id, target, s.clock.now(), std::string(verb) + " confirmed by the provider"));
  }
  return down_view(*store, rec, target, s.clock.now(), loses);
}

// The command's document; with the backup before a destroy, what it held ("backup").
Result<nlohmann::json> run_down(Services& s, const DownOptions& o)
{
  std::optional<PreparedBackup> backup;
  auto view = run_down_steps(s, o, backup);
  if (view && backup) {
    (*view)["backup"] = backup_plan_json(*backup);
  }
  return view;
}

}  // namespace

Result<nlohmann::json> down_server(Services& s, const DownRequest& r)
{
  DownOptions o;
  o.name = r.name;
  o.stop = r.mode == "stop";
  o.hibernate = r.mode == "hibernate";
  o.destroy = r.mode == "destroy";
  o.paths = r.backup_paths;
  o.to = r.backup_to;
  o.ssh = r.ssh;
  const bool yes = s.global.yes;
  s.global.yes = true;
  auto out = run_down(s, o);
  s.global.yes = yes;
  return out;
}

namespace {

int down_and_say(Services& s, const DownOptions& o)
{
  auto r = run_down(s, o);
  if (!r) {
    return report_error(s, r.error());
  }
  if (s.global.json) {
    s.out << r->dump(2) << '\n';
  } else {
    const std::string state = (*r)["state"].get<std::string>();
    s.out << (*r)["name"].get<std::string>() << ": " << state << ", accrued "
          << money_text(MicroUsd{round_to_i64((*r)["accrued_cost"].get<double>() * 1e6)});
    if (state == "release_pending") {
      s.out << "; still billed " << per_hour(MicroUsd{round_to_i64((*r)["cost_per_hour_now"].get<double>() * 1e6)})
            << " until you release it and run `gpurent down " << o.name << " --released`";
    }
    s.out << "\n";
  }
  return 0;
}

}  // namespace

void add_down_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<DownOptions>();
  auto* sub = app.add_subcommand("down", "stop, hibernate or destroy a tracked server (says what it costs and loses first)");
  sub->add_option("name", opts->name, "the server, or a server group (every member)")->required();
  sub->add_flag("--stop", opts->stop, "stop it (see what the provider still bills)");
  sub->add_flag("--hibernate", opts->hibernate, "hibernate it where the provider has that");
  sub->add_flag("--destroy", opts->destroy, "destroy it, after a verified backup (attached: back up, then release it in the console)");
  sub->add_flag("--released", opts->released, "an attached server was released in the provider's console: close its record");
  sub->add_flag("--no-backup", opts->no_backup, "destroy without a backup (still confirmed)");
  sub->add_flag("--force", opts->force, "destroy even when the backup is missing or stale (still confirmed)");
  sub->add_option("--to", opts->to, "backup directory (default: backup_dir/NAME, else ~/.local/share/gpurent/backups/NAME)");
  sub->add_option("--path", opts->paths, "also back up this remote path (besides every directory push/run used and the provider's volume path); repeatable");
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    InterruptWatch watch(s);
    opts->watch = &watch;
    if (auto group = find_group(s, opts->name)) {
      s.exit_code = for_each_member(s, *group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
        DownOptions one = *opts;
        one.name = m.name;
        return down_and_say(ms, one);
      });
    } else {
      s.exit_code = down_and_say(s, *opts);
    }
    opts->watch = nullptr;
  });
}

}  // namespace gpurent
