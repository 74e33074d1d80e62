// SPDX-License-Identifier: MIT
#pragma once
// Internal pieces of the estimate shared by its translation units (not a public interface).
#include <cstdint>

#include "sizing/estimate.hpp"
#include "sizing/param_count.hpp"

namespace gpurent::detail {

using U = std::uint64_t;

[[nodiscard]] constexpr U sat_add(U a, U b) noexcept
{
  U r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
[[nodiscard]] constexpr U sat_mul(U a, U b) noexcept
{
  U r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
[[nodiscard]] constexpr U ceil_div(U a, U b) noexcept { return b == 0 ? 0 : a / b + (a % b != 0 ? 1 : 0); }
// a * num / den without intermediate overflow for the sizes we see (saturates otherwise).
[[nodiscard]] constexpr U mul_div(U a, U num, U den) noexcept
{
  if (den == 0) {
    return 0;
  }
  return sat_add(sat_mul(a / den, num), (a % den) * num / den);
}

// Everything the terms need, computed once per estimate.
struct Ctx {
  const JobSpec& job;
  ParamBreakdown pb;
  U total_params = 0;    // exact count when the model gives one, else derived
  U tp = 1;              // tensor-parallel degree (heads and widths split)
  U layer_split = 1;     // pipeline/layer split of inference engines (llama.cpp, transformers device_map)
  U shards = 1;          // data-parallel ranks that FSDP/ZeRO shard over
  bool training = false;
  U act_bytes = 2;       // bytes per activation element (4 when training in fp32)
};

[[nodiscard]] Ctx make_ctx(const JobSpec& job) noexcept;

// Weights of the model as the job holds them on one GPU, before FSDP/ZeRO sharding.
[[nodiscard]] U weight_bytes(const Ctx& c) noexcept;
// One decoder layer's linear weights in parameters (FSDP unit / ZeRO-3 largest layer).
[[nodiscard]] U per_layer_params(const Ctx& c) noexcept;

struct Training {
  U weights = 0, gradients = 0, optimizer = 0, adapters = 0;
};
[[nodiscard]] Training training_states(const Ctx& c) noexcept;

[[nodiscard]] U training_activations(const Ctx& c) noexcept;
[[nodiscard]] U inference_activations(const Ctx& c) noexcept;

}  // namespace gpurent::detail
