// SPDX-License-Identifier: MIT
#include "oom/diagnose.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "oom/fixes.hpp"

namespace gpurent {
namespace {

constexpr Bytes k_cuda_context{k_gib / 2};  // n when the message does not give it

std::int64_t sgn(Bytes b) noexcept { return static_cast<std::int64_t>(b.n); }

// part > percent% of whole, on integers (sizes are at most 1 PiB, so no overflow).
bool above_share(Bytes part, Bytes whole, std::uint64_t percent) noexcept { return part.n * 100 > whole.n * percent; }

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

// In a container NVML reports PIDs of another namespace, so PyTorch lists this very process as
// "Process p" and leaves out "this process has": the one listed process holding at least 99% of
// what the card had in use (T - F) is this job.
std::optional<OomOtherProcess> self_in_container(const OomReport& r)
{
  if (r.process_in_use || !r.total || !r.free || r.other_processes.empty()) {
    return std::nullopt;
  }
  const Bytes used = *r.total - *r.free;
  for (const auto& p : r.other_processes) {
    if (p.used.n > 0 && p.used.n * 100 >= used.n * 99) {
      return p;
    }
  }
  return std::nullopt;
}

void pytorch_arithmetic(const OomReport& r, OomDiagnosis& d)
{
  d.self_process = self_in_container(r);
  const Bytes unallocated = r.reserved_unallocated.value_or(Bytes{});
  const std::optional<Bytes> held = r.process_in_use ? r.process_in_use : d.self_process ? std::optional(d.self_process->used) : std::nullopt;
  if (held && r.allocated && *held >= *r.allocated) {
    d.non_pytorch = *held - *r.allocated - unallocated;
    d.non_pytorch_estimated = false;
    d.footprint = *held;
  } else {
    d.non_pytorch = k_cuda_context;
    if (r.allocated && (r.reserved_unallocated || r.format == OomFormat::pytorch_async)) {
      d.footprint = *r.allocated + unallocated + d.non_pytorch;  // cudaMallocAsync reports no cached memory
    }
  }
  if (r.allocated && r.requested) {
    d.need = *r.allocated + *r.requested + d.non_pytorch;
  }
  std::optional<std::int64_t> others;
  const std::size_t listed = r.other_process_count - (d.self_process ? 1 : 0);
  if (listed > 0) {
    others = sgn(r.other_processes_sum - (d.self_process ? d.self_process->used : Bytes{}));
  }
  if (r.total && r.free && d.footprint) {
    const std::int64_t residual = sgn(*r.total) - sgn(*r.free) - sgn(*d.footprint);
    others = std::max(others.value_or(0), residual);
  }
  if (others) {
    d.other_processes = Bytes{static_cast<std::uint64_t>(std::max<std::int64_t>(*others, 0))};
  }

  const Bytes total = r.total.value_or(Bytes{});
  if (r.requested && r.total && *r.requested > total) {
    d.causes.push_back(OomCause::allocation_exceeds_card);
  }
  if (d.other_processes && d.other_processes->n >= std::max<std::uint64_t>(k_gib, total.n / 10)) {
    d.causes.push_back(OomCause::other_process);
  }
  const bool free_short = r.free && r.requested && *r.free < *r.requested;
  if (r.reserved_unallocated && r.requested && r.total && free_short && *r.reserved_unallocated >= *r.requested &&
      r.reserved_unallocated->n * 100 >= total.n * 5) {
    d.causes.push_back(OomCause::fragmentation);
  }
  if (d.need && r.total && above_share(*d.need, total - d.other_processes.value_or(Bytes{}), 95)) {
    d.causes.push_back(OomCause::job_too_large);
  }
  if (d.causes.empty() && r.free && r.requested && *r.free >= *r.requested) {
    d.causes.push_back(OomCause::limit_not_capacity);
  }
}

// PyTorch on MPS: the allocator refuses when allocated + other + request would pass max allowed.
void mps_arithmetic(const OomReport& r, OomDiagnosis& d)
{
  if (!r.allocated || !r.other_allocations || !r.max_allowed) {
    return;
  }
  d.need = *r.allocated + *r.other_allocations + r.requested.value_or(Bytes{});
  if (r.requested && *r.requested > *r.max_allowed) {
    d.causes.push_back(OomCause::allocation_exceeds_card);
  }
  if (*d.need > *r.max_allowed) {
    d.causes.push_back(OomCause::job_too_large);
  }
  if (d.causes.empty()) {
    d.causes.push_back(OomCause::limit_not_capacity);
  }
  d.card_need = d.need;
}

// vLLM v1 without the estimate: the KV memory holds available/needed of the model's context.
std::optional<std::uint64_t> fitting_len(const OomReport& r)
{
  if (r.kv_cache_tokens) {
    return r.kv_cache_tokens;
  }
  if (r.max_model_len && r.kv_cache_needed && r.kv_cache_available && r.kv_cache_needed->n > 0) {
    const long double tokens = static_cast<long double>(*r.max_model_len) * static_cast<long double>(r.kv_cache_available->n) /
                               static_cast<long double>(r.kv_cache_needed->n);
    return static_cast<std::uint64_t>(tokens);  // floor: never more than fits
  }
  return std::nullopt;
}

void engine_arithmetic(const OomReport& r, OomDiagnosis& d)
{
  switch (r.kind) {
  case OomKind::allocator:
    pytorch_arithmetic(r, d);
    d.card_need = d.need;
    return;
  case OomKind::mps_allocator: mps_arithmetic(r, d); return;
  case OomKind::kv_cache_too_small:
    d.causes.push_back(OomCause::context_exceeds_kv_cache);
    d.fitting_max_model_len = fitting_len(r);
    return;
  case OomKind::no_kv_cache_memory:
  case OomKind::sglang_static: d.causes.push_back(OomCause::no_kv_cache_memory); return;
  case OomKind::vllm_startup_memory:
    if (r.total && r.free) {
      d.other_processes = *r.total - *r.free;
    }
    d.causes.push_back(OomCause::other_process);
    return;
  case OomKind::tgi_warmup: d.causes.push_back(OomCause::job_too_large); return;
  case OomKind::trtllm_component:
    // The KV cache is created last: with little free, the weights and the profiling peak left it
    // nothing. With a tenth of the card or more still free, TensorRT-LLM's own estimate asked for
    // more than was there (both public reports: 200 of 276 GiB, 109 of 140 GiB free): no cause is
    // claimed. Any other component (the model, the sampler) failing: the job is larger than the GPU.
    switch (oom_detail::trtllm_failure(r)) {
    case oom_detail::TrtllmFailure::kv_cache_little_free: d.causes.push_back(OomCause::no_kv_cache_memory); return;
    case oom_detail::TrtllmFailure::kv_cache_much_free: return;
    case oom_detail::TrtllmFailure::model:
    case oom_detail::TrtllmFailure::other: d.causes.push_back(OomCause::job_too_large); return;
    }
    return;
  case OomKind::trtllm_kv_blocks:
    // Its KV cache manager had no free block for a request in flight: the requests' tokens
    // outgrew the pool (docs/source/reference/memory.md: "if the paged KV cache is not large
    // enough for the whole batch").
    d.causes.push_back(OomCause::context_exceeds_kv_cache);
    return;
  case OomKind::device_alloc:
    if (r.memory == OomMemory::host) {
      d.causes.push_back(OomCause::host_memory);
    } else {
      d.card_need = r.requested;
      // llama.cpp allocates the KV cache and the compute buffer after the model's buffers: those
      // stay on the GPU, and a card must hold both.
      if (r.requested && (r.stage == OomStage::kv_cache || r.stage == OomStage::compute) && r.job.devices <= 1) {
        std::optional<Bytes> resident = r.job.gpu_model_buffers;
        if (!resident && r.job.file_size && r.gpu_layers && r.model_layers && *r.gpu_layers >= *r.model_layers) {
          resident = r.job.file_size;
        }
        if (resident) {
          d.resident_weights = resident;
          d.card_need = *r.requested + *resident;
        }
      }
    }
    return;
  case OomKind::host_memory: d.causes.push_back(OomCause::host_memory); return;
  case OomKind::xla_alloc: d.card_need = r.xla_total; return;
  case OomKind::xla_compile:
    d.need = r.xla_total;
    if (r.xla_total && r.total && *r.xla_total > *r.total) {
      d.causes.push_back(OomCause::job_too_large);
    }
    if (r.memory_space == "hbm") {
      d.card_need = r.xla_total;
    }
    return;
  case OomKind::tf_tensor:
    if (r.memory == OomMemory::host) {
      d.causes.push_back(OomCause::host_memory);
    }
    return;
  case OomKind::runtime:
    if (r.memory == OomMemory::host) {
      d.causes.push_back(OomCause::host_memory);
    }
    return;
  case OomKind::nccl: return;
  }
}

}  // namespace

std::string oom_size(Bytes b)
{
  if (b.n >= k_gib) {
    return fmt::format("{:.2f} GiB", to_gib(b));
  }
  if (b.n >= k_mib) {
    return fmt::format("{:.2f} MiB", static_cast<double>(b.n) / static_cast<double>(k_mib));
  }
  if (b.n >= k_kib) {
    return fmt::format("{:.2f} KiB", static_cast<double>(b.n) / static_cast<double>(k_kib));
  }
  return fmt::format("{} bytes", b.n);
}

std::string_view to_string(OomCause c) noexcept
{
  switch (c) {
  case OomCause::allocation_exceeds_card: return "allocation_exceeds_card";
  case OomCause::other_process: return "other_process";
  case OomCause::fragmentation: return "fragmentation";
  case OomCause::job_too_large: return "job_too_large";
  case OomCause::context_exceeds_kv_cache: return "context_exceeds_kv_cache";
  case OomCause::no_kv_cache_memory: return "no_kv_cache_memory";
  case OomCause::limit_not_capacity: return "limit_not_capacity";
  case OomCause::host_memory: return "host_memory";
  }
  return "job_too_large";
}

OomDiagnosis diagnose_oom(const OomReport& report, std::span<const OomCardOption> options, const std::optional<OomCardOption>& given,
                          OomJobInput job)
{
  OomDiagnosis d;
  engine_arithmetic(report, d);
  d.job = std::move(job);
  if (const auto& e = d.job.estimate) {
    // Plan's estimate of the whole job (weights, KV, compute, overheads), not the one buffer or
    // allocation the message names: the verdict and the card are plan's.
    d.card_need = e->total;
    if (e->card_searched) {
      std::vector<OomCardOption> fitting;
      for (const auto& o : options) {
        if (std::find(e->cards_fitting.begin(), e->cards_fitting.end(), o.card) != e->cards_fitting.end()) {
          fitting.push_back(o);
        }
      }
      d.card = smallest_card(fitting, Bytes{});
    } else {
      d.card = smallest_card(options, e->total);
    }
    if (given && e->on_card) {
      d.on_card = e->on_card;
    }
  } else if (d.card_need) {
    d.card = smallest_card(options, *d.card_need);
    if (given) {
      d.on_card = OomCardVerdict{*given, oom_fit_limit(given->usable), *d.card_need, *d.card_need <= oom_fit_limit(given->usable)};
    }
  }
  d.fixes = oom_detail::fixes_for(report, d);
  return d;
}

}  // namespace gpurent
