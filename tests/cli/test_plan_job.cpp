// SPDX-License-Identifier: MIT
// make_job's one defaults mechanism (planner/plan_job.cpp) for models read from their own files: the
// format the headers show before quantization_config, a GGUF file's engine and type, an adapter's
// rank; what the command line gives always wins; job.defaults names the source of each choice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/plan_options.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"
#include "planner/recipe.hpp"

using namespace gpurent;

namespace {

const JobDefault* find_default(const std::vector<JobDefault>& d, std::string_view key)
{
  const auto it = std::find_if(d.begin(), d.end(), [&](const JobDefault& x) { return x.key == key; });
  return it == d.end() ? nullptr : &*it;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// llama-3.1-8b as its safetensors headers describe it: `format` with `bytes_per_param` (x100).
ModelArch read_from_headers(WeightFormat format, std::string label, std::uint64_t bytes_per_param_x100)
{
  ModelArch m = *find_model("llama-3.1-8b");
  m.hf_ids.clear();
  const ParamBreakdown pb = count_params(m);
  CheckpointWeights ck;
  ck.embedding = {pb.embedding + pb.lm_head, (pb.embedding + pb.lm_head) * 2};
  ck.linear = {pb.linear_weights, pb.linear_weights * bytes_per_param_x100 / 100};
  ck.other = {pb.total - pb.embedding - pb.lm_head - pb.linear_weights, 0};
  ck.other.bytes = ck.other.params * 2;
  ck.format = format;
  ck.format_label = std::move(label);
  ck.source = "safetensors headers of 4 files";
  m.checkpoint = ck;
  return m;
}

struct Made {
  JobSpec job;
  std::vector<JobDefault> defaults;
};

Made make(const ModelArch& m, std::vector<std::string> args)
{
  PlanArgs a;
  a.model = "acme/model";
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    std::string& field = args[i] == "--task"      ? a.task
                         : args[i] == "--engine"  ? a.engine
                         : args[i] == "--weights" ? a.weights
                                                  : a.lora_rank;
    field = args[i + 1];
  }
  const auto o = validate_plan_args(a);
  REQUIRE(o);
  Made out;
  const auto j = make_job(*o, m, &out.defaults);
  REQUIRE(j);
  out.job = *j;
  return out;
}

}  // namespace

TEST_CASE("make_job: the format the headers show wins over quantization_config, and says where it is from",
          "[cli][plan_job]")
{
  // config.json claims FP8; the files store bf16: the headers are the truth of what is stored.
  ModelArch m = read_from_headers(WeightFormat::bf16, "bf16", 200);
  m.quant_method = "fp8";
  m.quant_float = true;
  Made r = make(m, {"--task", "serve"});
  CHECK(r.job.weights == WeightFormat::bf16);
  const JobDefault* w = find_default(r.defaults, "weights");
  REQUIRE(w != nullptr);
  CHECK(has(w->why, "safetensors headers of 4 files: bf16"));
  // A GPTQ repack sized from its files; no headers read: quantization_config decides.
  m = read_from_headers(WeightFormat::gptq, "GPTQ int4 (group 128)", 53);
  m.quant_method = "awq";
  r = make(m, {"--task", "serve"});
  CHECK(r.job.weights == WeightFormat::gptq);
  CHECK(has(find_default(r.defaults, "weights")->why, "GPTQ int4 (group 128)"));
  CHECK(estimate(r.job).weights.n == m.checkpoint->total_bytes());  // exactly as stored
  m.checkpoint.reset();
  r = make(m, {"--task", "serve"});
  CHECK(r.job.weights == WeightFormat::awq);
  CHECK(has(find_default(r.defaults, "weights")->why, "config.json quantization_config: awq"));
  // The task's rules apply to either source: QLoRA trains on a 4-bit checkpoint as published,
  // full training loads 16-bit weights.
  m = read_from_headers(WeightFormat::gptq, "GPTQ int4 (group 128)", 53);
  CHECK(make(m, {"--task", "qlora"}).job.weights == WeightFormat::gptq);
  CHECK(make(m, {"--task", "train"}).job.weights == WeightFormat::bf16);
  CHECK(make(read_from_headers(WeightFormat::bf16, "bf16", 200), {"--task", "qlora"}).job.weights == WeightFormat::nf4);
}

TEST_CASE("make_job: --engine, --weights and --lora-rank given always win over the model's files", "[cli][plan_job]")
{
  ModelArch m = read_from_headers(WeightFormat::gptq, "GPTQ int4 (group 128)", 53);
  Made r = make(m, {"--task", "serve", "--weights", "fp8"});
  CHECK(r.job.weights == WeightFormat::fp8);
  CHECK(find_default(r.defaults, "weights") == nullptr);
  // A GGUF file runs under llama.cpp in its own type unless told otherwise.
  ModelArch g = read_from_headers(WeightFormat::gguf_q4_k_m, "GGUF Q4_K_M", 60);
  g.checkpoint->gguf = true;
  g.checkpoint->source = "GGUF header of model-Q4_K_M.gguf";
  r = make(g, {"--task", "serve"});
  CHECK(r.job.engine == Engine::llama_cpp);
  CHECK(r.job.weights == WeightFormat::gguf_q4_k_m);
  CHECK(has(find_default(r.defaults, "engine")->why, "GGUF header of model-Q4_K_M.gguf"));
  CHECK(has(find_default(r.defaults, "weights")->why, "GGUF file's own type"));
  r = make(g, {"--task", "serve", "--engine", "vllm"});
  CHECK(r.job.engine == Engine::vllm);
  CHECK(r.job.weights == WeightFormat::gguf_q4_k_m);  // vLLM loads a GGUF file too
  CHECK(find_default(r.defaults, "engine") == nullptr);
  r = make(g, {"--task", "infer", "--engine", "transformers"});
  CHECK(r.job.weights == WeightFormat::bf16);  // transformers dequantizes it
  CHECK(has(find_default(r.defaults, "weights")->why, "dequantizes"));
  r = make(g, {"--task", "lora"});  // training stays on transformers
  CHECK(r.job.engine == Engine::transformers);
  // An adapter trains on at its own rank unless --lora-rank says otherwise.
  ModelArch a = read_from_headers(WeightFormat::bf16, "bf16", 200);
  a.adapter = AdapterWeights{8, {1'000'000, 4'000'000}, {"q_proj", "v_proj"}};
  r = make(a, {"--task", "lora"});
  CHECK(r.job.lora_rank == 8);
  CHECK(has(find_default(r.defaults, "lora_rank")->why, "adapter"));
  r = make(a, {"--task", "lora", "--lora-rank", "32"});
  CHECK(r.job.lora_rank == 32);
  CHECK(find_default(r.defaults, "lora_rank") == nullptr);
}

TEST_CASE("Recipe: a model sized from its headers changes format with its exact parameters", "[cli][plan_job]")
{
  // The stored bf16 bytes as read; the recipe's smaller format scales the same parameters.
  const ModelArch m = read_from_headers(WeightFormat::bf16, "bf16", 200);
  const Made r = make(m, {"--task", "serve"});
  CHECK(estimate(r.job).weights.n == m.checkpoint->total_bytes());
  const Bytes card{16ULL << 30};  // a 16 GiB card: bf16 weights alone are 15 GiB
  const Recipe rec = find_recipe(r.job, card, {});
  REQUIRE(rec.fits);
  REQUIRE(rec.job.weights != WeightFormat::bf16);
  REQUIRE(rec.job.model.checkpoint.has_value());
  JobSpec catalogue = rec.job;
  catalogue.model.checkpoint.reset();
  // Same parameters by part, same bits: the same bytes as the catalogue's llama-3.1-8b.
  CHECK(estimate(rec.job).weights == estimate(catalogue).weights);
  CHECK(estimate(rec.job).weights.n < m.checkpoint->total_bytes() * 6 / 10);
}
