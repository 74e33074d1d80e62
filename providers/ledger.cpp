// SPDX-License-Identifier: MIT
#include "providers/ledger.hpp"

#include <algorithm>
#include <vector>

namespace gpurent {
namespace {

// none: not billed and no server; free: the server exists but the provider bills nothing (offline).
enum class Kind { none, free, full, stopped, hibernated };

struct Period {
  Kind kind = Kind::none;
  MicroUsd rate;
  std::chrono::seconds length{0};
};

Kind kind_of(const RentTerms& terms, ServerStatus status, Kind previous, bool failed_create) noexcept
{
  switch (status) {
  case ServerStatus::creating: return failed_create ? Kind::none : Kind::full;
  case ServerStatus::provisioning:
  case ServerStatus::running: return Kind::full;
  case ServerStatus::stopped: return terms.stopped.bills_full_rate ? Kind::full : Kind::stopped;
  case ServerStatus::hibernated: return terms.hibernated.bills_full_rate ? Kind::full : Kind::hibernated;
  case ServerStatus::destroying:
  case ServerStatus::destroy_failed:
  case ServerStatus::release_pending: return previous == Kind::none ? Kind::full : previous;
  case ServerStatus::offline: return Kind::free;
  case ServerStatus::destroyed:
  case ServerStatus::gone:
  case ServerStatus::failed: return Kind::none;
  }
  return Kind::full;
}

MicroUsd rate_of(const RentTerms& terms, Kind kind) noexcept
{
  switch (kind) {
  case Kind::full: return terms.price_per_hour;
  case Kind::stopped: return terms.stopped.fixed_per_hour;
  case Kind::hibernated: return terms.hibernated.fixed_per_hour;
  case Kind::none:
  case Kind::free: return MicroUsd{0};
  }
  return MicroUsd{0};
}

}  // namespace

MicroUsd rate_in(const RentTerms& terms, ServerStatus status) noexcept
{
  return rate_of(terms, kind_of(terms, status, Kind::full, false));
}

MicroUsd rate_now(const RentTerms& terms, std::span<const LedgerEvent> events) noexcept
{
  Kind kind = Kind::none;
  for (const LedgerEvent& e : events) {
    kind = kind_of(terms, e.status, kind, false);
  }
  return rate_of(terms, kind);
}

LedgerTotals accrue(const RentTerms& terms, std::span<const LedgerEvent> events, TimePoint now) noexcept
{
  LedgerTotals t;
  if (events.empty()) {
    return t;
  }
  const bool failed_create = events.back().status == ServerStatus::failed;
  t.open = !is_closed(events.back().status);

  std::vector<Period> periods;
  Kind previous = Kind::none;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const LedgerEvent& e = events[i];
    const TimePoint end = (i + 1 < events.size()) ? events[i + 1].at : (t.open ? now : e.at);
    const auto length = std::max(std::chrono::seconds{0}, std::chrono::duration_cast<std::chrono::seconds>(end - e.at));
    const Kind kind = kind_of(terms, e.status, previous, failed_create);
    if (e.status == ServerStatus::stopped) {
      t.stopped_s += length;
    } else if (e.status == ServerStatus::hibernated) {
      t.hibernated_s += length;
    }
    if (kind == Kind::full) {
      t.running_s += length;
    }
    if (kind == Kind::none || kind == Kind::free) {
      previous = kind;
      continue;
    }
    const MicroUsd rate = rate_of(terms, kind);
    if (!periods.empty() && periods.back().kind == kind && periods.back().rate == rate && previous == kind) {
      periods.back().length += length;
    } else {
      periods.push_back(Period{kind, rate, length});
    }
    previous = kind;
  }

  bool deployed = false;
  for (const Period& p : periods) {
    if (p.kind == Kind::full) {
      BillingPolicy policy = terms.billing;
      // A server that existed is billed for at least its first second (times are whole seconds):
      // under the provider's increment that is a second at RunPod and a minute at Lambda.
      const auto length = deployed ? p.length : std::max(p.length, std::chrono::seconds{1});
      if (deployed) {
        policy.charged_at_deploy = std::chrono::seconds{0};
      }
      deployed = true;
      t.billed_full_s += policy.billed_seconds(length);
      t.running_cost += policy.charge(p.rate, length);
    } else {
      if (p.length.count() == 0) {
        continue;
      }
      const BillingPolicy storage{terms.billing.increment, std::chrono::seconds{0}, std::chrono::seconds{0}};
      (p.kind == Kind::stopped ? t.stopped_cost : t.hibernated_cost) += storage.charge(p.rate, p.length);
    }
  }
  t.accrued = t.running_cost + t.stopped_cost + t.hibernated_cost;
  return t;
}

}  // namespace gpurent
