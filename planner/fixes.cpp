// SPDX-License-Identifier: MIT
// The seeds' fixes, in their order, each recomputed by estimate() (docs/sizing.md "Fixes").
#include "planner/fixes.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>

#include "sizing/estimate.hpp"
#include "planner/fixes_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace fixes_detail {

Bytes total_of(const JobSpec& j) noexcept { return estimate(j).total(); }

bool fits(const JobSpec& j, Bytes limit) noexcept { return total_of(j) <= limit; }

std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

bool is_inference(const JobSpec& j) noexcept { return !is_training(j.task); }

std::uint32_t largest_fitting(std::uint32_t lo, std::uint32_t hi, const std::function<bool(std::uint32_t)>& ok)
{
  // Largest v in [lo, hi] with ok(v), assuming ok is monotone (true below, false above); lo if none.
  if (lo >= hi) {
    return lo;
  }
  std::uint32_t good = lo;
  std::uint32_t a = lo;
  std::uint32_t b = hi;
  while (a <= b) {
    const std::uint32_t mid = a + (b - a) / 2;
    if (ok(mid)) {
      good = mid;
      a = mid + 1;
    } else {
      if (mid == 0) {
        break;
      }
      b = mid - 1;
    }
  }
  return good;
}

Fix make_fix(const JobSpec& job, const JobSpec& modified, Bytes limit, std::string id, std::string description)
{
  Fix f;
  f.id = std::move(id);
  f.description = std::move(description);
  const Bytes after = total_of(modified);
  f.saves = total_of(job) - after;
  f.fits_alone = after <= limit;
  f.modified = modified;
  return f;
}

}  // namespace fixes_detail

std::vector<Fix> suggest_fixes(const JobSpec& job, Bytes limit_per_gpu, std::span<const std::uint32_t> gpu_counts)
{
  using namespace fixes_detail;
  std::vector<Fix> out;
  if (fits(job, limit_per_gpu)) {
    return out;
  }
  const auto add = [&out](std::optional<Fix> f) {
    if (f && f->saves.n > 0) {
      out.push_back(std::move(*f));
    }
  };
  add(fix_reduce_batch(job, limit_per_gpu));
  add(fix_reduce_context(job, limit_per_gpu));
  add(fix_mixed_precision(job, limit_per_gpu));
  add(fix_grad_checkpointing(job, limit_per_gpu));
  add(fix_quantize_weights(job, limit_per_gpu));
  add(fix_8bit_optimizer(job, limit_per_gpu));
  add(fix_embeddings_16bit(job, limit_per_gpu));
  add(fix_activation_offload(job, limit_per_gpu));
  add(fix_lora(job, limit_per_gpu));
  add(fix_qlora(job, limit_per_gpu));
  add(fix_kv_cache(job, limit_per_gpu));
  add(fix_fewer_sequences(job, limit_per_gpu));
  add(fix_cpu_offload(job, limit_per_gpu));
  add(fix_moe_expert_offload(job, limit_per_gpu));
  add(fix_more_gpus(job, limit_per_gpu, gpu_counts));
  return out;
}

}  // namespace gpurent
