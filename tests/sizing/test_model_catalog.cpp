// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "common/text.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"

using gpurent::find_model;
using gpurent::model_catalog;

TEST_CASE("model_catalog: at least 45 entries with unique names and ids", "[sizing][model_catalog]")
{
  const auto all = model_catalog();
  CHECK(all.size() >= 45);
  std::set<std::string> keys;
  for (const auto& m : all) {
    INFO(m.name);
    CHECK(keys.insert(gpurent::to_lower(m.name)).second);
    for (const auto& id : m.hf_ids) {
      CHECK(keys.insert(gpurent::to_lower(id)).second);
    }
    for (const auto& a : m.aliases) {
      CHECK(keys.insert(gpurent::to_lower(a)).second);
    }
  }
}

TEST_CASE("model_catalog: every entry is complete and consistent", "[sizing][model_catalog]")
{
  for (const auto& m : model_catalog()) {
    INFO(m.name);
    CHECK(!m.hf_ids.empty());
    CHECK(m.source.starts_with("https://huggingface.co/"));
    CHECK(m.source.ends_with("/config.json"));
    CHECK(m.layers > 0);
    CHECK(m.hidden > 0);
    CHECK(m.heads > 0);
    CHECK(m.kv_heads > 0);
    CHECK(m.heads % m.kv_heads == 0);
    CHECK(m.vocab > 0);
    CHECK(m.max_context >= 4096);
    CHECK(m.global_layers <= m.layers);
    CHECK(!m.dtype.empty());
    if (m.kv_lora_rank == 0) {
      CHECK(m.head_dim > 0);
    }
    if (m.is_moe()) {
      CHECK(m.experts_active > 0);
      CHECK(m.experts_active < m.experts);
      CHECK(m.moe_intermediate > 0);
    }
    if (m.sliding_window == 0) {
      CHECK(m.global_layers == m.layers);
    }
  }
}

TEST_CASE("model_catalog: the derived parameter count matches the published one within 1%", "[sizing][model_catalog]")
{
  // The published counts are the safetensors totals; for dense and MoE models alike the
  // architecture-derived count matches them exactly. Gemma 3 4B/12B/27B include the vision
  // tower through extra_params.
  for (const auto& m : model_catalog()) {
    INFO(m.name);
    const auto b = gpurent::count_params(m);
    const double ratio = static_cast<double>(b.total) / static_cast<double>(m.params);
    CHECK(std::abs(ratio - 1.0) < 0.01);
  }
  CHECK(gpurent::count_params(*find_model("llama-3.1-8b")).total == 8'030'261'248ULL);
  CHECK(gpurent::count_params(*find_model("qwen2.5-7b")).total == 7'615'616'512ULL);
  CHECK(gpurent::count_params(*find_model("gpt-oss-20b")).total == 20'914'757'184ULL);
  CHECK(gpurent::count_params(*find_model("gemma-3-27b")).total == 27'432'406'640ULL);
}

TEST_CASE("model_catalog: covers the models the issue names", "[sizing][model_catalog]")
{
  const char* names[] = {
      "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
      "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b",
      "mistral-7b", "mistral-7b-v0.1", "mistral-small-24b", "mixtral-8x7b", "mixtral-8x22b",
      "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b",
      "qwen2.5-72b", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
      "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b", "deepseek-v2-lite",
      "deepseek-v3", "deepseek-r1", "gemma-2-2b", "gemma-2-9b", "gemma-2-27b", "gemma-3-1b",
      "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "phi-3-mini", "phi-3-medium", "phi-3.5-mini",
      "phi-4",
  };
  for (const char* n : names) {
    INFO(n);
    CHECK(find_model(n).has_value());
  }
}

TEST_CASE("model_catalog: lookup by short name, alias and HF id, ignoring case", "[sizing][model_catalog]")
{
  const auto a = find_model("llama-3.1-8b");
  REQUIRE(a);
  CHECK(a->layers == 32);
  CHECK(a->kv_heads == 8);
  CHECK(a->max_context == 131072);
  CHECK(find_model("meta-llama/Llama-3.1-8B-Instruct")->name == "llama-3.1-8b");
  CHECK(find_model("META-LLAMA/llama-3.1-8b")->name == "llama-3.1-8b");
  CHECK(find_model("  Qwen/Qwen2.5-72B-Instruct ")->name == "qwen2.5-72b");
  CHECK(find_model("https://huggingface.co/openai/gpt-oss-120b")->name == "gpt-oss-120b");
  CHECK(find_model("mistral-7b-v0.3")->name == "mistral-7b");
  CHECK_FALSE(find_model("llama-3.1-9b"));
  CHECK_FALSE(find_model(""));
  CHECK_FALSE(find_model("meta-llama"));
}

TEST_CASE("model_catalog: attention kinds", "[sizing][model_catalog]")
{
  using gpurent::AttentionKind;
  CHECK(find_model("llama-3.1-70b")->attention() == AttentionKind::full);
  CHECK(find_model("deepseek-v3")->attention() == AttentionKind::mla);
  CHECK(find_model("deepseek-v2-lite")->attention() == AttentionKind::mla);
  const auto oss = find_model("gpt-oss-120b");
  CHECK(oss->attention() == AttentionKind::sliding_hybrid);
  CHECK(oss->sliding_window == 128);
  CHECK(oss->global_layers == 18);
  CHECK(oss->mxfp4_experts);
  const auto mistral = find_model("mistral-7b-v0.1");
  CHECK(mistral->sliding_window == 4096);
  CHECK(mistral->attention() == AttentionKind::sliding_hybrid);
  CHECK(find_model("mistral-7b")->attention() == AttentionKind::full);
  const auto g3 = find_model("gemma-3-12b");
  CHECK(g3->sliding_window == 1024);
  CHECK(g3->global_layers == 8);
  CHECK(find_model("gemma-2-9b")->global_layers == 21);
}
