// SPDX-License-Identifier: MIT
#include "sizing/precision.hpp"

#include <array>
#include <string>
#include <utility>

#include "common/text.hpp"

namespace gpurent {
namespace {

template <class E>
struct Name {
  E value;
  std::string_view name;
};

constexpr std::array<Name<Task>, 5> k_tasks{{
    {Task::infer, "infer"}, {Task::serve, "serve"}, {Task::train, "train"}, {Task::lora, "lora"}, {Task::qlora, "qlora"},
}};
constexpr std::array<Name<Engine>, 9> k_engines{{
    {Engine::transformers, "transformers"}, {Engine::vllm, "vllm"}, {Engine::llama_cpp, "llama.cpp"},
    {Engine::ollama, "ollama"}, {Engine::torchtune, "torchtune"}, {Engine::deepspeed, "deepspeed"},
    {Engine::sglang, "sglang"}, {Engine::unsloth, "unsloth"}, {Engine::tensorrt_llm, "trtllm"},
}};
constexpr std::array<Name<Shard>, 8> k_shards{{
    {Shard::none, "none"}, {Shard::ddp, "ddp"}, {Shard::fsdp, "fsdp"}, {Shard::zero1, "zero1"},
    {Shard::zero2, "zero2"}, {Shard::zero3, "zero3"}, {Shard::tp, "tp"}, {Shard::layer, "layer"},
}};
constexpr std::array<Name<Optimizer>, 4> k_optimizers{{
    {Optimizer::adamw, "adamw"}, {Optimizer::adamw_8bit, "adamw-8bit"}, {Optimizer::sgd, "sgd"},
    {Optimizer::adafactor, "adafactor"},
}};
constexpr std::array<Name<KvDtype>, 7> k_kv{{
    {KvDtype::auto_, "auto"}, {KvDtype::fp32, "fp32"}, {KvDtype::fp16, "fp16"}, {KvDtype::bf16, "bf16"},
    {KvDtype::fp8, "fp8"}, {KvDtype::q8_0, "q8_0"}, {KvDtype::q4_0, "q4_0"},
}};
constexpr std::array<Name<WeightFormat>, 30> k_formats{{
    {WeightFormat::fp32, "fp32"}, {WeightFormat::bf16, "bf16"}, {WeightFormat::fp16, "fp16"},
    {WeightFormat::fp8, "fp8"}, {WeightFormat::int8, "int8"}, {WeightFormat::int4, "int4"},
    {WeightFormat::nf4, "nf4"}, {WeightFormat::awq, "awq"}, {WeightFormat::gptq, "gptq"},
    {WeightFormat::mxfp4, "mxfp4"}, {WeightFormat::nvfp4, "nvfp4"}, {WeightFormat::gguf_f16, "F16"}, {WeightFormat::gguf_q8_0, "Q8_0"},
    {WeightFormat::gguf_q6_k, "Q6_K"}, {WeightFormat::gguf_q5_k_m, "Q5_K_M"}, {WeightFormat::gguf_q5_k_s, "Q5_K_S"},
    {WeightFormat::gguf_q5_0, "Q5_0"}, {WeightFormat::gguf_q5_1, "Q5_1"}, {WeightFormat::gguf_q4_k_m, "Q4_K_M"},
    {WeightFormat::gguf_q4_k_s, "Q4_K_S"}, {WeightFormat::gguf_q4_0, "Q4_0"}, {WeightFormat::gguf_q4_1, "Q4_1"},
    {WeightFormat::gguf_q3_k_l, "Q3_K_L"}, {WeightFormat::gguf_q3_k_m, "Q3_K_M"}, {WeightFormat::gguf_q3_k_s, "Q3_K_S"},
    {WeightFormat::gguf_q2_k, "Q2_K"}, {WeightFormat::gguf_iq4_xs, "IQ4_XS"}, {WeightFormat::gguf_iq4_nl, "IQ4_NL"},
    {WeightFormat::gguf_iq3_xxs, "IQ3_XXS"}, {WeightFormat::gguf_iq2_xxs, "IQ2_XXS"},
}};

// Lower-case, '-' and '_' folded to '_', spaces trimmed: "Q4-K-M " -> "q4_k_m".
std::string fold(std::string_view s)
{
  std::string out = to_lower(trim(s));
  for (char& c : out) {
    if (c == '-') {
      c = '_';
    }
  }
  return out;
}

template <class E, std::size_t N>
Result<E> lookup(const std::array<Name<E>, N>& table, std::string_view input, std::string_view what,
                 std::span<const std::pair<std::string_view, E>> aliases = {})
{
  const std::string key = fold(input);
  for (const auto& n : table) {
    if (fold(n.name) == key) {
      return n.value;
    }
  }
  for (const auto& [alias, value] : aliases) {
    if (alias == key) {
      return value;
    }
  }
  std::string valid;
  for (const auto& n : table) {
    if (!valid.empty()) {
      valid += ", ";
    }
    valid += n.name;
  }
  std::string shown{input.substr(0, 40)};
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      c = '?';
    }
  }
  return fail(Errc::usage, "invalid " + std::string(what) + " '" + shown + "': not a known value; use one of " + valid);
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<Name<E>, N>& table, E v) noexcept
{
  for (const auto& n : table) {
    if (n.value == v) {
      return n.name;
    }
  }
  return "unknown";
}

template <class E, std::size_t N>
struct Values {
  std::array<E, N> v{};
  constexpr explicit Values(const std::array<Name<E>, N>& table)
  {
    for (std::size_t i = 0; i < N; ++i) {
      v[i] = table[i].value;
    }
  }
};

constexpr Values<Task, 5> k_task_values{k_tasks};
constexpr Values<Engine, 9> k_engine_values{k_engines};
constexpr Values<Shard, 8> k_shard_values{k_shards};
constexpr Values<Optimizer, 4> k_optimizer_values{k_optimizers};
constexpr Values<KvDtype, 7> k_kv_values{k_kv};
constexpr Values<WeightFormat, 30> k_format_values{k_formats};

constexpr std::array<WeightFormat, 19> k_gguf_by_size{
    WeightFormat::gguf_f16,  WeightFormat::gguf_q8_0,   WeightFormat::gguf_q6_k,    WeightFormat::gguf_q5_1,
    WeightFormat::gguf_q5_k_m, WeightFormat::gguf_q5_k_s, WeightFormat::gguf_q5_0,  WeightFormat::gguf_q4_1,
    WeightFormat::gguf_q4_k_m, WeightFormat::gguf_q4_k_s, WeightFormat::gguf_q4_0,  WeightFormat::gguf_iq4_nl,
    WeightFormat::gguf_iq4_xs, WeightFormat::gguf_q3_k_l, WeightFormat::gguf_q3_k_m, WeightFormat::gguf_q3_k_s,
    WeightFormat::gguf_q2_k, WeightFormat::gguf_iq3_xxs, WeightFormat::gguf_iq2_xxs,
};

// Mean bits per weight x 1e4 of each GGUF file type. K-quant mixes: llama.cpp
// tools/quantize/README.md table for Llama-3.1-8B (Q3_K_M from its Llama-2-7B table); plain block
// types: block bytes x 8 / block weights from ggml-common.h.
std::uint32_t gguf_bits(WeightFormat f) noexcept
{
  switch (f) {
  case WeightFormat::gguf_f16: return 160005;
  case WeightFormat::gguf_q8_0: return 85008;
  case WeightFormat::gguf_q6_k: return 65633;
  case WeightFormat::gguf_q5_k_m: return 57036;
  case WeightFormat::gguf_q5_k_s: return 55704;
  case WeightFormat::gguf_q5_0: return 55000;      // 22 B / 32
  case WeightFormat::gguf_q5_1: return 60000;      // 24 B / 32
  case WeightFormat::gguf_q4_k_m: return 48944;
  case WeightFormat::gguf_q4_k_s: return 46672;
  case WeightFormat::gguf_q4_0: return 45000;      // 18 B / 32
  case WeightFormat::gguf_q4_1: return 50000;      // 20 B / 32
  case WeightFormat::gguf_q3_k_l: return 42979;
  case WeightFormat::gguf_q3_k_m: return 39100;
  case WeightFormat::gguf_q3_k_s: return 36429;
  case WeightFormat::gguf_q2_k: return 31593;
  case WeightFormat::gguf_iq4_xs: return 44597;
  case WeightFormat::gguf_iq4_nl: return 45000;    // 18 B / 32
  case WeightFormat::gguf_iq3_xxs: return 30625;   // 98 B / 256
  case WeightFormat::gguf_iq2_xxs: return 20625;   // 66 B / 256
  default: return 160000;
  }
}

}  // namespace

Result<Task> parse_task(std::string_view s) { return lookup(k_tasks, s, "task"); }

Result<Engine> parse_engine(std::string_view s)
{
  static constexpr std::array<std::pair<std::string_view, Engine>, 7> k_aliases{{
      {"llamacpp", Engine::llama_cpp}, {"llama_cpp", Engine::llama_cpp}, {"llama.cpp", Engine::llama_cpp},
      {"hf", Engine::transformers}, {"tensorrt_llm", Engine::tensorrt_llm}, {"tensorrtllm", Engine::tensorrt_llm},
      {"trt_llm", Engine::tensorrt_llm},
  }};
  return lookup<Engine>(k_engines, s, "engine", k_aliases);
}

Result<WeightFormat> parse_weight_format(std::string_view s)
{
  static constexpr std::array<std::pair<std::string_view, WeightFormat>, 7> k_aliases{{
      {"float32", WeightFormat::fp32}, {"bfloat16", WeightFormat::bf16}, {"float16", WeightFormat::fp16},
      {"f32", WeightFormat::fp32}, {"q4_k", WeightFormat::gguf_q4_k_m}, {"q5_k", WeightFormat::gguf_q5_k_m},
      {"q3_k", WeightFormat::gguf_q3_k_m},
  }};
  return lookup<WeightFormat>(k_formats, s, "weight format", k_aliases);
}

Result<KvDtype> parse_kv_dtype(std::string_view s)
{
  static constexpr std::array<std::pair<std::string_view, KvDtype>, 4> k_aliases{{
      {"f16", KvDtype::fp16}, {"fp8_e4m3", KvDtype::fp8}, {"fp8_e5m2", KvDtype::fp8}, {"f32", KvDtype::fp32},
  }};
  return lookup<KvDtype>(k_kv, s, "KV cache dtype", k_aliases);
}

Result<Shard> parse_shard(std::string_view s) { return lookup(k_shards, s, "shard mode"); }

Result<Optimizer> parse_optimizer(std::string_view s)
{
  static constexpr std::array<std::pair<std::string_view, Optimizer>, 5> k_aliases{{
      {"adamw8bit", Optimizer::adamw_8bit}, {"paged_adamw_8bit", Optimizer::adamw_8bit},
      {"adamw_torch", Optimizer::adamw}, {"adam", Optimizer::adamw}, {"adamw_bnb_8bit", Optimizer::adamw_8bit},
  }};
  return lookup<Optimizer>(k_optimizers, s, "optimizer", k_aliases);
}

std::string_view to_string(Task v) noexcept { return name_of(k_tasks, v); }
std::string_view to_string(Engine v) noexcept { return name_of(k_engines, v); }

std::string_view display_name(Engine v) noexcept
{
  switch (v) {
  case Engine::vllm: return "vLLM";
  case Engine::sglang: return "SGLang";
  case Engine::tensorrt_llm: return "TensorRT-LLM";
  case Engine::unsloth: return "Unsloth";
  case Engine::deepspeed: return "DeepSpeed";
  default: return to_string(v);
  }
}
std::string_view to_string(WeightFormat v) noexcept { return name_of(k_formats, v); }
std::string_view to_string(KvDtype v) noexcept { return name_of(k_kv, v); }
std::string_view to_string(Shard v) noexcept { return name_of(k_shards, v); }
std::string_view to_string(Optimizer v) noexcept { return name_of(k_optimizers, v); }

std::span<const Task> all_tasks() noexcept { return k_task_values.v; }
std::span<const Engine> all_engines() noexcept { return k_engine_values.v; }
std::span<const WeightFormat> all_weight_formats() noexcept { return k_format_values.v; }
std::span<const KvDtype> all_kv_dtypes() noexcept { return k_kv_values.v; }
std::span<const Shard> all_shards() noexcept { return k_shard_values.v; }
std::span<const Optimizer> all_optimizers() noexcept { return k_optimizer_values.v; }
std::span<const WeightFormat> gguf_by_size() noexcept { return k_gguf_by_size; }

bool is_gguf(WeightFormat f) noexcept { return f >= WeightFormat::gguf_f16; }

bool requantizable(const JobSpec& job) noexcept
{
  if (job.engine == Engine::llama_cpp || job.engine == Engine::ollama) {
    return true;
  }
  return job.weights == WeightFormat::fp32 || job.weights == WeightFormat::bf16 || job.weights == WeightFormat::fp16;
}

bool is_quantized(WeightFormat f) noexcept
{
  switch (f) {
  case WeightFormat::fp32:
  case WeightFormat::bf16:
  case WeightFormat::fp16:
  case WeightFormat::gguf_f16: return false;
  default: return true;
  }
}

WeightBits weight_bits(WeightFormat f, Engine engine) noexcept
{
  WeightBits b;  // 16-bit everywhere
  // Group-128 int4 (AWQ/GPTQ and generic int4): 4 bits + fp16 scale/128 + packed 4-bit zero/128.
  constexpr std::uint32_t k_int4_g128 = 40000 + 1250 + 313;
  switch (f) {
  case WeightFormat::fp32: return WeightBits{320000, 320000, 320000, 320000, false};
  case WeightFormat::bf16:
  case WeightFormat::fp16: return b;
  case WeightFormat::fp8: b.linear = b.experts = 80000; return b;   // embeddings + lm_head stay 16-bit
  case WeightFormat::int8: b.linear = b.experts = 80000; return b;  // LLM.int8: nn.Linear only
  case WeightFormat::nf4:
    // bitsandbytes: 4 bits + fp32 absmax per 64 = 4.5; torchao NF4Tensor (torchtune) double-quantizes
    // the scales: 4 + 8/64 + 32/(64*256) = 4.127.
    b.linear = b.experts = engine == Engine::torchtune ? 41270 : 45000;
    return b;
  case WeightFormat::int4:
  case WeightFormat::awq:
  case WeightFormat::gptq: b.linear = b.experts = k_int4_g128; return b;
  case WeightFormat::mxfp4: b.experts = 42500; return b;  // 17 B / 32 for experts, the rest bf16
  // NVFP4: 4-bit floats + one FP8 scale per 16 (+ a per-tensor fp32 scale): 4.5 bits; embeddings and lm_head 16-bit.
  case WeightFormat::nvfp4: b.linear = b.experts = 45000; return b;
  default: break;
  }
  const std::uint32_t g = gguf_bits(f);
  return WeightBits{g, g, g, g, true};
}

std::uint32_t kv_bytes_per_32(KvDtype d) noexcept
{
  switch (d) {
  case KvDtype::fp32: return 128;
  case KvDtype::fp8: return 32;
  case KvDtype::q8_0: return 34;
  case KvDtype::q4_0: return 18;
  default: return 64;
  }
}

KvDtype resolve_kv_dtype(const JobSpec& job) noexcept
{
  if (job.kv_cache != KvDtype::auto_) {
    return job.kv_cache;
  }
  if (job.weights == WeightFormat::fp32) {
    return KvDtype::fp32;
  }
  if (job.engine == Engine::llama_cpp || job.engine == Engine::ollama || job.weights == WeightFormat::fp16 ||
      is_gguf(job.weights)) {
    return KvDtype::fp16;
  }
  return KvDtype::bf16;
}

}  // namespace gpurent
