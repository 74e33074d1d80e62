// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sizing/checkpoint_use.hpp"
#include "sizing/estimate.hpp"
#include "sizing/gguf_model.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/model_config.hpp"
#include "sizing/precision.hpp"
#include "sizing/weights_from_headers.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"

using gpurent::CheckpointWeights;
using gpurent::JobSpec;
using gpurent::WeightFormat;
namespace t = gpurent::test;

namespace {

CheckpointWeights weigh(const t::Layout& l)
{
  const std::string bytes = t::safetensors_header(l.tensors);
  const auto h = gpurent::parse_safetensors_prefix(bytes, bytes.size() + t::st_total(l.tensors));
  REQUIRE(h);
  const auto entries = gpurent::tensor_entries(*h);
  return gpurent::weights_from_safetensors(entries, gpurent::quant_hints_from_config(l.config));
}

std::string read_fixture(const std::string& name)
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/models/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("weights from headers: real quantized layouts, bytes exact, parameters unpacked", "[sizing][weights]")
{
  struct Case {
    const char* name;
    t::Layout layout;
    WeightFormat format;
    const char* label;
  };
  auto oss = t::gpt_oss_20b();
  oss.config = read_fixture("gpt-oss-20b.json");
  Case cases[] = {
      {"GPTQ Llama-3.1-8B", t::llama31_8b_gptq_int4(), WeightFormat::gptq, "GPTQ int4 (group 128)"},
      {"AWQ Qwen2.5-7B", t::qwen25_7b_awq(), WeightFormat::awq, "AWQ int4 (group 128)"},
      {"FP8 Qwen3-8B", t::qwen3_8b_fp8(), WeightFormat::fp8, "FP8 E4M3 (block scales)"},
      {"MXFP4 gpt-oss-20b", oss, WeightFormat::mxfp4, "MXFP4 experts"},
      {"bnb-4bit Llama-3-8B", t::llama3_8b_bnb_nf4(), WeightFormat::nf4, "bitsandbytes 4-bit (double quantization)"},
      {"Mistral Small 3.1 vision", t::mistral_small_31_vision(), WeightFormat::bf16, "bf16"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const CheckpointWeights w = weigh(c.layout);
    CHECK(w.total_bytes() == t::st_total(c.layout.tensors));  // every byte, once
    CHECK(w.total_params() == c.layout.params);                 // the published count
    CHECK(w.outside_text_params == c.layout.outside_text_params);
    REQUIRE(w.format);
    CHECK(*w.format == c.format);
    CHECK_THAT(w.format_label, Catch::StartsWith(c.label));
    CHECK(w.notes.empty());
    std::uint64_t by_dtype = 0;
    for (const auto& [dtype, bytes] : w.bytes_by_dtype) {
      by_dtype += bytes;
    }
    CHECK(by_dtype == w.total_bytes());
  }
}

TEST_CASE("weights from headers: the parts of each layout", "[sizing][weights]")
{
  const auto gptq = weigh(t::llama31_8b_gptq_int4());
  // Embedding and lm_head stay fp16: 2 x 128256 x 4096 x 2 bytes.
  CHECK(gptq.embedding.bytes == 2ULL * 128256 * 4096 * 2);
  CHECK(gptq.embedding.params == 2ULL * 128256 * 4096);
  CHECK(gptq.linear.params == 32ULL * 218'103'808);
  CHECK(gptq.experts.bytes == 0);
  // int4 + an fp16 scale and a packed 4-bit zero per 128 weights + a 32-bit g_idx per input row.
  const double g_idx_bits = 32.0 * (4 * 4096 + 2 * 4096 + 14336) / 218'103'808.0;
  const double bits = static_cast<double>(gptq.linear.bytes) * 8 / static_cast<double>(gptq.linear.params);
  CHECK(bits == Approx(4.0 + 16.0 / 128 + 4.0 / 128 + g_idx_bits).epsilon(1e-9));

  const auto oss = weigh(t::gpt_oss_20b());
  // 24 layers of 32 experts: gate_up + down weights as 4-bit values with an 8-bit scale per 32.
  CHECK(oss.experts.params == 24ULL * 32 * 3 * 2880 * 2880 + 24ULL * 32 * (5760 + 2880));
  CHECK(oss.experts.bytes == 24ULL * 32 * 3 * 2880 * 2880 * 17 / 32 + 24ULL * 32 * (5760 + 2880) * 2);
  CHECK(oss.other.params > 0);  // routers, sinks, norms

  const auto vision = weigh(t::mistral_small_31_vision());
  CHECK(vision.outside_text_bytes == vision.outside_text_params * 2);
  CHECK(vision.outside_text_bytes <= vision.other.bytes);
}

TEST_CASE("weights from headers: GGUF K-quants exact per tensor, not a bits-per-weight average", "[sizing][weights]")
{
  const auto llama = t::llama31_8b_q4_k_m(false);
  const auto entries = gpurent::tensor_entries(llama);
  const auto arch = gpurent::arch_from_gguf(llama, entries, "x.gguf");
  REQUIRE(arch);
  REQUIRE(arch->checkpoint);
  CHECK(arch->checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  CHECK(arch->checkpoint->format == WeightFormat::gguf_q4_k_m);
  CHECK_THAT(arch->checkpoint->format_label, Catch::Equals("GGUF Q4_K_M (Q4_K, Q6_K, F32)"));
  CHECK(arch->family == "llama");
  CHECK(arch->layers == 32);
  CHECK(arch->kv_heads == 8);
  CHECK(arch->head_dim == 128);
  CHECK(arch->vocab == 128256);
  CHECK(arch->max_context == 131072);
  CHECK_FALSE(arch->tied_embeddings);
  CHECK(arch->approximate.empty());

  const auto mixtral = t::mixtral_8x7b_q4_k_m();
  std::uint64_t sum = 0;
  for (const auto& x : mixtral.tensors) {
    sum += x.bytes;
  }
  const auto m = gpurent::arch_from_gguf(mixtral, gpurent::tensor_entries(mixtral), "m.gguf");
  REQUIRE(m);
  CHECK(m->family == "mixtral");
  CHECK(m->experts == 8);
  CHECK(m->experts_active == 2);
  CHECK(m->checkpoint->total_bytes() == sum);
  CHECK(m->checkpoint->experts.bytes > m->checkpoint->linear.bytes);
  // With the file, the estimate is the file's own tensors (Mixtral's attn_k/attn_v in Q8_0,
  // attn_output in Q5_K…); without it, llama.cpp's per-tensor rules (sizing/gguf_mix.cpp) give the
  // same bytes as this file built from those rules in tests/fakes.
  JobSpec job;
  job.model = *gpurent::find_model_ptr("mixtral-8x7b");
  job.engine = gpurent::Engine::llama_cpp;
  job.weights = WeightFormat::gguf_q4_k_m;
  const auto average = gpurent::estimate(job).weights.n;
  job.model.checkpoint = m->checkpoint;
  const auto exact = gpurent::estimate(job).weights.n;
  // On the GPU: every tensor but token_embd, which llama.cpp keeps in host memory (the file has
  // its own output.weight).
  CHECK(m->checkpoint->output_tensor);
  CHECK(m->checkpoint->input_embedding_bytes > 0);
  CHECK(exact == sum - m->checkpoint->input_embedding_bytes);
  CHECK(average == exact);
}

TEST_CASE("weights from headers: the estimate uses stored bytes when it loads them as stored", "[sizing][weights]")
{
  JobSpec job;
  job.model = *gpurent::find_model_ptr("llama-3.1-8b");
  job.engine = gpurent::Engine::vllm;
  job.task = gpurent::Task::serve;
  const auto gptq = weigh(t::llama31_8b_gptq_int4());
  job.model.checkpoint = gptq;
  job.weights = WeightFormat::gptq;
  CHECK(gpurent::estimate(job).weights.n == gptq.total_bytes());
  job.weights = WeightFormat::int4;  // the same storage under its generic name
  CHECK(gpurent::estimate(job).weights.n == gptq.total_bytes());
  job.weights = WeightFormat::bf16;  // dequantized: exact parameters x 2
  CHECK(gpurent::estimate(job).weights.n == gptq.total_params() * 2);
  job.gpus = 2;
  job.weights = WeightFormat::gptq;
  CHECK(gpurent::estimate(job).weights.n == (gptq.total_bytes() + 1) / 2);

  // QLoRA on a bitsandbytes checkpoint: the 4-bit linears as stored, the rest cast to fp32.
  JobSpec q;
  q.model = *gpurent::find_model_ptr("llama-3-8b");
  const auto nf4 = weigh(t::llama3_8b_bnb_nf4());
  q.model.checkpoint = nf4;
  q.task = gpurent::Task::qlora;
  q.weights = WeightFormat::nf4;
  CHECK(gpurent::estimate(q).weights.n == nf4.linear.bytes + (nf4.embedding.params + nf4.other.params) * 4);
  CHECK_FALSE(gpurent::checkpoint_bytes(q, WeightFormat::nf4, gpurent::weight_bits(WeightFormat::nf4, q.engine)) ==
              std::nullopt);

  // Full training of a bf16 checkpoint under transformers keeps fp32 master weights.
  JobSpec full;
  full.model = *gpurent::find_model_ptr("mistral-small-24b");
  const auto vision = weigh(t::mistral_small_31_vision());
  full.model.checkpoint = vision;
  full.task = gpurent::Task::train;
  CHECK(gpurent::estimate(full).weights.n == vision.total_params() * 4);
  full.engine = gpurent::Engine::torchtune;
  CHECK(gpurent::estimate(full).weights.n == vision.total_bytes());

  // MoE offload moves the experts' stored bytes.
  JobSpec moe;
  moe.model = *gpurent::find_model_ptr("gpt-oss-20b");
  const auto oss = weigh(t::gpt_oss_20b());
  moe.model.checkpoint = oss;
  moe.weights = WeightFormat::mxfp4;
  const auto split = gpurent::weight_split(moe, gpurent::count_params(moe.model));
  CHECK(split.total.n == oss.total_bytes());
  CHECK(split.experts.n == oss.experts.bytes);
}

TEST_CASE("weight files: the loader's files, GGUF types and shards", "[sizing][weights]")
{
  const std::vector<std::string> mistral{"config.json", "consolidated.safetensors", "model-00001-of-00002.safetensors",
                                         "model-00002-of-00002.safetensors", "model.safetensors.index.json"};
  const auto index = gpurent::files_of_safetensors_index(
      R"({"metadata":{"total_size":10},"weight_map":{"a":"model-00002-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00001-of-00002.safetensors"}})");
  REQUIRE(index);
  CHECK(*index == std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"});
  CHECK(gpurent::safetensors_weight_files(mistral, *index) == *index);
  // Without an index: the model files, not Mistral's consolidated copy nor an adapter.
  CHECK(gpurent::safetensors_weight_files(mistral, {}) ==
        std::vector<std::string>{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"});
  CHECK(gpurent::safetensors_weight_files({"model.safetensors", "adapter_model.safetensors"}, {}) ==
        std::vector<std::string>{"model.safetensors"});
  CHECK_FALSE(gpurent::files_of_safetensors_index(R"({"weight_map":{"a":"../../etc/passwd"}})"));
  CHECK_FALSE(gpurent::files_of_safetensors_index(R"({"weight_map":{"a":"/abs.safetensors"}})"));

  const std::vector<std::string> repo{"README.md",
                                      "Llama-3.1-8B-Instruct-Q4_K_M.gguf",
                                      "Llama-3.1-8B-Instruct-Q8_0.gguf",
                                      "Llama-3.1-8B-Instruct-IQ4_XS.gguf",
                                      "mmproj-model-f16.gguf",
                                      "Q6_K/Llama-3.1-8B-Instruct-Q6_K-00001-of-00002.gguf",
                                      "Q6_K/Llama-3.1-8B-Instruct-Q6_K-00002-of-00002.gguf"};
  CHECK(gpurent::gguf_models(repo).size() == 4);  // mmproj is not a model
  const auto q6 = gpurent::choose_gguf(repo, "q6-k", "r");
  REQUIRE(q6);
  CHECK(q6->files.size() == 2);
  CHECK(q6->type == "Q6_K");
  const auto dflt = gpurent::choose_gguf(repo, "", "r");
  REQUIRE(dflt);
  CHECK(dflt->type == "Q4_K_M");
  REQUIRE(dflt->notes.size() == 1);
  CHECK_THAT(dflt->notes[0], Catch::Contains("Q8_0") && Catch::Contains("--weights"));
  const auto missing = gpurent::choose_gguf(repo, "Q2_K", "r");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == gpurent::Errc::not_found);
  CHECK_THAT(missing.error().message, Catch::Contains("IQ4_XS") && Catch::Contains("Q6_K"));
  const auto none = gpurent::choose_gguf({"a.gguf", "b.gguf"}, "", "r");
  REQUIRE_FALSE(none);
  CHECK_THAT(none.error().message, Catch::Contains("a.gguf") && Catch::Contains("--weights"));
  const auto partial = gpurent::gguf_models({"x-Q4_K_M-00001-of-00003.gguf", "x-Q4_K_M-00002-of-00003.gguf"});
  REQUIRE(partial.size() == 1);
  CHECK_FALSE(partial[0].notes.empty());
}

TEST_CASE("weights from headers: a LoRA adapter and its rank", "[sizing][weights]")
{
  std::vector<gpurent::TensorEntry> ts;
  std::uint64_t params = 0;
  for (int i = 0; i < 28; ++i) {
    const std::string p = "base_model.model.model.layers." + std::to_string(i) + ".self_attn.";
    ts.push_back({p + "q_proj.lora_A.weight", "BF16", {64, 3072}, 64 * 3072 * 2});
    ts.push_back({p + "q_proj.lora_B.weight", "BF16", {3072, 64}, 64 * 3072 * 2});
    params += 2 * 64 * 3072;
  }
  const auto a = gpurent::adapter_from_safetensors(ts, R"({"r":64,"lora_alpha":16,"target_modules":["q_proj"]})");
  REQUIRE(a);
  CHECK(a->rank == 64);
  CHECK(a->weights.params == params);
  CHECK(a->weights.bytes == params * 2);
  const auto inferred = gpurent::adapter_from_safetensors(ts, R"({"peft_type":"LORA"})");
  REQUIRE(inferred);
  CHECK(inferred->rank == 64);
  CHECK_FALSE(gpurent::adapter_from_safetensors({}, "{}"));

  JobSpec job;
  job.model = *gpurent::find_model_ptr("llama-3.2-3b");
  job.model.adapter = *a;
  job.task = gpurent::Task::lora;
  job.lora_rank = 64;
  CHECK(gpurent::estimate(job).adapters.n == params * 4);  // fp32 adapters under peft
  job.lora_rank = 32;
  CHECK(gpurent::estimate(job).adapters.n == params * 2);
  job.task = gpurent::Task::infer;  // served with the base: its stored bytes on top
  JobSpec base = job;
  base.model.adapter.reset();
  CHECK(gpurent::estimate(job).weights.n == gpurent::estimate(base).weights.n + params * 2);
}
