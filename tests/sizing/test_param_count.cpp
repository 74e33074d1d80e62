// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"

using gpurent::count_params;
using gpurent::ModelArch;

namespace {

const gpurent::LinearModule* module_named(const gpurent::ParamBreakdown& b, const std::string& name)
{
  for (const auto& m : b.linears) {
    if (m.name == name) {
      return &m;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("count_params: Llama-2-7B computed by hand", "[sizing][param_count]")
{
  // https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
  ModelArch a;
  a.layers = 32;
  a.hidden = 4096;
  a.heads = 32;
  a.kv_heads = 32;
  a.head_dim = 128;
  a.intermediate = 11008;
  a.vocab = 32000;
  const auto b = count_params(a);
  CHECK(b.embedding == 32000ULL * 4096);
  CHECK(b.lm_head == 32000ULL * 4096);
  CHECK(b.attention == 32ULL * 4 * 4096 * 4096);
  CHECK(b.mlp_dense == 32ULL * 3 * 4096 * 11008);
  CHECK(b.norms == (2ULL * 32 + 1) * 4096);
  CHECK(b.experts == 0);
  CHECK(b.router == 0);
  // 6,738,415,616 is the published size of Llama-2-7b-hf.
  CHECK(b.total == 6'738'415'616ULL);
  CHECK(b.active == b.total);
  CHECK(b.linear_weights == b.attention + b.mlp_dense);
  CHECK(b.per_layer_linear == b.linear_weights / 32);
  REQUIRE(module_named(b, "q_proj") != nullptr);
  CHECK(module_named(b, "q_proj")->count == 32);
  CHECK(module_named(b, "down_proj")->in_features == 11008);
  CHECK(module_named(b, "down_proj")->out_features == 4096);
}

TEST_CASE("count_params: tied embeddings drop the lm_head", "[sizing][param_count]")
{
  ModelArch a = *gpurent::find_model("llama-3.2-1b");
  const auto tied = count_params(a);
  a.tied_embeddings = false;
  const auto untied = count_params(a);
  CHECK(tied.lm_head == 0);
  CHECK(untied.total - tied.total == 128256ULL * 2048);
}

TEST_CASE("count_params: MoE counts every expert but only the active ones per token", "[sizing][param_count]")
{
  const auto m = *gpurent::find_model("mixtral-8x7b");
  const auto b = count_params(m);
  CHECK(b.experts == 32ULL * 8 * 3 * 4096 * 14336);
  CHECK(b.router == 32ULL * 8 * 4096);
  CHECK(b.mlp_dense == 0);
  CHECK(b.active == b.total - b.experts + b.experts / 4);  // 2 of 8 experts: ~12.9B
  const auto* w1 = module_named(b, "experts.gate_proj");
  REQUIRE(w1 != nullptr);
  CHECK(w1->expert);
  CHECK(w1->count == 32ULL * 8);
}

TEST_CASE("count_params: DeepSeek MLA, shared experts and dense first layers", "[sizing][param_count]")
{
  const auto v3 = count_params(*gpurent::find_model("deepseek-v3"));
  REQUIRE(module_named(v3, "q_a_proj") != nullptr);
  CHECK(module_named(v3, "q_a_proj")->out_features == 1536);
  CHECK(module_named(v3, "kv_a_proj_with_mqa")->out_features == 512 + 64);
  CHECK(module_named(v3, "kv_b_proj")->out_features == 128ULL * (128 + 128));
  CHECK(module_named(v3, "o_proj")->in_features == 128ULL * 128);
  CHECK(module_named(v3, "gate_proj")->count == 3);          // first_k_dense_replace
  CHECK(module_named(v3, "experts.up_proj")->count == 58ULL * 256);
  CHECK(v3.shared_experts == 58ULL * 3 * 7168 * 2048);
  // About 37B active per token (DeepSeek-V3 technical report).
  CHECK(v3.active > 36'000'000'000ULL);
  CHECK(v3.active < 38'500'000'000ULL);
  const auto lite = count_params(*gpurent::find_model("deepseek-v2-lite"));
  CHECK(module_named(lite, "q_a_proj") == nullptr);  // no q LoRA in V2-Lite
  CHECK(module_named(lite, "q_proj")->out_features == 16ULL * 192);
}

TEST_CASE("count_params: a zero architecture gives zeros, never divides by zero", "[sizing][param_count]")
{
  ModelArch a;
  a.experts = 4;
  a.norms_per_layer = 0;
  const auto b = count_params(a);
  CHECK(b.total == 0);
  CHECK(b.per_layer_linear == 0);
  CHECK(b.linears.empty());
}
