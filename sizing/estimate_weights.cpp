// SPDX-License-Identifier: MIT
// Weights at the real bits of each format (docs/sizing.md §1), and LoRA adapter sizes.
#include <algorithm>

#include "sizing/checkpoint_format.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/estimate_detail.hpp"
#include "sizing/gguf_mix.hpp"
#include "sizing/mxfp4_layout.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace detail {
namespace {

constexpr U k_bits_scale = 80000;  // WeightBits are bits x 1e4; / 8 bits per byte

struct Parts {
  U linear = 0, experts = 0, embedding = 0, other = 0;
};

Parts parts_of(const Ctx& c) noexcept
{
  Parts p;
  U expert_linear = 0;
  for (const auto& l : c.pb.linears) {
    if (l.expert) {
      expert_linear = sat_add(expert_linear, l.weights());
    }
  }
  p.embedding = sat_add(c.pb.embedding, c.pb.lm_head);
  p.experts = c.pb.experts;
  p.linear = c.pb.linear_weights > expert_linear ? c.pb.linear_weights - expert_linear : 0;
  const U counted = sat_add(sat_add(p.embedding, p.experts), p.linear);
  if (c.job.model.layers == 0) {
    // A bare parameter count (--params): no architecture to tell the parts apart, so the whole
    // count is quantizable linear weights (seed 000: 7B = 14 / 7 / 3.5 GB at 16 / 8 / 4 bits).
    p.linear = c.total_params;
    return p;
  }
  if (c.total_params >= counted) {
    p.other = c.total_params - counted;
  } else if (c.total_params > p.embedding + p.experts) {
    p.linear = c.total_params - p.embedding - p.experts;  // the given count is smaller: trust it
  }
  return p;
}

// The bits per weight of that format, by part.
WeightBits bits_for(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  if (j.task == Task::train) {
    // Full fine-tuning trains 16/32-bit weights: transformers keeps fp32 master weights (AMP),
    // torchtune and DeepSpeed hold 16-bit parameters (ZeRO keeps the fp32 copy in the optimizer).
    return weight_bits(weights_in_memory(j), j.engine);
  }
  WeightBits b = weight_bits(j.weights, j.engine);
  if (j.task == Task::qlora && j.weights == WeightFormat::nf4) {
    // QLoRA's recipe quantizes the base to NF4 with double quantization (the scales themselves
    // in 8 bits): 4 + 8/64 + 32/(64*256) = 4.127 bits (QLoRA paper §3; bnb_4bit_use_double_quant).
    b.linear = b.experts = 41270;
  }
  if (j.task == Task::qlora && (j.engine == Engine::transformers || j.engine == Engine::deepspeed) && !b.whole_file) {
    // TRL (v1.9.0 ModelConfig.dtype, default "float32") loads the model in fp32, so every parameter
    // bitsandbytes leaves unquantized (embeddings, lm_head, norms) is fp32; older TRL ran peft's
    // prepare_model_for_kbit_training, which casts them to fp32 too. `--dtype bfloat16` (the
    // embeddings-16bit lever) keeps them in 16 bits (docs/sizing.md "QLoRA levers").
    const std::uint32_t kept = j.embeddings_16bit ? 160000 : 320000;
    b.embedding = kept;
    b.other = kept;
    if (b.linear >= 160000) {
      b.linear = 320000;
    }
  }
  return b;
}

// Decoder linear weights the checkpoint keeps in 16 bits (quantization_config's module list:
// config.json read, or the catalogue's published checkpoint), when the job loads it as published.
struct Kept {
  U linear = 0, experts = 0;
};
Kept kept_16bit(const Ctx& c) noexcept
{
  const ModelArch& m = c.job.model;
  const WeightFormat own = checkpoint_format(m);
  if (m.quant_method.empty() || !is_quantized(c.job.weights) || c.job.weights != own) {
    return {};
  }
  if (!m.quant_skip.empty()) {
    return {m.quant_skip_linear, m.quant_skip_experts};
  }
  for (const auto& q : m.quantized) {
    if (q.quant_method == m.quant_method && q.quant_bits == m.quant_bits && !q.skip.empty()) {
      return {q.skip_linear, q.skip_experts};
    }
  }
  return {};
}

// Part bytes at `bits` with `kept` of them at 16 bits.
U part_bytes(U params, U kept, std::uint32_t bits) noexcept
{
  kept = std::min(kept, params);
  return sat_add(mul_div(params - kept, bits, k_bits_scale), mul_div(kept, 160000, k_bits_scale));
}

// MXFP4 experts under vLLM/SGLang/TensorRT-LLM: padded to the MoE kernels' sizes (sizing/mxfp4_layout.hpp).
bool padded_mxfp4(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  return weights_in_memory(j) == WeightFormat::mxfp4 && pools_kv(j.engine) &&
         j.model.is_moe() && j.model.gated_mlp;
}

struct Held {
  U total = 0;      // all weights, before the tensor/pipeline split
  U experts = 0;    // of which routed experts
  U embedding = 0;  // of which embedding and lm_head
  U host_embedding = 0;  // of which the GGUF token_embd llama.cpp keeps in host memory (untied)
};

Held held_weights(const Ctx& c, const WeightBits& b) noexcept
{
  const JobSpec& j = c.job;
  Held h;
  if (const auto ck = checkpoint_bytes(j, weights_in_memory(j), b)) {
    h = {ck->total, ck->experts, ck->embedding, ck->host_embedding};  // the checkpoint's own files (sizing/checkpoint_use.hpp)
  } else if (b.whole_file) {
    if (const auto mix = gguf_mix(j.model, weights_in_memory(j))) {
      h = {mix->total(), mix->experts, mix->embedding, j.model.tied_embeddings ? 0 : mix->token_embd};  // llama.cpp's per-tensor types
    } else {
      h.total = mul_div(c.total_params, b.linear, k_bits_scale);
      h.experts = mul_div(c.pb.experts, b.linear, k_bits_scale);
      h.embedding = mul_div(c.pb.embedding + c.pb.lm_head, b.linear, k_bits_scale);
    }
  } else {
    const Parts p = parts_of(c);
    const Kept kept = kept_16bit(c);
    h.experts = part_bytes(p.experts, kept.experts, b.experts);
    h.embedding = mul_div(p.embedding, b.embedding, k_bits_scale);
    h.total = sat_add(sat_add(part_bytes(p.linear, kept.linear, b.linear), h.experts),
                      sat_add(h.embedding, mul_div(p.other, b.other, k_bits_scale)));
  }
  if (padded_mxfp4(c)) {
    const Mxfp4Padding pad = mxfp4_padding(mxfp4_backend(j.engine, std::nullopt));
    const U padded = sat_mul(mxfp4_expert_bytes_per_rank(j.model, static_cast<std::uint32_t>(c.tp), pad), c.tp);
    if (padded > 0) {
      h.total = sat_add(h.total > h.experts ? h.total - h.experts : 0, padded);
      h.experts = padded;
    }
  }
  return h;
}

}  // namespace

U weight_bytes(const Ctx& c) noexcept
{
  const Held h = held_weights(c, bits_for(c));
  U total = h.total;
  // llama.cpp and Ollama keep the input token embedding in host memory (its get_rows runs on the
  // CPU: "CPU_Mapped model buffer size = 281.81 MiB" beside the GPU's model buffer for an 8B
  // Q4_0), unless the output layer shares the tensor.
  if ((c.job.engine == Engine::llama_cpp || c.job.engine == Engine::ollama) && !c.training && total > h.host_embedding) {
    total -= h.host_embedding;
  }
  return ceil_div(sat_add(total, serving_adapter_bytes(c.job)), c.tp * c.layer_split);
}

U per_layer_params(const Ctx& c) noexcept
{
  const U layers = c.job.model.layers;
  if (layers == 0) {
    return 0;
  }
  const U body = c.pb.total > c.pb.embedding + c.pb.lm_head ? c.pb.total - c.pb.embedding - c.pb.lm_head : 0;
  return body / layers;
}

}  // namespace detail

WeightSplit weight_split(const JobSpec& job, const ParamBreakdown& /*pb*/) noexcept
{
  const detail::Ctx c = detail::make_ctx(job);
  WeightSplit s;
  s.total = Bytes{detail::weight_bytes(c)};
  // The split of the job's weights as held (MoE offload moves the routed experts; the layer share
  // spreads everything but the embedding/lm_head over the layers).
  const detail::Held h = detail::held_weights(c, weight_bits(job.weights, job.engine));
  s.experts = Bytes{std::min(detail::ceil_div(h.experts, c.tp * c.layer_split), s.total.n)};
  const detail::U emb = h.embedding;
  const detail::U layers = job.model.layers;
  const detail::U body = s.total.n > emb ? s.total.n - emb : s.total.n;
  s.per_layer = Bytes{layers > 0 ? detail::ceil_div(body, layers) : 0};
  return s;
}

std::uint64_t lora_params(const ParamBreakdown& pb, std::uint32_t rank) noexcept
{
  detail::U total = 0;
  for (const auto& l : pb.linears) {
    total = detail::sat_add(total, detail::sat_mul(detail::sat_mul(rank, l.in_features + l.out_features), l.count));
  }
  return total;
}

}  // namespace gpurent
