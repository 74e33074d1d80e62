// SPDX-License-Identifier: MIT
// Every expected figure below is worked out by hand in the comment beside it.
#include <catch2/catch.hpp>

#include <vector>

#include "providers/ledger.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

namespace {

const TimePoint k_t0{std::chrono::seconds{1'790'000'000}};

std::vector<LedgerEvent> ledger(std::initializer_list<std::pair<std::chrono::seconds, ServerStatus>> steps)
{
  std::vector<LedgerEvent> out;
  std::int64_t id = 0;
  for (const auto& [offset, status] : steps) {
    out.push_back(LedgerEvent{++id, 1, k_t0 + offset, status, ""});
  }
  return out;
}

// gpucloud's rules: hourly, first hour charged at deploy, stopped bills fully, hibernate $0.02/h.
RentTerms hourly_terms()
{
  RentTerms t;
  t.price_per_hour = MicroUsd{2'000'000};  // $2.00/h
  t.billing = BillingPolicy{3600s, 3600s, 3600s};
  t.stopped.available = true;
  t.stopped.bills_full_rate = true;
  t.hibernated.available = true;
  t.hibernated.fixed_per_hour = MicroUsd{20'000};  // $0.02/h
  return t;
}

// Per-second billing with a storage rate while stopped (RunPod-like).
RentTerms per_second_terms()
{
  RentTerms t;
  t.price_per_hour = MicroUsd{690'000};  // $0.69/h
  t.billing = BillingPolicy{1s, 0s, 0s};
  t.stopped.available = true;
  t.stopped.fixed_per_hour = MicroUsd{36'000};  // $0.036/h = 10 micro-USD per second
  return t;
}

}  // namespace

TEST_CASE("Ledger: hourly billing charges the first hour at deploy and rounds each period up", "[providers][ledger]")
{
  const RentTerms t = hourly_terms();
  SECTION("10 minutes in: the first hour is already charged")
  {
    const auto ev = ledger({{0s, ServerStatus::creating}, {60s, ServerStatus::running}});
    const auto r = accrue(t, ev, k_t0 + 600s);
    CHECK(r.open);
    CHECK(r.running_s == 600s);
    CHECK(r.billed_full_s == 3600s);
    CHECK(r.accrued.n == 2'000'000);  // 1 h x $2.00
  }
  SECTION("90 minutes: two hours")
  {
    const auto ev = ledger({{0s, ServerStatus::creating}, {0s, ServerStatus::running}});
    CHECK(accrue(t, ev, k_t0 + 5400s).accrued.n == 4'000'000);  // 2 h x $2.00
  }
  SECTION("stopped at the full rate continues the same period")
  {
    // running 30 min + stopped 40 min = 70 min of one period -> 2 h -> $4.00
    const auto ev = ledger({{0s, ServerStatus::running}, {1800s, ServerStatus::stopped}});
    const auto r = accrue(t, ev, k_t0 + 4200s);
    CHECK(r.stopped_s == 2400s);
    CHECK(r.running_s == 4200s);
    CHECK(r.accrued.n == 4'000'000);
  }
  SECTION("hibernate splits periods: the second running period pays its own minimum")
  {
    // running 30 min -> 1 h (deploy) = $2.00; hibernated 3 h at $0.02 = $0.06;
    // running 10 min -> 1 h minimum = $2.00; destroyed. Total $4.06.
    const auto ev = ledger({{0s, ServerStatus::running},
                            {1800s, ServerStatus::hibernated},
                            {1800s + 10800s, ServerStatus::running},
                            {1800s + 10800s + 600s, ServerStatus::destroying},
                            {1800s + 10800s + 600s, ServerStatus::destroyed}});
    const auto r = accrue(t, ev, k_t0 + 100'000s);
    CHECK_FALSE(r.open);
    CHECK(r.hibernated_cost.n == 60'000);
    CHECK(r.running_cost.n == 4'000'000);
    CHECK(r.accrued.n == 4'060'000);
    CHECK(r.hibernated_s == 10800s);
  }
}

TEST_CASE("Ledger: per-minute billing rounds up the whole run to minutes", "[providers][ledger]")
{
  RentTerms t;
  t.price_per_hour = MicroUsd{3'600'000};  // $3.60/h = 1000 micro-USD per second
  t.billing = BillingPolicy{60s, 60s, 0s};
  // creating 30 s (counted: the provider may bill it) + running 91 s = 121 s -> 3 min = 180 s
  const auto ev = ledger({{0s, ServerStatus::creating}, {30s, ServerStatus::running}, {121s, ServerStatus::destroyed}});
  const auto r = accrue(t, ev, k_t0 + 10'000s);
  CHECK(r.billed_full_s == 180s);
  CHECK(r.accrued.n == 180'000);
  SECTION("below the minimum")
  {
    const auto short_run = ledger({{0s, ServerStatus::running}, {5s, ServerStatus::destroyed}});
    CHECK(accrue(t, short_run, k_t0 + 10s).accrued.n == 60'000);
  }
}

TEST_CASE("Ledger: a create that failed bills nothing", "[providers][ledger]")
{
  const auto ev = ledger({{0s, ServerStatus::creating}, {5s, ServerStatus::failed}});
  const auto r = accrue(hourly_terms(), ev, k_t0 + 100s);
  CHECK(r.accrued.n == 0);
  CHECK_FALSE(r.open);
  SECTION("but one still creating is counted, since the provider may have it")
  {
    const auto pending = ledger({{0s, ServerStatus::creating}});
    CHECK(accrue(hourly_terms(), pending, k_t0 + 100s).accrued.n == 2'000'000);
  }
}

TEST_CASE("Ledger: stopped at a storage rate, and destroying billed like the state before", "[providers][ledger]")
{
  const RentTerms t = per_second_terms();
  // running 100 s: 690000 * 100 / 3600 = 19166.67 -> 19167; stopped 100 s + destroying 100 s at
  // 10 micro-USD/s = 2000; total 21167.
  const auto ev = ledger({{0s, ServerStatus::running},
                          {100s, ServerStatus::stopped},
                          {200s, ServerStatus::destroying},
                          {300s, ServerStatus::destroyed}});
  const auto r = accrue(t, ev, k_t0 + 400s);
  CHECK(r.running_cost.n == 19'167);
  CHECK(r.stopped_cost.n == 2'000);
  CHECK(r.accrued.n == 21'167);
  CHECK(r.stopped_s == 100s);
  SECTION("a destroy that was never confirmed keeps billing until now")
  {
    const auto open = ledger({{0s, ServerStatus::running}, {100s, ServerStatus::destroying}});
    // 400 s at the running rate: 690000 * 400 / 3600 = 76666.67 -> 76667
    CHECK(accrue(t, open, k_t0 + 400s).accrued.n == 76'667);
  }
}

TEST_CASE("Ledger: rate_in gives the cost per hour of each state", "[providers][ledger]")
{
  const RentTerms h = hourly_terms();
  CHECK(rate_in(h, ServerStatus::running).n == 2'000'000);
  CHECK(rate_in(h, ServerStatus::stopped).n == 2'000'000);
  CHECK(rate_in(h, ServerStatus::hibernated).n == 20'000);
  CHECK(rate_in(h, ServerStatus::destroyed).n == 0);
  CHECK(rate_in(h, ServerStatus::creating).n == 2'000'000);
  const RentTerms p = per_second_terms();
  CHECK(rate_in(p, ServerStatus::stopped).n == 36'000);
}

TEST_CASE("Ledger: no events and clock skew are harmless", "[providers][ledger]")
{
  CHECK(accrue(hourly_terms(), std::vector<LedgerEvent>{}, k_t0).accrued.n == 0);
  // `now` before the last event (clock moved back): the open interval counts as 0 s.
  const auto ev = ledger({{0s, ServerStatus::running}, {100s, ServerStatus::stopped}});
  const auto r = accrue(per_second_terms(), ev, k_t0 + 50s);
  CHECK(r.stopped_cost.n == 0);
  CHECK(r.running_cost.n == 19'167);
}

TEST_CASE("Ledger: a server that existed briefly is billed one increment of the provider", "[providers][ledger]")
{
  // RunPod per second: created and destroyed within the same second still cost 1 s.
  // $0.69/h x 1 s = 690000/3600 = 191.67 -> 192 micro-USD (rounded up).
  const auto instant = ledger({{0s, ServerStatus::creating}, {0s, ServerStatus::provisioning},
                               {0s, ServerStatus::destroying}, {0s, ServerStatus::destroyed}});
  const auto r = accrue(per_second_terms(), instant, k_t0 + 3600s);
  CHECK_FALSE(r.open);
  CHECK(r.billed_full_s == 1s);
  CHECK(r.accrued.n == 192);
  // 7 s: 690000 x 7 / 3600 = 1341.67 -> 1342.
  const auto seven = ledger({{0s, ServerStatus::creating}, {2s, ServerStatus::provisioning},
                             {5s, ServerStatus::destroying}, {7s, ServerStatus::destroyed}});
  CHECK(accrue(per_second_terms(), seven, k_t0 + 3600s).accrued.n == 1342);
  // Lambda per minute: 20 s are billed as 1 min: $1.29/h / 60 = 21500 micro-USD.
  RentTerms lambda;
  lambda.price_per_hour = MicroUsd{1'290'000};
  lambda.billing = BillingPolicy{60s, 0s, 0s};
  const auto twenty = ledger({{0s, ServerStatus::creating}, {20s, ServerStatus::destroyed}});
  const auto l = accrue(lambda, twenty, k_t0 + 3600s);
  CHECK(l.billed_full_s == 60s);
  CHECK(l.accrued.n == 21'500);
  // Nothing created (the create call failed): nothing billed.
  const auto failed = ledger({{0s, ServerStatus::creating}, {3s, ServerStatus::failed}});
  CHECK(accrue(lambda, failed, k_t0 + 3600s).accrued.n == 0);
}

TEST_CASE("Ledger: destroy_failed and release_pending bill like the state before them", "[providers][ledger]")
{
  const RentTerms t = per_second_terms();
  // Running 100 s, then the destroy fails: still billed at $0.69/h for the next 100 s.
  // 200 s x 690000 / 3600 = 38333.3 -> 38334.
  const auto failed = ledger({{0s, ServerStatus::running}, {100s, ServerStatus::destroying},
                              {101s, ServerStatus::destroy_failed}});
  const auto r = accrue(t, failed, k_t0 + 200s);
  CHECK(r.open);
  CHECK(r.accrued.n == 38'334);
  CHECK(rate_now(t, failed) == t.price_per_hour);
  // Stopped, then the destroy fails: the storage rate goes on.
  const auto stopped = ledger({{0s, ServerStatus::running}, {10s, ServerStatus::stopped},
                               {20s, ServerStatus::destroying}, {21s, ServerStatus::destroy_failed}});
  CHECK(rate_now(t, stopped) == t.stopped.fixed_per_hour);
  // An attached server waiting for its release bills the full rate until released.
  const auto pending = ledger({{0s, ServerStatus::running}, {60s, ServerStatus::release_pending}});
  CHECK(rate_now(t, pending) == t.price_per_hour);
  CHECK(rate_now(t, ledger({{0s, ServerStatus::running}, {60s, ServerStatus::release_pending},
                            {90s, ServerStatus::destroyed}}))
            .n == 0);
}

TEST_CASE("Ledger: offline bills nothing, and the running rate resumes after it", "[providers][ledger]")
{
  const RentTerms t = per_second_terms();
  // Running 100 s, offline 1000 s (Vast: "not charged active rental or storage costs"), running
  // 100 s again: 200 s x 690000 / 3600 = 38333.3; as two periods each rounded up: 19167 + 19167.
  const auto ev = ledger({{0s, ServerStatus::running}, {100s, ServerStatus::offline}, {1100s, ServerStatus::running}});
  const auto r = accrue(t, ev, k_t0 + 1200s);
  CHECK(r.running_s == 200s);
  CHECK(r.accrued.n == 38'334);
  CHECK(rate_now(t, ledger({{0s, ServerStatus::running}, {100s, ServerStatus::offline}})).n == 0);
  // A destroy requested while offline bills nothing either.
  CHECK(rate_now(t, ledger({{0s, ServerStatus::running}, {100s, ServerStatus::offline},
                            {200s, ServerStatus::destroying}}))
            .n == 0);
}
