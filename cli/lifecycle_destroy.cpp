// SPDX-License-Identifier: MIT
#include "cli/lifecycle_destroy.hpp"

#include <ostream>

#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "providers/catalog.hpp"
#include "providers/ledger.hpp"

namespace gpurent {

std::string billed_text(StateStore& store, const ServerRecord& rec, TimePoint now)
{
  auto ev = store.events(rec.id);
  if (!ev) {
    return {};
  }
  const LedgerTotals t = accrue(rec.terms, *ev, now);
  const MicroUsd cost = t.accrued;
  const std::string existed = t.running_s.count() == 0 ? std::string("under a second")
                                                        : std::to_string(t.running_s.count()) + " s";
  return "existed " + existed + ", billed " + std::to_string(t.billed_full_s.count()) +
          " s at " + per_hour(rec.terms.price_per_hour) + " = " + money_text(cost) + " (" +
         rec.provider + " bills in " + increment_label(rec.terms.billing.increment) + " increments)";
}

Result<DestroyRecord> destroy_tracked(Services& s, Provider& p, StateStore& store, const ServerRecord& rec,
                                      std::string_view reason, bool retry)
{
  if (rec.status != ServerStatus::destroying) {
    TRY(store.record_state(rec.id, ServerStatus::destroying, s.clock.now(), "destroy requested: " + std::string(reason)));
  }
  crash_point(s, "destroy-recorded");
  DestroyHooks hooks;
  hooks.look_first = retry;
  hooks.on_accepted = [&s] { crash_point(s, "destroy-called"); };
  DestroyRecord out;
  out.outcome = destroy_confirmed(p, s.clock, rec.provider_id, wait_options(s), hooks);
  const auto now = s.clock.now();
  if (out.outcome.confirmed) {
    TRY(store.record_state(rec.id, ServerStatus::destroyed, now,
                           "destroy confirmed by the provider (" + std::to_string(out.outcome.requests) +
                               " destroy request" + (out.outcome.requests == 1 ? "" : "s") + ")"));
    out.status = ServerStatus::destroyed;
    out.billed = billed_text(store, rec, now);
    return out;
  }
  if (!out.outcome.accepted) {
    TRY(store.record_state(rec.id, ServerStatus::destroy_failed, now, "destroy failed: " + out.outcome.error.message));
    out.status = ServerStatus::destroy_failed;
  }
  TRY_ASSIGN(auto ev, store.events(rec.id));
  out.billed = billed_text(store, rec, now);
  report_warning(s, rec.name + " (" + rec.provider + " " + rec.provider_id + ") is NOT confirmed destroyed: " +
                        out.outcome.error.message + ". It may still bill " + per_hour(rate_now(rec.terms, ev)) +
                        ". Retry with `gpurent down " + rec.name + " --destroy` or `gpurent status --refresh`, or "
                        "destroy it in " + rec.provider + "'s console");
  return out;
}

}  // namespace gpurent
