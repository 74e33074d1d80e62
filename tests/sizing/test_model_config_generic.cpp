// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "sizing/estimate.hpp"
#include "sizing/gguf_model.hpp"
#include "sizing/param_count.hpp"
#include "sizing/model_config.hpp"
#include "tests/fakes/checkpoint_builder.hpp"

using gpurent::parse_model_config;

namespace {

bool approximate(const gpurent::ModelArch& m, const std::string& part)
{
  for (const auto& a : m.approximate) {
    if (a.part == part) {
      return true;
    }
  }
  return false;
}

std::uint64_t kv_at(const gpurent::ModelArch& m, std::uint32_t context)
{
  gpurent::JobSpec job;
  job.model = m;
  job.context = context;
  return gpurent::kv_cache_bytes(job, context, 1).n;
}

}  // namespace

TEST_CASE("unknown model_type: sized from generic keys, labelled, never refused", "[sizing][model_config]")
{
  // GLM-4.5 (glm4_moe): standard names plus its own MoE keys.
  const auto glm = parse_model_config(
      R"({"model_type":"glm4_moe","num_hidden_layers":92,"hidden_size":5120,"num_attention_heads":96,)"
      R"("num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"moe_intermediate_size":1536,)"
      R"("n_routed_experts":160,"num_experts_per_tok":8,"n_shared_experts":1,"first_k_dense_replace":3,)"
      R"("vocab_size":151552,"max_position_embeddings":131072,"attention_bias":true,"torch_dtype":"bfloat16"})",
      "glm.json");
  REQUIRE(glm);
  CHECK(glm->family == "glm4_moe");
  CHECK(glm->experts == 160);
  CHECK(glm->experts_active == 8);
  CHECK(glm->shared_experts == 1);
  CHECK(glm->dense_layers == 3);
  CHECK(glm->kv_heads == 8);
  CHECK(approximate(*glm, "kv_cache"));
  CHECK(approximate(*glm, "activations"));
  CHECK(approximate(*glm, "params"));
  // KV: 92 layers x 2 x 8 heads x 128 x 2 bytes per token.
  CHECK(kv_at(*glm, 1000) == 92ULL * 2 * 8 * 128 * 2 * 1000);

  // Qwen3-Next: one full-attention layer in four; the others are linear attention (no KV).
  const auto next = parse_model_config(
      R"({"model_type":"qwen3_next","num_hidden_layers":48,"hidden_size":2048,"num_attention_heads":16,)"
      R"("num_key_value_heads":2,"head_dim":256,"intermediate_size":5120,"moe_intermediate_size":512,)"
      R"("num_experts":512,"num_experts_per_tok":10,"full_attention_interval":4,"vocab_size":151936,)"
      R"("max_position_embeddings":262144})",
      "next.json");
  REQUIRE(next);
  CHECK(next->kv_free_layers == 36);
  CHECK(kv_at(*next, 1000) == 12ULL * 2 * 2 * 256 * 2 * 1000);

  // Hybrid with layer_types (linear attention + sliding + full).
  const auto hybrid = parse_model_config(
      R"({"model_type":"newthing","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":4,)"
      R"("num_key_value_heads":2,"intermediate_size":512,"vocab_size":1000,"max_position_embeddings":8192,)"
      R"("sliding_window":128,"layer_types":["linear_attention","sliding_attention","full_attention","mamba"]})",
      "h.json");
  REQUIRE(hybrid);
  CHECK(hybrid->kv_free_layers == 2);
  CHECK(hybrid->global_layers == 1);
  CHECK(hybrid->sliding_window == 128);
  CHECK(kv_at(*hybrid, 1000) == (1000ULL + 128) * 2 * 2 * 64 * 2);

  // Mamba: no attention heads at all: no KV cache, said so.
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/models/mamba-2.8b.json");
  std::ostringstream ss;
  ss << in.rdbuf();
  const auto mamba = parse_model_config(ss.str(), "mamba.json");
  REQUIRE(mamba);
  CHECK(mamba->kv_free_layers == 64);
  CHECK(kv_at(*mamba, 4096) == 0);
  CHECK_THAT(mamba->approximate.front().why, Catch::Contains("attention-free"));

  // GPT-2 style names; a sliding window without a layer pattern counts as full attention.
  const auto gpt2 = parse_model_config(
      R"({"model_type":"gpt2like","n_layer":12,"n_embd":768,"n_head":12,"n_positions":1024,"vocab_size":50257,)"
      R"("sliding_window":256})",
      "g.json");
  REQUIRE(gpt2);
  CHECK(gpt2->layers == 12);
  CHECK(gpt2->intermediate == 4 * 768);
  CHECK(gpt2->sliding_window == 0);
  CHECK_THAT(gpt2->approximate.front().why, Catch::Contains("upper bound"));

  // Llama 4 style: the language model is text_config, of an unknown type.
  const auto llama4 = parse_model_config(
      R"({"model_type":"llama4","text_config":{"model_type":"llama4_text","num_hidden_layers":48,"hidden_size":5120,)"
      R"("num_attention_heads":40,"num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,)"
      R"("num_local_experts":16,"num_experts_per_tok":1,"vocab_size":202048,"max_position_embeddings":10485760},)"
      R"("vision_config":{"hidden_size":1408}})",
      "l4.json");
  REQUIRE(llama4);
  CHECK(llama4->family == "llama4_text");
  CHECK(llama4->experts == 16);
  // Still refused: what no reading can make sense of.
  CHECK_FALSE(parse_model_config(R"({"model_type":"x","hidden_size":64})", "x.json"));
  CHECK_FALSE(parse_model_config(R"({"model_type":"x","num_hidden_layers":-1,"hidden_size":64})", "x.json"));
}

TEST_CASE("GGUF architectures: unknown ones are read from llama.cpp's keys, labelled", "[sizing][gguf]")
{
  namespace t = gpurent::test;
  gpurent::GgufValue kv_per_layer;
  kv_per_layer.type = gpurent::GgufType::u32;
  kv_per_layer.is_array = true;
  kv_per_layer.count = 4;
  for (std::uint32_t v : {0U, 8U, 0U, 8U}) {
    kv_per_layer.raw.append(reinterpret_cast<const char*>(&v), 4);
  }
  const auto h = t::gguf_header(
      {{"general.architecture", t::gv_str("jamba")},
       {"jamba.block_count", t::gv_u32(4)},
       {"jamba.embedding_length", t::gv_u32(1024)},
       {"jamba.attention.head_count", t::gv_u32(16)},
       {"jamba.attention.head_count_kv", kv_per_layer},
       {"jamba.context_length", t::gv_u32(4096)},
       {"jamba.vocab_size", t::gv_u32(1000)}},
      {{"token_embd.weight", "F16", {1024, 1000}}, {"blk.0.attn_q.weight", "Q8_0", {1024, 1024}}});
  const auto arch = gpurent::arch_from_gguf(h, gpurent::tensor_entries(h), "j.gguf");
  REQUIRE(arch);
  CHECK(arch->family == "jamba");
  CHECK(arch->kv_free_layers == 2);
  CHECK(arch->kv_heads == 8);
  CHECK(arch->tied_embeddings);  // no output.weight
  CHECK(arch->params == 1024ULL * 1000 + 1024 * 1024);
  REQUIRE_FALSE(arch->approximate.empty());
  CHECK_THAT(arch->approximate.front().why, Catch::Contains("jamba"));
  // Without sizes nor tensors there is nothing to read.
  const auto empty = t::gguf_header({{"general.architecture", t::gv_str("x")}}, {});
  CHECK_FALSE(gpurent::arch_from_gguf(empty, {}, "e.gguf"));
}

TEST_CASE("Llama 4 Maverick: MoE layers interleave with dense ones (about 400B, 17B active)")
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/sizing/llama4_maverick_config.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const auto maverick = parse_model_config(text.str(), "llama4_maverick_config.json");
  REQUIRE(maverick);
  CHECK(maverick->layers == 48);
  CHECK(maverick->dense_layers == 24);  // range(1, 48, 2): 24 MoE layers
  CHECK(maverick->intermediate == 16384);  // the dense layers' intermediate_size_mlp
  CHECK(maverick->moe_intermediate == 8192);
  CHECK(maverick->shared_experts == 1);
  const auto b = gpurent::count_params(*maverick);
  // Meta's model card: "17B active parameters", 400B total (the vision tower not counted here).
  CHECK(std::abs(static_cast<double>(b.total) / 400e9 - 1.0) < 0.01);
  CHECK(std::abs(static_cast<double>(b.active) / 17e9 - 1.0) < 0.03);
  // Every layer MoE (the step ignored) is what a reader without it counted: about 778B.
  auto every = nlohmann::json::parse(text.str());
  every["text_config"].erase("interleave_moe_layer_step");
  const auto all_moe = parse_model_config(every.dump(), "every-layer.json");
  REQUIRE(all_moe);
  CHECK(gpurent::count_params(*all_moe).total > 770'000'000'000ULL);
  // An explicit moe_layers list wins over the step.
  auto listed = nlohmann::json::parse(text.str());
  listed["text_config"]["moe_layers"] = {3, 7, 11, 15};
  const auto four = parse_model_config(listed.dump(), "listed.json");
  REQUIRE(four);
  CHECK(four->dense_layers == 44);
}
