// SPDX-License-Identifier: MIT
#include "providers/cost.hpp"

#include "providers/cloud_rules.hpp"

namespace gpurent {
namespace {

using std::chrono::seconds;

MicroUsd running_rate(const Offer& offer, bool spot)
{
  if (spot && offer.spot_price_per_hour.has_value()) {
    return *offer.spot_price_per_hour;
  }
  return offer.price_per_hour;
}

MicroUsd state_rate(const StateRule& rule, MicroUsd running)
{
  return rule.bills_full_rate ? running : rule.fixed_per_hour;
}

StateCost bill(const BillingPolicy& policy, MicroUsd rate, seconds time)
{
  StateCost c;
  c.time = time;
  c.rate_per_hour = rate;
  c.billed = policy.billed_seconds(time);
  c.exact = policy.charge(rate, time);
  c.cost = round_to_cents(c.exact);
  return c;
}

Result<void> check_state(const ProviderInfo& p, const StateRule& rule, const char* state, bool spot)
{
  if (!rule.available) {
    return fail(Errc::refused, std::string(state) + " time on " + p.name + ": " + rule.unavailable_reason);
  }
  if (spot && !rule.allowed_on_spot) {
    return fail(Errc::refused, std::string(state) + " time on a spot server: " + rule.spot_reason);
  }
  return {};
}

void add_notes(CostBreakdown& b, const ProviderInfo& p, seconds stopped)
{
  const auto& pol = b.billing;
  if (!billing_known(p)) {
    b.notes.push_back("billing unknown: " + p.name + " publishes no billing rule gpurent found; per hour assumed");
  }
  std::string how = "billed in " + increment_label(pol.increment) + " increments, rounded up";
  if (pol.minimum.count() > 0) {
    how += ", " + increment_label(pol.minimum) + " minimum";
  }
  b.notes.push_back(how);
  if (pol.charged_at_deploy.count() > 0) {
    b.notes.push_back("first " + increment_label(pol.charged_at_deploy) + " charged at deploy");
  }
  if (p.stopped.available && p.stopped.bills_full_rate) {
    b.notes.push_back("stopped servers bill the full rate on " + p.name);
  } else if (!p.stopped.available) {
    b.notes.push_back("no stop: " + p.stopped.unavailable_reason);
  } else if (!p.stopped.storage_note.empty()) {
    b.notes.push_back(std::string(stopped.count() > 0 ? "not included: " : "when stopped: ") + p.stopped.storage_note);
  }
  if (p.hibernated.available) {
    std::string h = "hibernate costs " + format_usd(p.hibernated.fixed_per_hour) + "/h and keeps " + p.hibernated.keeps;
    if (!p.hibernated.allowed_on_spot) {
      h += " (not on spot)";
    }
    b.notes.push_back(h);
  }
  if (!p.destroy_loses.empty()) {
    b.notes.push_back("destroy: " + p.destroy_loses);
  }
}

}  // namespace

Result<CostBreakdown> compute_cost(const ProviderInfo& provider, const Offer& offer, bool spot, seconds running,
                                   seconds stopped, seconds hibernated)
{
  if (running.count() < 0 || stopped.count() < 0 || hibernated.count() < 0) {
    return fail(Errc::usage, "cost: negative time; give hours >= 0");
  }
  if (spot && !provider.spot_available) {
    return fail(Errc::unsupported, "spot on " + provider.name + ": " + provider.spot_note);
  }
  if (spot && !offer.spot_price_per_hour.has_value()) {
    return fail(Errc::not_found, "spot price for " + offer.card + " x" + std::to_string(offer.gpus) + " on " +
                                     provider.name + ": not known; pass --price USD_PER_HOUR");
  }
  if (stopped.count() > 0) {
    TRY(check_state(provider, provider.stopped, "stopped", spot));
  }
  if (hibernated.count() > 0) {
    TRY(check_state(provider, provider.hibernated, "hibernated", spot));
  }
  CostBreakdown b;
  b.provider = provider.name;
  b.card = offer.card;
  b.gpus = offer.gpus;
  b.spot = spot;
  b.currency = provider.currency;
  b.billing = spot ? provider.spot_billing : provider.billing;
  b.price_per_hour = running_rate(offer, spot);
  b.running = bill(b.billing, b.price_per_hour, running);
  // Idle states are billed in the provider's increments, without a minimum or deploy charge.
  const BillingPolicy idle{b.billing.increment, seconds{0}, seconds{0}};
  if (stopped.count() > 0) {
    b.stopped = bill(idle, state_rate(provider.stopped, b.price_per_hour), stopped);
  }
  if (hibernated.count() > 0) {
    b.hibernated = bill(idle, state_rate(provider.hibernated, b.price_per_hour), hibernated);
  }
  b.total = b.running.cost + b.stopped.cost + b.hibernated.cost;
  add_notes(b, provider, stopped);
  return b;
}

MicroUsd cost_per_hour_in(const ProviderInfo& provider, const Offer& offer, ServerState state, bool spot)
{
  const MicroUsd run = running_rate(offer, spot);
  switch (state) {
  case ServerState::running: return run;
  case ServerState::stopped: return provider.stopped.available ? state_rate(provider.stopped, run) : MicroUsd{0};
  case ServerState::hibernated:
    return provider.hibernated.available ? state_rate(provider.hibernated, run) : MicroUsd{0};
  }
  return MicroUsd{0};
}

}  // namespace gpurent
