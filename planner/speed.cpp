// SPDX-License-Identifier: MIT
#include "planner/speed.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/rounding.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/param_count.hpp"
#include "sizing/precision.hpp"

namespace gpurent {

SpeedEngine speed_engine(Engine e) noexcept
{
  switch (e) {
  case Engine::llama_cpp:
  case Engine::ollama: return SpeedEngine::llama_cpp;
  case Engine::vllm: return SpeedEngine::vllm;
  case Engine::sglang: return SpeedEngine::sglang;
  case Engine::tensorrt_llm: return SpeedEngine::tensorrt_llm;
  case Engine::transformers: return SpeedEngine::transformers;
  case Engine::torchtune:
  case Engine::deepspeed:
  case Engine::unsloth: return SpeedEngine::trainer;
  }
  return SpeedEngine::transformers;
}

bool hbm_card(const Card& c) noexcept
{
  if (!c.compute_capability) {
    return false;
  }
  const std::uint32_t cc = *c.compute_capability;
  return cc == 70 || cc == 80 || cc == 90 || (cc >= 100 && cc < 110);
}

std::optional<double> Speed::headline(Task t) const noexcept
{
  switch (t) {
  case Task::serve: return serve_output_tokens_per_s;
  case Task::train:
  case Task::lora:
  case Task::qlora: return train_tokens_per_s;
  case Task::infer: return batch ? serve_output_tokens_per_s : decode_tokens_per_s;
  }
  return std::nullopt;
}

namespace {

double bits_of(std::uint32_t per_10k) { return static_cast<double>(per_10k) / 10000.0; }

}  // namespace

SpeedFigures speed_figures(const JobSpec& job)
{
  SpeedFigures f;
  const ModelArch& m = job.model;
  const ParamBreakdown pb = count_params(m);
  JobSpec one = job;  // the whole model: one GPU of one server
  one.gpus = 1;
  one.nodes = 1;
  one.pipeline = 1;
  one.shard = Shard::none;
  one.offload_bytes = 0;
  const WeightSplit ws = weight_split(one, pb);
  f.weight_bytes = static_cast<double>(ws.total.n);
  f.expert_bytes = static_cast<double>(ws.experts.n);
  const WeightBits wb = weight_bits(job.weights, job.engine);
  if (!m.tied_embeddings && !wb.whole_file) {
    f.skipped_bytes = static_cast<double>(pb.embedding) * bits_of(wb.embedding) / 8.0;
  }
  f.active_params = static_cast<double>(pb.active) - (m.tied_embeddings ? 0.0 : static_cast<double>(pb.embedding));
  f.train_params = static_cast<double>(pb.active);
  f.layers = m.layers;
  f.hidden = m.hidden;
  const double head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? static_cast<double>(m.hidden) / m.heads : 0);
  f.attn_width = m.heads * head_dim;
  f.global_layers = m.attention() == AttentionKind::sliding_hybrid ? m.global_layers : m.layers;
  f.window = m.attention() == AttentionKind::sliding_hybrid ? m.sliding_window : 0;
  f.experts = m.experts;
  f.experts_active = m.experts_active;
  f.kv_bytes_per_token = static_cast<double>(kv_bytes_per_token(one).n);
  return f;
}

namespace {

// base^n for a whole n >= 0 (binary exponentiation: the executable links no libm).
double power(double base, double n)
{
  auto e = static_cast<std::uint64_t>(std::min(n, 1e9));
  double result = 1.0;
  while (e > 0) {
    if ((e & 1U) != 0U) {
      result *= base;
    }
    base *= base;
    e >>= 1U;
  }
  return result;
}

// Weight bytes one step reads when it carries `tokens` tokens: every weight except the input
// embedding; of the routed experts, the share the tokens pick (1 - (1 - k/E)^tokens, the expected
// share of experts at least one token routes to).
double read_bytes(const SpeedFigures& f, double tokens)
{
  double experts = f.expert_bytes;
  if (f.experts > 1 && f.experts_active > 0) {
    experts *= 1.0 - power(1.0 - f.experts_active / f.experts, std::max(tokens, 1.0));
  }
  return std::max(0.0, f.weight_bytes - f.expert_bytes - f.skipped_bytes) + experts;
}

// Layer-tokens a token attends over when `len` tokens precede it: every full-attention layer
// over all of them, each sliding-window layer over at most its window.
double attended(const SpeedFigures& f, double len)
{
  const double windowed = f.window > 0 ? std::min(len, f.window) : len;
  return f.global_layers * len + (f.layers - f.global_layers) * windowed;
}

// KV bytes of one sequence whose tokens attend over `len` earlier tokens (sliding-window layers
// over at most their window).
double kv_bytes(const SpeedFigures& f, double len)
{
  if (f.layers <= 0) {
    return 0;
  }
  return f.kv_bytes_per_token / f.layers * attended(f, len);
}

// Matrix-multiply FLOPs for one token attending over `len` earlier tokens: 2 per active weight,
// plus QK^T and AV (2 x 2 x width per attended token per layer).
double flops_per_token(const SpeedFigures& f, double len)
{
  return 2.0 * f.active_params + 4.0 * f.attn_width * attended(f, len);
}

// PCIe x16 per direction in bytes/s: 3.0 15.75 GB/s, 4.0 31.5, 5.0 63 (8/16/32 GT/s x 16 lanes,
// 128b/130b encoding).
double pcie_x16_bytes_per_s(std::uint32_t gen)
{
  const double gt = gen >= 5 ? 32 : gen == 4 ? 16 : gen == 3 ? 8 : 4;
  return gt * 16.0 / 8.0 * 128.0 / 130.0 * 1e9;
}

// Unidirectional GB/s between two GPUs of the card in one server: NVLink (half its both-ways
// figure) when the board has it built in, else the PCIe x16 link. A bridged NVLink only when the
// provider says the box has the bridge, which no catalogue does: PCIe.
std::optional<double> link_bytes_per_s(const Card& c, std::string* label)
{
  if (c.link.nvlink_gb_per_s && !c.link.nvlink_bridge) {
    *label = fmt::format("NVLink {} GB/s", *c.link.nvlink_gb_per_s / 2);
    return *c.link.nvlink_gb_per_s / 2.0 * 1e9;
  }
  if (c.link.pcie_gen) {
    const double bytes = pcie_x16_bytes_per_s(*c.link.pcie_gen);
    *label = fmt::format("PCIe {} {:.0f} GB/s", *c.link.pcie_gen, bytes / 1e9);
    return bytes;
  }
  return std::nullopt;
}

// PCIe x16 to the host for offloaded weights and optimizer states; nullopt when the card's PCIe
// generation is unknown (none is assumed).
std::optional<double> host_bytes_per_s(const Card& c)
{
  if (!c.link.pcie_gen) {
    return std::nullopt;
  }
  return pcie_x16_bytes_per_s(*c.link.pcie_gen);
}

struct Precision {
  std::optional<double> tflops;
  std::string name;
};

// The tensor-core precision the job's matrix multiplies run in on this card: FP8 for FP8 weights
// where the card has FP8 and the engine runs them natively (W8A8), FP4 for NVFP4 on FP4 cards,
// else 16-bit (weight-only formats dequantize to 16-bit: AWQ, GPTQ, GGUF, NF4, MXFP4 outside
// Blackwell, Marlin fallbacks), fp16 where the card has no bf16.
Precision compute_precision(const JobSpec& job, const Card& c, SpeedEngine e)
{
  const bool training = is_training(job.task);
  const bool batched = e == SpeedEngine::vllm || e == SpeedEngine::sglang || e == SpeedEngine::tensorrt_llm ||
                       e == SpeedEngine::transformers;
  if (!training && batched && job.weights == WeightFormat::fp8 && !job.moe_marlin && c.tflops.fp8) {
    return {c.tflops.fp8, "fp8"};
  }
  if (training && job.weights == WeightFormat::fp8 && c.tflops.fp8) {
    return {c.tflops.fp8, "fp8"};  // FP8 mixed precision (Transformer Engine): the measured NeMo runs
  }
  if (!training && job.weights == WeightFormat::nvfp4 && c.tflops.fp4) {
    return {c.tflops.fp4, "fp4"};
  }
  if (job.fp16_compute || job.weights == WeightFormat::fp16 || !c.tflops.bf16) {
    if (c.tflops.fp16) {
      return {c.tflops.fp16, "fp16"};
    }
  }
  if (job.weights == WeightFormat::fp32) {
    return {std::nullopt, "fp32"};
  }
  if (c.tflops.bf16) {
    return {c.tflops.bf16, "bf16"};
  }
  return {std::nullopt, "bf16"};
}

struct Layout {
  double tp = 1;        // tensor-parallel ranks working on one step together
  double stages = 1;    // GPUs (or pipeline stages) a token passes through one after the other
  bool pipelined = false;  // vLLM pipeline parallel: stages work on different requests at once
};

Layout layout_of(const JobSpec& job)
{
  Layout l;
  const double g = world_gpus(job);
  l.tp = std::max<std::uint32_t>(tp_degree(job), 1);
  if (splits_tp_pp(job.engine) && job.pipeline > 1 && l.tp * job.pipeline == g) {
    l.stages = job.pipeline;
    l.pipelined = true;
  } else if (l.tp == 1 && g > 1) {
    l.stages = g;  // llama.cpp --split-mode layer, transformers device_map="auto"
  }
  return l;
}

// A step's time: its matrix multiplies (the weights read, or their FLOPs), then its attention (the
// KV cache read, or the attention FLOPs): separate kernels, one after the other, so each overlaps
// its own memory and compute but not the other's (docs/speed.md "Formulas").
struct StepTerms {
  double memory = 0, compute = 0, link = 0, fixed = 0, offload = 0;
  double kv = 0, attention = 0;
  [[nodiscard]] double core() const { return std::max(memory, compute) + std::max(kv, attention); }
  [[nodiscard]] double total() const { return core() + link + fixed + offload; }
  [[nodiscard]] std::string bound() const
  {
    const double core = this->core();
    if (offload > core && offload > link) {
      return "offload";
    }
    if (link > core) {
      return "interconnect";
    }
    return compute + attention > memory + kv ? "compute" : "memory";
  }
};

struct Inputs {
  const JobSpec& job;
  const SpeedConstants& k;
  const SpeedFigures& f;
  Layout l;
  std::optional<double> bw;      // bytes/s of memory bandwidth x the engine's fraction
  std::optional<double> flops;   // FLOP/s x the engine's fraction
  std::optional<double> link;    // bytes/s between GPUs
  std::optional<double> host;    // bytes/s to the host
  double nodes = 1;              // servers the job spans
  std::optional<double> node;    // bytes/s from one server to the others (nodes > 1)
  bool dequantizes = false;      // llama.cpp dequantizes a quantized prompt's weights for cuBLAS
};

// vLLM's pipeline across servers: a step's activations (tokens x hidden, 16-bit) cross each of
// the nodes - 1 server boundaries once per token; charged to the stages evenly.
double node_hops_s(const Inputs& in, double tokens)
{
  if (in.nodes <= 1 || !in.node || !in.l.pipelined) {
    return 0;  // SGLang's tensor parallel across servers pays in its all-reduces instead
  }
  return (in.nodes - 1) / in.l.stages * tokens * in.f.hidden * 2.0 / *in.node;
}

// Tensor-parallel all-reduce cost for `tokens` tokens over `layers` layers: two all-reduces per
// layer (after attention and after the MLP) of tokens x hidden 16-bit values, ring: 2 (tp-1)/tp of
// the data over the link, plus the engine's latency per all-reduce. A group over several servers
// (SGLang --nnodes) reduces hierarchically, as NCCL does: a ring over each server's GPUs
// (2 (g-1)/g of the data over the GPUs' link) and one between the servers (2 (n-1)/n of the data
// over the servers' link, which each server's NICs share) (docs/speed.md "Tensor parallel across
// servers").
double allreduce_s(const Inputs& in, double tokens, double layers)
{
  if (in.l.tp <= 1) {
    return 0;
  }
  const double data = tokens * in.f.hidden * 2.0;
  const double per_server = std::max<std::uint32_t>(in.job.gpus, 1);
  if (in.nodes > 1 && in.l.tp > per_server) {
    const double inside = per_server > 1 && in.link ? data * 2.0 * (per_server - 1) / per_server / *in.link : 0.0;
    const double across = in.node ? data * 2.0 * (in.nodes - 1) / in.nodes / *in.node : 0.0;
    return 2.0 * layers * (in.k.allreduce_s + inside + across);
  }
  const double bytes = data * 2.0 * (in.l.tp - 1) / in.l.tp;
  return 2.0 * layers * (in.k.allreduce_s + (in.link ? bytes / *in.link : 0.0));
}

// Weights kept in host memory (JobSpec::offload_bytes per GPU) cross the PCIe link once per step.
double offload_s(const Inputs& in)
{
  if (in.job.offload_bytes == 0 || !in.host) {
    return 0;
  }
  return static_cast<double>(in.job.offload_bytes) / *in.host;
}

// One decode step of `seqs` sequences, each attending over `len` tokens, on one stage of the
// model (a stage holds 1/stages of the layers, split over tp ranks).
StepTerms decode_step(const Inputs& in, double seqs, double len)
{
  StepTerms t;
  const double share = in.l.tp * in.l.stages;
  t.memory = read_bytes(in.f, seqs) / share / *in.bw;
  t.kv = seqs * kv_bytes(in.f, len) / share / *in.bw;
  if (in.flops) {
    t.compute = seqs * flops_per_token(in.f, 0) / share / *in.flops;
    t.attention = seqs * (flops_per_token(in.f, len) - flops_per_token(in.f, 0)) / share / *in.flops;
  }
  t.link = allreduce_s(in, seqs, in.f.layers / in.l.stages) + node_hops_s(in, seqs);
  t.fixed = in.f.layers / in.l.stages * in.k.layer_s + in.k.step_s / in.l.stages;
  t.offload = offload_s(in);
  return t;
}

// Prefill chunk size: llama.cpp's n_ubatch (512), the batched engines' chunked prefill (8192).
double chunk_tokens(SpeedEngine e) { return e == SpeedEngine::llama_cpp ? 512.0 : 8192.0; }

// One request's prompt of `len` tokens: compute over every chunk, the weights read once per
// chunk, the stages one after another.
StepTerms prefill_terms(const Inputs& in, double len, SpeedEngine e)
{
  StepTerms t;
  const double chunks = ceil_up(len / chunk_tokens(e));
  const double causal = len / 2.0;  // a token attends over the tokens before it: len / 2 on average
  t.memory = chunks * read_bytes(in.f, std::min(len, chunk_tokens(e))) / in.l.tp / *in.bw;
  t.compute = len * flops_per_token(in.f, causal) / in.l.tp / *in.flops;
  t.link = allreduce_s(in, len, in.f.layers) + node_hops_s(in, len) * in.l.stages;
  t.fixed = chunks * (in.f.layers * in.k.layer_s + in.k.step_s);
  t.offload = chunks * offload_s(in) * in.l.stages;
  if (in.dequantizes) {
    // Each chunk first dequantizes every weight matrix to F16 (reads the quantized bytes, writes
    // two bytes a parameter), a kernel of its own before cuBLAS reads that copy.
    t.fixed += chunks * (read_bytes(in.f, chunk_tokens(e)) + 2.0 * in.f.active_params) / in.l.tp / *in.bw;
  }
  return t;
}

// Time to first token of a request that joins c - 1 others in flight (docs/speed.md "Per user"):
// it arrives during a step (half a decode round on average), then its prompt runs in chunks of
// what the step's token budget leaves after the others' decode tokens (vLLM's V1 scheduler
// batches the running decodes first and chunks a prefill into the rest of
// max_num_batched_tokens); each chunk's step reads the weights once, computes the others' decode
// tokens and the chunk's prompt tokens, and passes every stage in turn.
double first_token_s(const Inputs& in, SpeedEngine e, double c, double in_len, double out, double round)
{
  const double others = c - 1;
  const double budget = chunk_tokens(e);
  const double room = std::max(1.0, budget - (in.l.pipelined ? ceil_up(others / in.l.stages) : others));
  const double chunks = ceil_up(in_len / room);
  const double per_stage = in.l.pipelined ? ceil_up(others / in.l.stages) : others;
  const double share = in.l.tp * in.l.stages;
  const double prompt_compute = in_len * flops_per_token(in.f, in_len / 2.0) / share / *in.flops;
  StepTerms step = decode_step(in, std::max(per_stage, 0.0), in_len + out / 2.0);
  if (others <= 0) {
    step.compute = 0;  // no other request decodes beside the prompt
    step.attention = 0;
  }
  step.compute += prompt_compute / chunks;
  step.link = allreduce_s(in, per_stage + std::min(in_len, room), in.f.layers / in.l.stages) +
              node_hops_s(in, per_stage + std::min(in_len, room));
  return round / 2.0 + chunks * step.total() * in.l.stages;
}

// Unsloth's published factor over Hugging Face + Flash Attention 2 for the same LoRA/QLoRA job
// ("2x faster", unsloth.ai/blog/llama3-3 and its benchmarks page, Llama 3.3 70B and Llama 3.1 8B on
// an 80 GB GPU): its fused Triton kernels and hand-derived LoRA backward take half the step time,
// up to the trainers' fitted peak utilisation (docs/speed.md "Unsloth").
constexpr double k_unsloth_speedup = 2.0;
// An eager step against a compiled one: torchtune's README table (Llama 3.2 3B full fine-tune, one
// A100, batch 2, 4096 tokens, bf16), "+ Packed Dataset | 60.0 | +135.16% | 7075 | +238.40%" then
// "+ Compile | 51.0 | -14.93% | 8998 | +27.18%". The trainers' utilisation is fitted on compiled
// or kernel-fused runs (docs/speed.md "Compiled or eager"); Unsloth's factor is over an eager
// Hugging Face run.
constexpr double k_eager_share = 7075.0 / 8998.0;

void training_speed(const Inputs& in, Speed& s)
{
  const JobSpec& job = in.job;
  const SpeedFigures& f = in.f;
  const double gpus = world_gpus(job);
  const double seq = std::max<std::uint32_t>(job.context, 1);
  // FLOPs per token (PaLM appendix B): 6N + 12 L w s for full training; LoRA skips the weights'
  // gradients (4N, 2/3 of the attention); recomputation adds one more forward (2N, 1/3).
  const double attn = 12.0 * f.attn_width * attended(f, seq);
  const bool adapters = job.task == Task::lora || job.task == Task::qlora;
  double per_token = adapters ? 4.0 * f.train_params + attn * 2.0 / 3.0 : 6.0 * f.train_params + attn;
  if (job.grad_checkpointing) {
    per_token += 2.0 * f.train_params + attn / 3.0;
  }
  // A micro-step computes micro-batch x context tokens (memory is sized for them). The GPU's
  // utilisation rises with them until compute-bound (train_half_tokens); unpacked, a batch of
  // several sequences pads each to its longest, so only k_unpacked_useful_share of them is data.
  const double micro = std::max<std::uint32_t>(job.batch, 1);
  const double tokens_per_gpu_step = micro * seq;
  const double utilisation =
      in.k.train_half_tokens > 0 ? tokens_per_gpu_step / (tokens_per_gpu_step + in.k.train_half_tokens) : 1.0;
  const double useful = job.pack || micro <= 1 ? 1.0 : k_unpacked_useful_share;
  // Unsloth: the published factor on the step's utilisation, which still never passes the trainers'
  // fitted peak (the constant's mfu, reached at utilisation 1).
  const double eager = utilisation * k_eager_share;
  const double reached = job.engine == Engine::unsloth ? std::min(1.0, eager * k_unsloth_speedup)
                         : job.compile                 ? utilisation
                                                       : eager;
  const double compute = tokens_per_gpu_step * per_token / (*in.flops * reached);
  s.train_utilisation = reached;
  s.train_eager = !job.compile && job.engine != Engine::unsloth;
  s.train_useful_share = useful;
  // Communication per micro-step per GPU: FSDP / ZeRO-3 gather the 16-bit weights for the forward
  // and the backward and scatter the gradients (3 x, 2 x when only adapters train); DDP / ZeRO-1/2
  // all-reduce the gradients once per optimizer step (2 x the trainable 16-bit bytes).
  double comm = 0;
  const double w16 = f.train_params * 2.0;
  const double ring = gpus > 1 ? (gpus - 1) / gpus : 0;
  const bool sharded = job.shard == Shard::fsdp || job.shard == Shard::zero3;
  if (in.nodes > 1) {
    // Across servers the ring runs over every GPU of the job: each edge, NVLink/PCIe inside a
    // server and the servers' link between them, carries (g-1)/g of the bytes; the slower leg
    // sets the time (NCCL spreads a server's share over its NICs, so the server's bandwidth counts).
    const double bytes = sharded ? (adapters ? 2.0 : 3.0) * w16 * ring
                         : adapters ? 0.0
                                    : 2.0 * w16 * ring / std::max<std::uint32_t>(job.grad_accumulation, 1);
    if (!in.node) {
      s.unknown.push_back(fmt::format("the link between the {} servers is not published: the traffic between them "
                                      "(FSDP/ZeRO-3: 3 x the 16-bit weights per step) is not known, so neither is the "
                                      "training speed",
                                      job.nodes));
      return;
    }
    const double inside = job.gpus > 1 && in.link ? bytes / *in.link : 0.0;
    s.network_step_s = bytes / *in.node;
    comm = std::max(inside, *s.network_step_s);
  } else if (gpus > 1) {
    if (!in.link) {
      s.unknown.push_back(fmt::format("the link between {} GPUs is unknown: the gradient and weight traffic is not "
                                      "counted",
                                      job.gpus));
    } else if (job.shard == Shard::fsdp || job.shard == Shard::zero3) {
      comm = (adapters ? 2.0 : 3.0) * w16 * ring / *in.link;
    } else if (!adapters) {
      comm = 2.0 * w16 * ring / *in.link / std::max<std::uint32_t>(job.grad_accumulation, 1);
    }
  }
  double offload = 0;
  if (job.offload_optimizer && in.host) {
    // Gradients down and updated weights up, 16-bit, the GPU's share, once per optimizer step.
    offload = (adapters ? 0.0 : 2.0 * w16 / std::max(1.0, gpus)) / *in.host /
              std::max<std::uint32_t>(job.grad_accumulation, 1);
  }
  // Activation offloading: each checkpointed layer input (hidden x 16 bits per token) goes to CPU
  // RAM in forward and comes back in backward, on streams that overlap the compute.
  double activations = 0;
  const bool unsloth_offload = job.engine == Engine::unsloth && job.grad_checkpointing;
  if ((job.activation_offload || unsloth_offload) && in.host) {
    activations = 2.0 * tokens_per_gpu_step * f.layers * f.hidden * 2.0 / *in.host;
  }
  const double busy = std::max({compute, comm, activations});
  const double step = busy + offload;
  s.compute_step_s = compute;
  s.train_tokens_per_s = gpus * tokens_per_gpu_step * useful / step;
  s.bound = offload > busy                                      ? "offload"
            : activations > std::max(compute, comm)             ? "offload"
            : comm > compute                                    ? "interconnect"
                                                                : "compute";
}

// The 16-bit training utilisation on this card: Hopper and Blackwell data-centre cards have their
// own, as their tensor cores outpace what kernels written for Ampere feed them (FlashAttention-2
// reaches 50-73% of an A100's peak, arXiv 2307.08691, and 35% of an H100's, arXiv 2407.08608).
double training_mfu(const SpeedConstants& k, const Card& card)
{
  const bool sm90 = hbm_card(card) && card.compute_capability && *card.compute_capability >= 90;
  return sm90 && k.mfu_sm90 > 0 ? k.mfu_sm90 : k.mfu;
}

}  // namespace

Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load, const SpeedConstants& k,
                     SpeedEngine engine)
{
  return estimate_speed(job, card, load, k, engine, speed_figures(job));
}

Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load, const SpeedConstants& k,
                     SpeedEngine engine, const SpeedFigures& figures)
{
  Speed s;
  Inputs in{job, k, figures, layout_of(job), {}, {}, {}, {}, 1, {}};
  const Precision prec = compute_precision(job, card, engine);
  in.dequantizes = llamacpp_dequantizes(job, card.compute_capability.value_or(0));
  const double bandwidth = hbm_card(card) && k.bandwidth_hbm > 0 ? k.bandwidth_hbm : k.bandwidth;
  if (card.mem_bw_gbs) {
    in.bw = *card.mem_bw_gbs * 1e9 * bandwidth;
  }
  const bool training = is_training(job.task);
  if (prec.tflops) {
    if (training) {
      in.flops = *prec.tflops * 1e12 * (prec.name == "fp8" ? k.mfu_fp8 : training_mfu(k, card));
    } else {
      const double reach = *prec.tflops * k.compute;
      // 16-bit weights take cuBLAS's GEMMs, quantized ones the engine's own kernels: each its ceiling.
      const bool sixteen = job.weights == WeightFormat::gguf_f16 || job.weights == WeightFormat::fp16 ||
                           job.weights == WeightFormat::bf16 || in.dequantizes;
      const double cap = sixteen && k.compute_cap_f16_tflops > 0 ? k.compute_cap_f16_tflops : k.compute_cap_tflops;
      in.flops = (cap > 0 ? std::min(reach, cap) : reach) * 1e12;
    }
  }
  std::string link_label;
  in.link = link_bytes_per_s(card, &link_label);
  in.host = host_bytes_per_s(card);
  in.nodes = std::max<std::uint32_t>(job.nodes, 1);
  if (load.node_bytes_per_s > 0) {
    in.node = load.node_bytes_per_s;
  }
  const bool training_task = is_training(job.task);
  // An offline batch (vllm run-batch) schedules its requests as a server does: serving's figure.
  const bool batched = job.task == Task::serve || (job.task == Task::infer && job.offline_batch);
  s.batch = job.task == Task::infer && job.offline_batch;
  const SpeedKind headline_kind = training_task ? SpeedKind::train : batched ? SpeedKind::serve : SpeedKind::decode;
  s.range_pct = speed_range_pct(engine, headline_kind);
  if (in.f.weight_bytes <= 0 || in.f.layers <= 0) {
    s.unknown.push_back("the model's architecture is unknown (--params gives only a parameter count): no speed");
    return s;
  }
  if (s.range_pct == k_range_unmeasured) {
    s.unknown.push_back(fmt::format("range_pct: fewer than {} public measurements of this engine's {} speed are in the "
                                    "check half, so the figure has no measured spread of its own (docs/speed.md "
                                    "\"Measured spread\")",
                                    k_min_check_cases, headline_kind == SpeedKind::train   ? "training"
                                                       : headline_kind == SpeedKind::serve ? "serving"
                                                                                           : "decode"));
  }
  if (!in.flops) {
    s.unknown.push_back(fmt::format("{} TFLOPS of {} unknown: compute-bound figures not computed", prec.name,
                                    card.display));
  }
  if (!in.bw && !training) {
    s.unknown.push_back(fmt::format("memory bandwidth of {} unknown: decode and serving speed not computed",
                                    card.display));
  }
  if (in.l.tp > 1 && !in.link) {
    s.unknown.push_back(fmt::format("the link between {}'s GPUs is unknown: tensor-parallel traffic is not counted",
                                    card.display));
  }
  if (job.offload_bytes > 0 && !in.host) {
    s.unknown.push_back(fmt::format("{}'s PCIe generation is unknown: offloaded weights' traffic is not counted",
                                    card.display));
  }
  s.basis = fmt::format("{} GB/s x {:.2f}, {} TFLOPS {} x {:.2f}{}", card.mem_bw_gbs ? std::to_string(*card.mem_bw_gbs) : "?",
                        bandwidth, prec.tflops ? fmt::format("{:.0f}", *prec.tflops) : "?", prec.name,
                        training ? (prec.name == "fp8" ? k.mfu_fp8 : training_mfu(k, card)) : k.compute,
                        job.gpus > 1 && !link_label.empty() ? ", " + link_label : std::string());
  if (in.nodes > 1) {
    s.basis += fmt::format(", {} servers: {}", job.nodes, load.node_link.empty() ? "link not published" : load.node_link);
  }
  if (training) {
    if (in.flops) {
      training_speed(in, s);
    }
    return s;
  }

  if (in.nodes > 1 && !in.node) {
    s.unknown.push_back(fmt::format("the link between the {} servers is not published: the {} traffic between "
                                    "them is not known, so neither is the speed",
                                    job.nodes, in.l.pipelined ? "pipeline's" : "tensor-parallel all-reduces'"));
    return s;
  }
  const double context = std::max<std::uint32_t>(job.context, 1);
  if (in.bw) {
    const StepTerms d = decode_step(in, 1, context / 2.0);
    s.decode_tokens_per_s = 1.0 / (d.total() * in.l.stages);
    s.bound = d.bound();
  }
  const double prompt = load.input_len > 0 ? load.input_len : context;
  if (in.bw && in.flops) {
    const StepTerms p = prefill_terms(in, prompt, engine);
    s.prefill_tokens_per_s = prompt / p.total();
  }
  if (!batched) {
    return s;
  }
  // Serving C requests of I prompt and O output tokens: O decode rounds over the C requests (each
  // attending over I + O/2 tokens on average) plus the C prompts' prefill.
  const ServeLengths lengths = serve_lengths(job.context, load);
  const double out = lengths.output;
  const double in_len = lengths.input;
  const double c = std::max<std::uint32_t>(load.concurrency, 1);
  s.concurrency = static_cast<std::uint32_t>(c);
  s.input_len = static_cast<std::uint32_t>(in_len);
  s.output_len = static_cast<std::uint32_t>(out);
  if (!in.bw || !in.flops) {
    return s;
  }
  // A pipelined stage works on ceil(C / stages) requests at a time; a layer split runs all C
  // through each GPU in turn. Either way one round takes `stages` stage steps and yields C tokens.
  const double per_stage = in.l.pipelined ? ceil_up(c / in.l.stages) : c;
  const StepTerms step = decode_step(in, per_stage, in_len + out / 2.0);
  const double round = step.total() * in.l.stages;
  const double prefill = c * in_len * flops_per_token(in.f, in_len / 2.0) / (in.l.tp * in.l.stages) / *in.flops;
  s.serve_output_tokens_per_s = c * out / (out * round + prefill);
  s.bound = out * round >= prefill ? step.bound() : "compute";
  // Each user: O decode rounds, with the other c - 1 requests' prompts prefilled in between
  // (its own prompt is its time to first token).
  s.per_user_tokens_per_s = out / (out * round + prefill * (c - 1) / c);
  s.ttft_s = first_token_s(in, engine, c, in_len, out, round);
  return s;
}

ServeLengths serve_lengths(std::uint32_t context, const SpeedLoad& load) noexcept
{
  const double ctx = std::max<std::uint32_t>(context, 1);
  // Without --output-len: 256 tokens, at most half the context, or the context the prompt leaves.
  const double room = load.input_len > 0 && load.input_len < ctx ? ctx - load.input_len : ctx / 2.0;
  const double out = load.output_len > 0 ? load.output_len
                                         : std::max(1.0, std::min<double>(k_default_output_len, room));
  const double in = load.input_len > 0 ? load.input_len : std::max(1.0, ctx - out);
  return {static_cast<std::uint32_t>(in), static_cast<std::uint32_t>(out)};
}

Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load)
{
  return estimate_speed(job, card, load, speed_figures(job));
}

Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load, const SpeedFigures& figures)
{
  const SpeedEngine e = is_training(job.task) ? SpeedEngine::trainer : speed_engine(job.engine);
  return estimate_speed(job, card, load, speed_constants(e), e, figures);
}

}  // namespace gpurent
