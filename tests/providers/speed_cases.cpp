// SPDX-License-Identifier: MIT
#include "providers/speed_cases.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "sizing/engine_release.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent::test {
namespace {

std::uint32_t u32(const nlohmann::json& j, const char* key, std::uint32_t fallback = 0)
{
  return j.contains(key) && j[key].is_number() ? j[key].get<std::uint32_t>() : fallback;
}

std::string str(const nlohmann::json& j, const char* key)
{
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

std::optional<ModelArch> model_of(const nlohmann::json& row)
{
  if (const std::string name = str(row, "gpurent_model"); !name.empty()) {
    if (const ModelArch* m = find_model_ptr(name)) {
      return *m;
    }
    return std::nullopt;
  }
  if (!row.contains("arch") || !row["arch"].is_object()) {
    return std::nullopt;
  }
  const auto& a = row["arch"];
  ModelArch m;
  m.name = str(row, "model");
  m.params = a.value("params", std::uint64_t{0});
  m.layers = u32(a, "layers");
  m.hidden = u32(a, "hidden");
  m.heads = u32(a, "heads");
  m.kv_heads = u32(a, "kv_heads");
  m.head_dim = u32(a, "head_dim");
  m.intermediate = u32(a, "intermediate");
  m.vocab = u32(a, "vocab");
  m.experts = u32(a, "experts");
  m.experts_active = u32(a, "experts_active");
  m.moe_intermediate = u32(a, "moe_intermediate", m.intermediate);
  m.global_layers = m.layers;
  m.gated_mlp = a.value("gated_mlp", false);  // MPT: fc1 + fc2
  m.tied_embeddings = a.value("tied_embeddings", true);
  m.max_context = 1 << 20;
  return m;
}

std::optional<WeightFormat> format_of(std::string f)
{
  if (f.starts_with("gguf_")) {
    f = f.substr(5);
    if (f == "mxfp4") {
      return WeightFormat::mxfp4;
    }
  }
  auto w = parse_weight_format(f);
  return w ? std::optional<WeightFormat>(*w) : std::nullopt;
}

struct EngineOf {
  Engine engine;
  SpeedEngine speed;
};

std::optional<EngineOf> engine_of(const nlohmann::json& row, WeightFormat w)
{
  const std::string e = str(row, "engine");
  if (e == "llama.cpp" || (e == "other" && is_gguf(w))) {
    return EngineOf{Engine::llama_cpp, SpeedEngine::llama_cpp};
  }
  if (e == "vllm") {
    return EngineOf{Engine::vllm, SpeedEngine::vllm};
  }
  if (e == "sglang") {
    return EngineOf{Engine::sglang, SpeedEngine::sglang};
  }
  if (e == "tensorrt-llm" || e == "other") {  // NVIDIA NIM runs TensorRT-LLM
    return EngineOf{Engine::vllm, SpeedEngine::tensorrt_llm};
  }
  if (e == "transformers") {
    return EngineOf{Engine::transformers, SpeedEngine::transformers};
  }
  return EngineOf{Engine::transformers, SpeedEngine::trainer};  // llm-foundry, nemo, torchtitan, torchtune, unsloth …
}

std::optional<SpeedCase> case_of(const nlohmann::json& row, std::string* why)
{
  SpeedCase c;
  c.id = str(row, "id");
  c.kind = str(row, "kind");
  auto model = model_of(row);
  if (!model) {
    *why = "model unknown";
    return std::nullopt;
  }
  auto card = find_card(str(row, "card_id"));
  if (str(row, "card_id").empty() || !card) {
    *why = "card unknown";
    return std::nullopt;
  }
  auto weights = format_of(str(row, "weights_format"));
  if (!weights) {
    *why = "format unknown";
    return std::nullopt;
  }
  auto engine = engine_of(row, *weights);
  c.engine = engine->speed;
  c.card = *card;
  c.measured = row.value("value_tokens_per_s", 0.0);
  JobSpec& j = c.job;
  j.model = *model;
  j.engine = engine->engine;
  j.weights = *weights;
  j.gpus = std::max<std::uint32_t>(u32(row, "gpus", 1), 1);
  if (c.engine == SpeedEngine::llama_cpp) {
    // Its build (llama-bench's "build 8c570c94 (2836)"); a PR branch's row names the path its
    // quantized prompt took instead, run as a build on that side of b3216.
    const std::string path = str(row, "prompt_path");
    j.engine_version = path == "dequantize_cublas" ? k_llamacpp_first_mmq_default - 1
                       : path == "mmq"             ? k_llamacpp_first_mmq_default
                                                   : parse_llamacpp_build(str(row, "engine_version")).value_or(0);
  }
  const std::uint32_t tp = u32(row, "tensor_parallel", j.gpus);
  if (j.gpus > 1) {
    j.shard = Shard::tp;
    j.pipeline = tp > 0 && tp < j.gpus && j.gpus % tp == 0 ? j.gpus / tp : 1;
    if (c.engine == SpeedEngine::llama_cpp) {
      j.shard = Shard::none;  // --split-mode layer
      j.pipeline = 1;
    }
  }
  // The KV cache's format where the source states one (TensorRT-LLM's FP8 engines are built with
  // --fp8_kv_cache); else the engine's default, the weights' 16-bit type.
  if (const std::string kv = str(row, "kv_cache"); !kv.empty()) {
    const auto dtype = parse_kv_dtype(kv);
    if (!dtype) {
      *why = "kv_cache unknown";
      return std::nullopt;
    }
    j.kv_cache = *dtype;
  }
  const std::uint32_t in = u32(row, "input_len");
  const std::uint32_t out = u32(row, "output_len");
  if (c.kind == "decode") {
    j.task = Task::infer;
    // The formula decodes at half the context: a run of `out` tokens after `in` attends over
    // in + out / 2 on average.
    j.context = std::max<std::uint32_t>(2 * in + std::max<std::uint32_t>(out, 128), 2);
  } else if (c.kind == "prefill") {
    j.task = Task::infer;
    c.load.input_len = std::max<std::uint32_t>(in, 1);
    j.context = std::max<std::uint32_t>(in, 1);
  } else if (c.kind == "serve") {
    j.task = Task::serve;
    c.load.input_len = std::max<std::uint32_t>(in, 1);
    c.load.output_len = std::max<std::uint32_t>(out, 1);
    c.load.concurrency = u32(row, "concurrency", u32(row, "batch_or_concurrency", 1));
    j.context = c.load.input_len + c.load.output_len;
  } else if (c.kind == "train") {
    const std::string recipe = str(row, "recipe");
    j.task = recipe == "lora" ? Task::lora : recipe == "qlora" ? Task::qlora : Task::train;
    j.context = u32(row, "context", 2048);
    j.batch = u32(row, "micro_batch", 1);
    // Pretraining corpora and the packed SFT benchmarks fill every sequence; a row says
    // "packed": false where its batches were padded.
    j.pack = !row.contains("packed") || !row["packed"].is_boolean() || row["packed"].get<bool>();
    // Compiled unless the row says it ran eager: the frameworks with no such flag (NeMo, Megatron,
    // llm-foundry) run their own fused kernels.
    j.compile = !row.contains("compiled") || !row["compiled"].is_boolean() || row["compiled"].get<bool>();
    j.grad_checkpointing = row.value("grad_checkpointing", nlohmann::json()).is_boolean() &&
                           row["grad_checkpointing"].get<bool>();
    const std::string shard = str(row, "shard");
    j.shard = shard == "ddp" ? Shard::ddp : shard == "zero3" ? Shard::zero3 : shard == "none" ? Shard::none : Shard::fsdp;
    if (j.gpus == 1) {
      j.shard = Shard::none;
    }
  } else {
    *why = "kind unknown";
    return std::nullopt;
  }
  if (c.measured <= 0) {
    *why = "no value";
    return std::nullopt;
  }
  return c;
}

}  // namespace

std::vector<SpeedCase> load_speed_cases(const std::string& path, std::vector<std::string>* skipped)
{
  std::ifstream f(path);
  const auto rows = nlohmann::json::parse(f);
  std::vector<SpeedCase> out;
  for (const auto& row : rows) {
    if (!row.value("use", false)) {
      continue;
    }
    std::string why;
    if (auto c = case_of(row, &why)) {
      out.push_back(std::move(*c));
    } else if (skipped != nullptr) {
      skipped->push_back(str(row, "id") + ": " + why);
    }
  }
  std::sort(out.begin(), out.end(), [](const SpeedCase& a, const SpeedCase& b) { return a.id < b.id; });
  // Every other case per kind fits the constants; the rest check them.
  std::map<std::string, std::size_t> seen;
  for (auto& c : out) {
    c.fit = seen[c.kind]++ % 2 == 0;
  }
  return out;
}

double predict(const SpeedCase& c, const SpeedConstants& k)
{
  const Speed s = estimate_speed(c.job, c.card, c.load, k, c.engine);
  std::optional<double> v;
  if (c.kind == "decode") {
    v = s.decode_tokens_per_s;
  } else if (c.kind == "prefill") {
    v = s.prefill_tokens_per_s;
  } else if (c.kind == "serve") {
    v = s.serve_output_tokens_per_s;
  } else {
    v = s.train_tokens_per_s;
  }
  return v.value_or(0.0);
}

Spread spread_of(const std::vector<double>& ratios)
{
  Spread s;
  std::vector<double> e;
  for (double r : ratios) {
    e.push_back(std::fabs(r - 1.0) * 100.0);
  }
  std::sort(e.begin(), e.end());
  s.n = e.size();
  if (e.empty()) {
    return s;
  }
  s.p80 = e[static_cast<std::size_t>(std::ceil(0.8 * static_cast<double>(e.size()))) - 1];
  s.median = e.size() % 2 == 1 ? e[e.size() / 2] : (e[e.size() / 2 - 1] + e[e.size() / 2]) / 2.0;
  return s;
}

}  // namespace gpurent::test
