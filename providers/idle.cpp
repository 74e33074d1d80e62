// SPDX-License-Identifier: MIT
#include "providers/idle.hpp"

#include <algorithm>
#include <ctime>
#include <vector>

#include "common/clock.hpp"

namespace gpurent {
namespace {

bool gpu_idle(const GpuSample& g) noexcept
{
  return g.memory_used_mib <= k_idle_memory_mib && (!g.utilization_pct || *g.utilization_pct <= k_idle_utilization_pct);
}

}  // namespace

bool observation_idle(const DoctorObservation& o) noexcept
{
  if (o.gpus.empty() || (o.compute_processes && *o.compute_processes > 0)) {
    return false;
  }
  return std::all_of(o.gpus.begin(), o.gpus.end(), gpu_idle);
}

std::optional<IdleSpan> idle_span(ServerStatus status, TimePoint status_since,
                                  std::span<const DoctorObservation> observations, TimePoint now)
{
  if (status != ServerStatus::running) {
    return std::nullopt;
  }
  std::vector<const DoctorObservation*> current;
  for (const auto& o : observations) {
    if (o.at >= status_since) {
      current.push_back(&o);
    }
  }
  std::stable_sort(current.begin(), current.end(), [](const DoctorObservation* a, const DoctorObservation* b) {
    return a->at < b->at || (a->at == b->at && a->id < b->id);
  });
  if (current.empty() || !observation_idle(*current.back())) {
    return std::nullopt;
  }
  IdleSpan span;
  span.last_seen = current.back()->at;
  for (auto it = current.rbegin(); it != current.rend() && observation_idle(**it); ++it) {
    span.since = (*it)->at;
    ++span.observations;
  }
  const auto idle_for = std::chrono::duration_cast<std::chrono::seconds>(now - span.since).count();
  span.minutes = idle_for > 0 ? idle_for / 60 : 0;
  return span;
}

std::string idle_warning(const IdleSpan& span)
{
  std::string w = "idle GPU for " + std::to_string(span.minutes) + (span.minutes == 1 ? " minute" : " minutes") +
                  " (no GPU work at ";
  w += span.observations == 1 ? std::string("the doctor check of ")
                              : std::to_string(span.observations) + " doctor checks since ";
  w += utc_iso8601(span.since);
  if (span.observations > 1) {
    w += "; last check " + utc_iso8601(span.last_seen);
  }
  return w + "): stop or destroy it if nothing will run";
}

}  // namespace gpurent
