// SPDX-License-Identifier: MIT
// Gradients, optimizer states and LoRA adapters by engine, sharded by FSDP/ZeRO (docs/sizing.md §4).
#include "sizing/checkpoint_use.hpp"
#include "sizing/estimate_detail.hpp"

namespace gpurent::detail {
namespace {

// Optimizer state bytes per trained parameter, states kept in `state_bytes`-wide floats.
U optimizer_bytes(Optimizer o, U params, U state_bytes, const ParamBreakdown& pb, bool lora) noexcept
{
  switch (o) {
  case Optimizer::adamw: return sat_mul(params, 2 * state_bytes);      // exp_avg + exp_avg_sq
  case Optimizer::adamw_8bit: return sat_mul(params, 2);               // bitsandbytes: 2 x int8 (+ block scales)
  case Optimizer::sgd: return sat_mul(params, state_bytes);            // momentum buffer
  case Optimizer::adafactor: {
    if (lora) {
      return sat_mul(params, state_bytes);  // small adapter matrices: about one value per row+col
    }
    // Factored second moment: one row and one column vector per matrix; vectors kept whole;
    // no first moment (transformers default beta1=None).
    U factored = 0;
    U matrix_params = 0;
    for (const auto& l : pb.linears) {
      factored = sat_add(factored, sat_mul(l.in_features + l.out_features, l.count));
      matrix_params = sat_add(matrix_params, l.weights());
    }
    const U vocab_h = pb.embedding + pb.lm_head;
    const U rest = params > matrix_params + vocab_h ? params - matrix_params - vocab_h : 0;
    return sat_mul(sat_add(factored, rest), state_bytes);
  }
  }
  return 0;
}

}  // namespace

Training training_states(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  Training t;
  t.weights = weight_bytes(c);
  const U n = c.shards;
  if (j.task == Task::lora || j.task == Task::qlora) {
    // An adapter in the checkpoint gives its exact parameters (at its rank, scaled to --lora-rank).
    const U a = ceil_div(checkpoint_adapter_params(j).value_or(lora_params(c.pb, j.lora_rank)), c.tp);
    // peft keeps adapters in fp32 (autocast_adapter_dtype); torchtune in the model's bf16.
    const U w = j.engine == Engine::torchtune && j.weights != WeightFormat::fp32 ? 2 : 4;
    t.adapters = sat_mul(a, w);
    t.gradients = sat_mul(a, w);
    t.optimizer = optimizer_bytes(j.optimizer, a, w, c.pb, true);
    // The adapters are parameters like the rest: FSDP FULL_SHARD and ZeRO-3 shard them, their
    // gradients and their optimizer states over every GPU of the job (gpus x nodes); ZeRO-1
    // shards the states, ZeRO-2 the states and the gradients (docs/sizing.md §4).
    switch (j.shard) {
    case Shard::fsdp:
    case Shard::zero3:
      t.weights = sat_add(ceil_div(t.weights, n), 2 * ceil_div(t.weights, j.model.layers > 0 ? j.model.layers : 1));
      t.adapters = ceil_div(t.adapters, n);
      t.gradients = ceil_div(t.gradients, n);
      t.optimizer = ceil_div(t.optimizer, n);
      break;
    case Shard::zero2:
      t.gradients = ceil_div(t.gradients, n);
      t.optimizer = ceil_div(t.optimizer, n);
      break;
    case Shard::zero1: t.optimizer = ceil_div(t.optimizer, n); break;
    default: break;
    }
    return t;
  }
  const U p = ceil_div(c.total_params, c.tp);
  const U layer_bytes = ceil_div(t.weights, j.model.layers > 0 ? j.model.layers : 1);
  switch (j.engine) {
  case Engine::deepspeed: {
    // ZeRO (Rajbhandari et al. 2020): 16-bit params 2P + 16-bit grads 2P + K*P states, K = fp32
    // master copy (4) + the optimizer's fp32 states; stage 1 shards states, 2 also grads, 3 also params.
    t.weights = sat_mul(p, j.weights == WeightFormat::fp32 ? 4 : 2);
    t.gradients = sat_mul(p, j.weights == WeightFormat::fp32 ? 4 : 2);
    t.optimizer = sat_add(j.weights == WeightFormat::fp32 ? 0 : sat_mul(p, 4), optimizer_bytes(j.optimizer, p, 4, c.pb, false));
    break;
  }
  case Engine::torchtune: {
    // Pure bf16: weights, gradients and optimizer states all in the parameter dtype.
    const U b = j.weights == WeightFormat::fp32 ? 4 : 2;
    t.gradients = sat_mul(p, b);
    t.optimizer = optimizer_bytes(j.optimizer, p, b, c.pb, false);
    break;
  }
  default: {
    // transformers AMP: fp32 master weights (weights term) + fp32 grads + fp32 states = 16 B/param.
    t.gradients = sat_mul(p, 4);
    t.optimizer = optimizer_bytes(j.optimizer, p, 4, c.pb, false);
    break;
  }
  }
  switch (j.shard) {
  case Shard::zero1: t.optimizer = ceil_div(t.optimizer, n); break;
  case Shard::zero2:
    t.optimizer = ceil_div(t.optimizer, n);
    t.gradients = ceil_div(t.gradients, n);
    break;
  case Shard::zero3:
    // DeepSpeed docs: plus the largest layer gathered (4 x largest layer params).
    t.optimizer = ceil_div(t.optimizer, n);
    t.gradients = ceil_div(t.gradients, n);
    t.weights = sat_add(ceil_div(t.weights, n), sat_mul(4, std::max(per_layer_params(c), c.pb.embedding)));
    break;
  case Shard::fsdp:
    // FULL_SHARD: params, grads and states sharded; one unit (layer) gathered plus the prefetched next.
    t.optimizer = ceil_div(t.optimizer, n);
    t.gradients = ceil_div(t.gradients, n);
    t.weights = sat_add(ceil_div(t.weights, n), 2 * layer_bytes);
    break;
  default: break;
  }
  return t;
}

}  // namespace gpurent::detail
