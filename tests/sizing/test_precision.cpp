// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "common/text.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;

namespace {

template <class E, class Parse>
void check_round_trip(std::span<const E> all, Parse parse)
{
  for (E v : all) {
    const std::string name{to_string(v)};
    INFO(name);
    const auto back = parse(name);
    REQUIRE(back.has_value());
    CHECK(*back == v);
    // Case-insensitive, surrounding spaces ignored.
    const auto upper = parse("  " + to_lower(name) + " ");
    REQUIRE(upper.has_value());
    CHECK(*upper == v);
  }
}

}  // namespace

TEST_CASE("Precision: every value's name parses back to it", "[sizing][precision]")
{
  check_round_trip(all_tasks(), [](const std::string& s) { return parse_task(s); });
  check_round_trip(all_engines(), [](const std::string& s) { return parse_engine(s); });
  check_round_trip(all_weight_formats(), [](const std::string& s) { return parse_weight_format(s); });
  check_round_trip(all_kv_dtypes(), [](const std::string& s) { return parse_kv_dtype(s); });
  check_round_trip(all_shards(), [](const std::string& s) { return parse_shard(s); });
  check_round_trip(all_optimizers(), [](const std::string& s) { return parse_optimizer(s); });
  CHECK(all_weight_formats().size() == 30);
}

TEST_CASE("Precision: the spellings of cli.md and common aliases", "[sizing][precision]")
{
  CHECK(parse_weight_format("Q4_K_M").value() == WeightFormat::gguf_q4_k_m);
  CHECK(parse_weight_format("q4-k-m").value() == WeightFormat::gguf_q4_k_m);
  CHECK(parse_weight_format("IQ4_XS").value() == WeightFormat::gguf_iq4_xs);
  CHECK(parse_weight_format("F16").value() == WeightFormat::gguf_f16);
  CHECK(parse_weight_format("fp16").value() == WeightFormat::fp16);
  CHECK(parse_weight_format("bfloat16").value() == WeightFormat::bf16);
  CHECK(parse_engine("llama.cpp").value() == Engine::llama_cpp);
  CHECK(parse_engine("llamacpp").value() == Engine::llama_cpp);
  CHECK(parse_engine("LLAMA-CPP").value() == Engine::llama_cpp);
  CHECK(parse_kv_dtype("q8_0").value() == KvDtype::q8_0);
  CHECK(parse_kv_dtype("f16").value() == KvDtype::fp16);
  CHECK(parse_optimizer("adamw-8bit").value() == Optimizer::adamw_8bit);
  CHECK(parse_optimizer("paged_adamw_8bit").value() == Optimizer::adamw_8bit);
  CHECK(parse_shard("ZeRO3").value() == Shard::zero3);
  CHECK(to_string(Engine::llama_cpp) == "llama.cpp");
  CHECK(to_string(WeightFormat::gguf_q4_k_m) == "Q4_K_M");
  CHECK(to_string(Optimizer::adamw_8bit) == "adamw-8bit");
}

TEST_CASE("Precision: an unknown value is a usage error listing the valid ones", "[sizing][precision]")
{
  const auto w = parse_weight_format("int3");
  REQUIRE_FALSE(w.has_value());
  CHECK(w.error().code == Errc::usage);
  CHECK(w.error().message.find("'int3'") != std::string::npos);
  CHECK(w.error().message.find("Q4_K_M") != std::string::npos);
  CHECK(w.error().message.find("; use one of") != std::string::npos);
  const auto e = parse_engine("");
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().message.find("vllm") != std::string::npos);
  CHECK_FALSE(parse_task("training").has_value());
  CHECK_FALSE(parse_kv_dtype("int8").has_value());
}

TEST_CASE("Precision: random strings never crash and never parse to a value with another name", "[sizing][precision]")
{
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> len(0, 24);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::string alphabet = "qQkKmMsSlL_-.0123456789fFbBpPiInNtTaAwWgGxXzZeErRoOdD ";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 5000; ++i) {
    std::string s;
    const int n = len(rng);
    for (int k = 0; k < n; ++k) {
      s.push_back(i % 2 == 0 ? static_cast<char>(byte(rng)) : alphabet[pick(rng)]);
    }
    const auto check = [&](auto r) {
      if (r.has_value()) {
        // Whatever parsed names a real value whose canonical name parses to the same value.
        CHECK(to_string(*r) != "unknown");
      } else {
        CHECK(r.error().code == Errc::usage);
        CHECK_FALSE(r.error().message.empty());
        // The echoed input is printable.
        const auto& msg = r.error().message;
        CHECK(std::all_of(msg.begin(), msg.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20; }));
      }
    };
    check(parse_weight_format(s));
    check(parse_kv_dtype(s));
    check(parse_engine(s));
    check(parse_task(s));
    check(parse_shard(s));
    check(parse_optimizer(s));
  }
}

TEST_CASE("Precision: bits per weight of each format", "[sizing][precision]")
{
  CHECK(weight_bits(WeightFormat::gguf_q4_k_m, Engine::llama_cpp).linear == 48944);
  CHECK(weight_bits(WeightFormat::gguf_q4_k_m, Engine::llama_cpp).whole_file);
  CHECK(weight_bits(WeightFormat::gguf_q4_0, Engine::llama_cpp).linear == 45000);  // 18 B / 32
  CHECK(weight_bits(WeightFormat::gguf_q8_0, Engine::llama_cpp).linear == 85008);
  CHECK(weight_bits(WeightFormat::nf4, Engine::transformers).linear == 45000);
  CHECK(weight_bits(WeightFormat::nf4, Engine::torchtune).linear == 41270);
  CHECK(weight_bits(WeightFormat::nf4, Engine::transformers).embedding == 160000);
  CHECK(weight_bits(WeightFormat::fp8, Engine::vllm).embedding == 160000);
  CHECK(weight_bits(WeightFormat::mxfp4, Engine::vllm).experts == 42500);
  CHECK(weight_bits(WeightFormat::mxfp4, Engine::vllm).linear == 160000);
  CHECK(kv_bytes_per_32(KvDtype::q8_0) == 34);
  CHECK(kv_bytes_per_32(KvDtype::q4_0) == 18);
  // GGUF types are listed from the largest to the smallest.
  std::uint32_t prev = 1000000;
  for (WeightFormat f : gguf_by_size()) {
    const std::uint32_t b = weight_bits(f, Engine::llama_cpp).linear;
    CHECK(b <= prev);
    prev = b;
    CHECK(is_gguf(f));
  }
  JobSpec j;
  CHECK(resolve_kv_dtype(j) == KvDtype::bf16);
  j.engine = Engine::llama_cpp;
  CHECK(resolve_kv_dtype(j) == KvDtype::fp16);
  j.weights = WeightFormat::fp32;
  CHECK(resolve_kv_dtype(j) == KvDtype::fp32);
  j.kv_cache = KvDtype::q4_0;
  CHECK(resolve_kv_dtype(j) == KvDtype::q4_0);
}
