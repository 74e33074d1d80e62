// SPDX-License-Identifier: MIT
#include "sizing/oom_diagnose.hpp"

#include <algorithm>
#include <tuple>

#include "sizing/oom_fixes.hpp"

namespace gpurent {
namespace {

constexpr Bytes k_cuda_context{k_gib / 2};  // n when the message does not give it

std::int64_t sgn(Bytes b) noexcept { return static_cast<std::int64_t>(b.n); }

// The smallest card whose limit holds `need`; among its offers the cheapest. Cards somebody
// offers win over cards nobody offers.
std::optional<OomCardOption> smallest_card(std::span<const OomCardOption> options, Bytes need)
{
  const OomCardOption* best = nullptr;
  const auto better = [](const OomCardOption& a, const OomCardOption& b) {
    const bool a_offered = !a.provider.empty() && a.price_per_hour;
    const bool b_offered = !b.provider.empty() && b.price_per_hour;
    if (a_offered != b_offered) {
      return a_offered;
    }
    if (a.usable != b.usable) {
      return a.usable < b.usable;
    }
    if (a_offered && a.price_per_hour->n != b.price_per_hour->n) {
      return a.price_per_hour->n < b.price_per_hour->n;
    }
    if (a.gpus != b.gpus) {
      return a.gpus < b.gpus;
    }
    return std::tie(a.card, a.provider) < std::tie(b.card, b.provider);
  };
  for (const auto& option : options) {
    if (oom_fit_limit(option.usable) >= need && (best == nullptr || better(option, *best))) {
      best = &option;
    }
  }
  if (best == nullptr) {
    return std::nullopt;
  }
  return *best;
}

void pytorch_arithmetic(const OomReport& r, OomDiagnosis& d)
{
  const bool measured = r.process_in_use && r.allocated && *r.process_in_use >= *r.allocated;
  if (measured) {
    d.non_pytorch = *r.process_in_use - *r.allocated - r.reserved_unallocated.value_or(Bytes{});
    d.non_pytorch_estimated = false;
    d.footprint = *r.process_in_use;
  } else {
    d.non_pytorch = k_cuda_context;
    if (r.allocated && r.reserved_unallocated) {
      d.footprint = *r.allocated + *r.reserved_unallocated + d.non_pytorch;
    }
  }
  if (r.allocated && r.requested) {
    d.need = *r.allocated + *r.requested + d.non_pytorch;
  }
  std::optional<std::int64_t> others;
  if (r.other_process_count > 0) {
    others = sgn(r.other_processes_sum);
  }
  if (r.total && r.free && d.footprint) {
    const std::int64_t residual = sgn(*r.total) - sgn(*r.free) - sgn(*d.footprint);
    others = std::max(others.value_or(0), residual);
  }
  if (others) {
    d.other_processes = Bytes{static_cast<std::uint64_t>(std::max<std::int64_t>(*others, 0))};
  }
  // In a container NVML reports PIDs of another namespace, so PyTorch lists this very process as
  // "Process p" and leaves out "this process has". Flag it when one entry is this process's size.
  if (!r.process_in_use && r.other_process_count == 1 && d.footprint && !r.other_processes.empty()) {
    const std::int64_t diff = sgn(r.other_processes.front().used) - sgn(*d.footprint);
    d.other_may_be_self = (diff < 0 ? -diff : diff) <= static_cast<std::int64_t>(k_gib);
  }

  const Bytes total = r.total.value_or(Bytes{});
  if (r.requested && r.total && *r.requested > total) {
    d.causes.push_back(OomCause::allocation_exceeds_card);
  }
  if (d.other_processes && d.other_processes->n >= std::max<std::uint64_t>(k_gib, total.n / 10)) {
    d.causes.push_back(OomCause::other_process);
  }
  if (r.reserved_unallocated && r.requested && r.total && *r.reserved_unallocated >= *r.requested &&
      r.reserved_unallocated->n * 100 >= total.n * 5) {
    d.causes.push_back(OomCause::fragmentation);
  }
  if (d.need && r.total) {
    const Bytes left = total - d.other_processes.value_or(Bytes{});
    if (d.need->n * 100 > left.n * 95) {
      d.causes.push_back(OomCause::job_too_large);
    }
  }
}

}  // namespace

std::string_view to_string(OomCause c) noexcept
{
  switch (c) {
  case OomCause::allocation_exceeds_card: return "allocation_exceeds_card";
  case OomCause::other_process: return "other_process";
  case OomCause::fragmentation: return "fragmentation";
  case OomCause::job_too_large: return "job_too_large";
  case OomCause::context_exceeds_kv_cache: return "context_exceeds_kv_cache";
  case OomCause::no_kv_cache_memory: return "no_kv_cache_memory";
  }
  return "job_too_large";
}

OomDiagnosis diagnose_oom(const OomReport& report, std::span<const OomCardOption> options, const std::optional<OomCardOption>& given)
{
  OomDiagnosis d;
  switch (report.kind) {
  case OomKind::allocator:
    pytorch_arithmetic(report, d);
    d.card_need = d.need;
    break;
  case OomKind::kv_cache_too_small: d.causes.push_back(OomCause::context_exceeds_kv_cache); break;
  case OomKind::no_kv_cache_memory: d.causes.push_back(OomCause::no_kv_cache_memory); break;
  case OomKind::device_alloc: d.card_need = report.requested; break;
  }
  if (d.card_need) {
    d.card = smallest_card(options, *d.card_need);
    if (given) {
      d.on_card = OomCardVerdict{*given, oom_fit_limit(given->usable), *d.card_need, *d.card_need <= oom_fit_limit(given->usable)};
    }
  }
  d.fixes = oom_detail::fixes_for(report, d);
  return d;
}

}  // namespace gpurent
