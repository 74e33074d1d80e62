// SPDX-License-Identifier: MIT
// The idle-GPU rule of `gpurent status` (providers/idle.hpp, docs/lifecycle.md "Idle GPUs").
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "providers/idle.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

namespace {

const TimePoint k_t0{std::chrono::seconds{1'790'000'000}};  // 2026-09-21T14:13:20Z

DoctorObservation idle_at(TimePoint at, std::int64_t id = 0)
{
  DoctorObservation o;
  o.id = id;
  o.server_id = 1;
  o.at = at;
  o.gpus = {GpuSample{0, 3, 81559, 0}, GpuSample{1, 0, 81559, 0}};
  o.compute_processes = 0;
  return o;
}

DoctorObservation busy_at(TimePoint at, std::int64_t id = 0)
{
  DoctorObservation o = idle_at(at, id);
  o.compute_processes = 1;
  o.gpus[0].memory_used_mib = 30'000;
  o.gpus[0].utilization_pct = 90;
  return o;
}

}  // namespace

TEST_CASE("observation_idle: no process, little memory, ~0% utilization on every GPU", "[providers][idle]")
{
  CHECK(observation_idle(idle_at(k_t0)));
  CHECK_FALSE(observation_idle(busy_at(k_t0)));

  auto o = idle_at(k_t0);
  o.compute_processes = 1;  // a process holds memory, even if it is small
  CHECK_FALSE(observation_idle(o));

  o = idle_at(k_t0);
  o.compute_processes.reset();  // the process query failed: memory and utilization decide
  CHECK(observation_idle(o));

  o = idle_at(k_t0);
  o.gpus[1].memory_used_mib = k_idle_memory_mib;  // the limit itself is still idle
  CHECK(observation_idle(o));
  o.gpus[1].memory_used_mib = k_idle_memory_mib + 1;
  CHECK_FALSE(observation_idle(o));

  o = idle_at(k_t0);
  o.gpus[1].utilization_pct = k_idle_utilization_pct;
  CHECK(observation_idle(o));
  o.gpus[1].utilization_pct = k_idle_utilization_pct + 1;
  CHECK_FALSE(observation_idle(o));
  o.gpus[1].utilization_pct.reset();  // not reported (older nvidia-smi query): memory decides
  CHECK(observation_idle(o));

  o = idle_at(k_t0);
  o.gpus.clear();  // no GPU seen: nothing says it is idle
  CHECK_FALSE(observation_idle(o));
}

TEST_CASE("idle_span: the unbroken idle run ending with the latest check, in whole minutes to now",
          "[providers][idle]")
{
  const TimePoint since = k_t0;  // running since
  SECTION("one idle check: idle since that check")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 10min)};
    const auto span = idle_span(ServerStatus::running, since, obs, k_t0 + 10min);
    REQUIRE(span.has_value());
    CHECK(span->since == k_t0 + 10min);
    CHECK(span->last_seen == k_t0 + 10min);
    CHECK(span->minutes == 0);
    CHECK(span->observations == 1);
    CHECK(idle_span(ServerStatus::running, since, obs, k_t0 + 10min + 59s)->minutes == 0);
    CHECK(idle_span(ServerStatus::running, since, obs, k_t0 + 11min)->minutes == 1);
    CHECK(idle_span(ServerStatus::running, since, obs, k_t0 + 52min + 30s)->minutes == 42);
  }
  SECTION("busy, then idle, idle: the run starts after the last busy check")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 1min), busy_at(k_t0 + 5min), idle_at(k_t0 + 20min),
                                             idle_at(k_t0 + 50min)};
    const auto span = idle_span(ServerStatus::running, since, obs, k_t0 + 80min);
    REQUIRE(span.has_value());
    CHECK(span->since == k_t0 + 20min);
    CHECK(span->last_seen == k_t0 + 50min);
    CHECK(span->minutes == 60);
    CHECK(span->observations == 2);
  }
  SECTION("order of the input does not matter; same-second checks go by id")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 50min, 4), busy_at(k_t0 + 5min, 2),
                                             idle_at(k_t0 + 20min, 3), idle_at(k_t0 + 1min, 1)};
    CHECK(idle_span(ServerStatus::running, since, obs, k_t0 + 80min)->since == k_t0 + 20min);
    const std::vector<DoctorObservation> same{idle_at(k_t0 + 5min, 7), busy_at(k_t0 + 5min, 8)};
    CHECK_FALSE(idle_span(ServerStatus::running, since, same, k_t0 + 6min).has_value());
  }
  SECTION("the latest check saw work: no warning")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 1min), idle_at(k_t0 + 20min), busy_at(k_t0 + 21min)};
    CHECK_FALSE(idle_span(ServerStatus::running, since, obs, k_t0 + 90min).has_value());
  }
  SECTION("checks before the server entered running (an earlier run) do not count")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 - 60min), idle_at(k_t0 - 30min)};
    CHECK_FALSE(idle_span(ServerStatus::running, since, obs, k_t0 + 10min).has_value());
    const std::vector<DoctorObservation> mixed{idle_at(k_t0 - 30min), idle_at(k_t0 + 15min)};
    const auto span = idle_span(ServerStatus::running, since, mixed, k_t0 + 45min);
    REQUIRE(span.has_value());
    CHECK(span->since == k_t0 + 15min);
    CHECK(span->minutes == 30);
    CHECK(idle_span(ServerStatus::running, since, std::vector<DoctorObservation>{}, k_t0).has_value() == false);
  }
  SECTION("only a running server is idle (stopped, hibernated and the rest have their own warnings)")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 1min)};
    for (const auto st : {ServerStatus::creating, ServerStatus::provisioning, ServerStatus::stopped,
                          ServerStatus::hibernated, ServerStatus::destroying, ServerStatus::destroyed,
                          ServerStatus::gone, ServerStatus::failed}) {
      CHECK_FALSE(idle_span(st, since, obs, k_t0 + 30min).has_value());
    }
  }
  SECTION("a clock behind the last check gives 0 minutes, never a negative count")
  {
    const std::vector<DoctorObservation> obs{idle_at(k_t0 + 10min)};
    CHECK(idle_span(ServerStatus::running, since, obs, k_t0 + 5min)->minutes == 0);
  }
}

TEST_CASE("idle_warning: minutes, checks and times in UTC", "[providers][idle]")
{
  CHECK(idle_warning(IdleSpan{k_t0, k_t0, 0, 1}) ==
        "idle GPU for 0 minutes (no GPU work at the doctor check of 2026-09-21T14:13:20Z): stop or destroy it if "
        "nothing will run");
  CHECK(idle_warning(IdleSpan{k_t0, k_t0 + 40min, 1, 1}).rfind("idle GPU for 1 minute (", 0) == 0);
  CHECK(idle_warning(IdleSpan{k_t0, k_t0 + 40min, 42, 3}) ==
        "idle GPU for 42 minutes (no GPU work at 3 doctor checks since 2026-09-21T14:13:20Z; last check "
        "2026-09-21T14:53:20Z): stop or destroy it if nothing will run");
}
