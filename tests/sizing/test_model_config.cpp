// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "sizing/model_catalog.hpp"
#include "sizing/model_config.hpp"
#include "sizing/param_count.hpp"

using gpurent::Errc;
using gpurent::parse_model_config;

namespace {

std::string read_fixture(const std::string& name)
{
  std::ifstream in(std::filesystem::path(GPURENT_TEST_DATA) / "models" / name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The parsed config must have the architecture of the catalogue entry.
void check_same_arch(const gpurent::ModelArch& got, const std::string& catalogue_name)
{
  const auto want = gpurent::find_model(catalogue_name);
  REQUIRE(want);
  INFO(catalogue_name);
  CHECK(got.layers == want->layers);
  CHECK(got.hidden == want->hidden);
  CHECK(got.heads == want->heads);
  CHECK(got.kv_heads == want->kv_heads);
  if (want->kv_lora_rank == 0) {
    CHECK(got.head_dim == want->head_dim);
  }
  CHECK(got.intermediate == want->intermediate);
  CHECK(got.vocab == want->vocab);
  CHECK(got.tied_embeddings == want->tied_embeddings);
  CHECK(got.max_context == want->max_context);
  CHECK(got.experts == want->experts);
  CHECK(got.experts_active == want->experts_active);
  CHECK(got.moe_intermediate == want->moe_intermediate);
  CHECK(got.shared_experts == want->shared_experts);
  CHECK(got.dense_layers == want->dense_layers);
  CHECK(got.sliding_window == want->sliding_window);
  CHECK(got.global_layers == want->global_layers);
  CHECK(got.kv_lora_rank == want->kv_lora_rank);
  CHECK(got.q_lora_rank == want->q_lora_rank);
  CHECK(got.qkv_bias == want->qkv_bias);
  CHECK(got.qk_norm == want->qk_norm);
  CHECK(got.norms_per_layer == want->norms_per_layer);
  CHECK(got.mxfp4_experts == want->mxfp4_experts);
  // Derived from the architecture: exact, except where the catalogue adds a vision tower.
  CHECK(got.params + want->extra_params == want->params);
}

}  // namespace

TEST_CASE("parse_model_config: real configs give the catalogue's architecture", "[sizing][model_config]")
{
  const std::pair<const char*, const char*> cases[] = {
      {"llama-3.1-8b.json", "llama-3.1-8b"},     {"mistral-7b-v0.1.json", "mistral-7b-v0.1"},
      {"mixtral-8x7b.json", "mixtral-8x7b"},     {"qwen2.5-7b.json", "qwen2.5-7b"},
      {"qwen3-30b-a3b.json", "qwen3-30b-a3b"},   {"gemma-2-9b.json", "gemma-2-9b"},
      {"gemma-3-1b.json", "gemma-3-1b"},         {"gemma-3-4b-it.json", "gemma-3-4b"},
      {"phi-3-mini-4k.json", "phi-3-mini"},      {"deepseek-v2-lite.json", "deepseek-v2-lite"},
      {"deepseek-v3.json", "deepseek-v3"},       {"gpt-oss-20b.json", "gpt-oss-20b"},
      {"qwen3-30b-a3b-fp8.json", "qwen3-30b-a3b"},
  };
  for (const auto& [file, name] : cases) {
    INFO(file);
    const auto m = parse_model_config(read_fixture(file), file);
    REQUIRE(m);
    CHECK(m->source == file);
    check_same_arch(*m, name);
  }
}

TEST_CASE("parse_model_config: family details", "[sizing][model_config]")
{
  const auto oss = parse_model_config(read_fixture("gpt-oss-20b.json"), "x");
  REQUIRE(oss);
  CHECK(oss->family == "gpt_oss");
  CHECK(oss->attention_sinks);
  CHECK(oss->attention() == gpurent::AttentionKind::sliding_hybrid);
  const auto v3 = parse_model_config(read_fixture("deepseek-v3.json"), "x");
  REQUIRE(v3);
  CHECK(v3->attention() == gpurent::AttentionKind::mla);
  CHECK(v3->qk_rope_head_dim == 64);
  CHECK(v3->router_bias);
  const auto g3 = parse_model_config(read_fixture("gemma-3-4b-it.json"), "x");
  REQUIRE(g3);
  CHECK(g3->family == "gemma3_text");
  CHECK(g3->dtype == "bfloat16");
  // Phi-2: plain fc1/fc2 MLP, LayerNorm with bias; 2,779,683,840 published (lm_head bias of
  // 51,200 not modelled).
  const auto phi2 = parse_model_config(read_fixture("phi-2.json"), "x");
  REQUIRE(phi2);
  CHECK_FALSE(phi2->gated_mlp);
  CHECK(phi2->params == 2'779'683'840ULL - 51'200);
  REQUIRE(phi2->hf_ids.size() == 1);
  CHECK(phi2->hf_ids[0] == "microsoft/phi-2");
  const auto phi3 = parse_model_config(read_fixture("phi-3-mini-4k.json"), "x");
  REQUIRE(phi3);
  CHECK(phi3->hf_ids.empty());  // "_name_or_path" without an org is not an id
}

TEST_CASE("parse_model_config: bad input is one invalid_input error naming the key", "[sizing][model_config]")
{
  const std::pair<const char*, const char*> cases[] = {
      {"bad/truncated.json", "not valid JSON"},
      {"bad/array.json", "not a JSON object"},
      {"bad/empty.json", "not valid JSON"},
      {"bad/missing-context.json", "\"max_position_embeddings\" is missing"},
      {"bad/negative-layers.json", "\"num_hidden_layers\" is negative"},
      {"bad/absurd-hidden.json", "\"hidden_size\" is absurdly large"},
      {"bad/string-layers.json", "\"num_hidden_layers\" must be a number"},
      {"bad/bad-kv-heads.json", "\"num_key_value_heads\" must divide"},
      {"bad/zero-layers.json", "\"num_hidden_layers\" must be at least 1"},
  };
  for (const auto& [file, why] : cases) {
    INFO(file);
    const auto m = parse_model_config(read_fixture(file), file);
    REQUIRE_FALSE(m);
    CHECK(m.error().code == Errc::invalid_input);
    CHECK_THAT(m.error().message, Catch::Contains(why));
    CHECK_THAT(m.error().message, Catch::Contains(file));
    CHECK(m.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("parse_model_config: limits and odd values", "[sizing][model_config]")
{
  const std::string base = R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,"num_attention_heads":4,)"
                           R"("intermediate_size":128,"vocab_size":100,"max_position_embeddings":256)";
  CHECK(parse_model_config(base + "}", "t"));
  CHECK(parse_model_config(base + R"(,"num_hidden_layers":2.0})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"num_hidden_layers":2.5})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"num_hidden_layers":1001})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"vocab_size":10000001})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"num_hidden_layers":1e300})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"num_hidden_layers":true})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"tie_word_embeddings":"yes"})", "t"));
  CHECK_FALSE(parse_model_config(base + R"(,"num_attention_heads":128})", "t"));  // head_dim 0
  CHECK_FALSE(parse_model_config(base + R"(,"text_config":[1]})", "t"));
  CHECK_FALSE(parse_model_config(R"({"model_type":7})", "t"));
  // Every size within its own bound, yet 10^17 parameters together.
  const auto monster = parse_model_config(
      R"({"model_type":"mixtral","num_hidden_layers":1000,"hidden_size":1000000,"num_attention_heads":1000,)"
      R"("intermediate_size":10000000,"vocab_size":100,"max_position_embeddings":256,"num_local_experts":100,)"
      R"("num_experts_per_tok":2})",
      "t");
  REQUIRE_FALSE(monster);
  CHECK_THAT(monster.error().message, Catch::Contains("100 trillion"));
  const auto tied = parse_model_config(base + R"(,"tie_word_embeddings":true})", "t");
  REQUIRE(tied);
  CHECK(tied->tied_embeddings);
  // Over 16 MiB is refused before parsing.
  const std::string huge(gpurent::k_max_model_config_bytes + 1, ' ');
  const auto big = parse_model_config(huge, "huge.json");
  REQUIRE_FALSE(big);
  CHECK(big.error().code == Errc::invalid_input);
  CHECK_THAT(big.error().message, Catch::Contains("16 MiB"));
  // Deep nesting does not overflow the stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_FALSE(parse_model_config(deep, "deep.json"));
}

TEST_CASE("parse_model_config: mutated and truncated configs never crash", "[sizing][model_config][property]")
{
  const char* files[] = {"llama-3.1-8b.json", "deepseek-v3.json", "gemma-3-4b-it.json", "gpt-oss-20b.json",
                         "qwen3-30b-a3b.json", "mixtral-8x7b.json", "qwen3-30b-a3b-fp8.json"};
  std::mt19937_64 rng(20261130);
  const std::string alphabet = "{}[]:,\"-0123456789.eE truefalsnl\\/x";
  int parsed = 0;
  int rejected = 0;
  for (const char* f : files) {
    const std::string original = read_fixture(f);
    for (int i = 0; i < 300; ++i) {
      std::string s = original;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !s.empty(); ++e) {
        const std::size_t pos = rng() % s.size();
        switch (rng() % 4) {
        case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(pos, 1 + rng() % 8); break;
        case 2: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        default: s.resize(pos); break;  // truncation
        }
      }
      const auto m = parse_model_config(s, "mutated");
      if (m) {
        ++parsed;
        CHECK(m->layers >= 1);
        CHECK(m->layers <= 1000);
        CHECK(m->hidden >= 1);
        CHECK(m->params > 0);
        CHECK(gpurent::count_params(*m).total == m->params);
        // A block is both sides or neither, each within the widths a config may give.
        CHECK((m->quant_block_n == 0) == (m->quant_block_k == 0));
        CHECK(m->quant_block_n <= 10'000'000);
        CHECK(m->quant_block_k <= 10'000'000);
      } else {
        ++rejected;
        CHECK(m.error().code == Errc::invalid_input);
        CHECK_FALSE(m.error().message.empty());
      }
    }
  }
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}

TEST_CASE("dtype_bytes: known dtypes", "[sizing][model_config]")
{
  CHECK(gpurent::dtype_bytes("bfloat16") == 2);
  CHECK(gpurent::dtype_bytes("float32") == 4);
  CHECK(gpurent::dtype_bytes("float8_e4m3fn") == 1);
  CHECK(gpurent::dtype_bytes("complex") == 0);
}
