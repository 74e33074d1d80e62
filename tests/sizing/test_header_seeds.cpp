// SPDX-License-Identifier: MIT
// The fuzz seeds of fuzz/fuzz_safetensors_header.cpp and fuzz/fuzz_gguf_header.cpp are headers of
// the real layouts the tests build (tests/data/headers/, one mode byte first: see the targets).
// This test keeps them equal to what the builders write, and valid; GPURENT_WRITE_SEEDS=1
// rewrites them.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sizing/gguf_header.hpp"
#include "sizing/safetensors_header.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"

namespace t = gpurent::test;

namespace {

// The first tensors of a layout: real names, dtypes and shapes, a header under 64 KiB.
std::vector<t::StTensor> head(const std::vector<t::StTensor>& ts, std::size_t n)
{
  return {ts.begin(), ts.begin() + static_cast<std::ptrdiff_t>(std::min(n, ts.size()))};
}

std::vector<std::pair<std::string, std::string>> seeds()
{
  std::vector<std::pair<std::string, std::string>> out;
  const std::pair<const char*, t::Layout> st[] = {
      {"gptq-llama", t::llama31_8b_gptq_int4()}, {"awq-qwen", t::qwen25_7b_awq()},
      {"fp8-qwen3", t::qwen3_8b_fp8()},          {"mxfp4-gpt-oss", t::gpt_oss_20b()},
      {"bnb-nf4-llama", t::llama3_8b_bnb_nf4()}, {"vision-mistral3", t::mistral_small_31_vision()},
  };
  for (const auto& [name, layout] : st) {
    out.emplace_back(std::string(name) + ".safetensors.seed", std::string(1, '\0') + t::safetensors_header(head(layout.tensors, 60)));
  }
  out.emplace_back("q4_k_m-llama.gguf.seed", std::string(1, '\0') + t::gguf_serialize(t::llama31_8b_q4_k_m(false)));
  auto mixtral = t::mixtral_8x7b_q4_k_m();
  mixtral.tensors.resize(40);
  mixtral.data_bytes = 0;
  for (const auto& x : mixtral.tensors) {
    mixtral.data_bytes += (x.bytes + 31) / 32 * 32;
  }
  out.emplace_back("q4_k_m-mixtral.gguf.seed", std::string(1, '\x02') + t::gguf_serialize(mixtral));
  const auto tokens = t::gguf_header(t::llama_gguf_metadata(t::k_llama31_8b, 0, 300, "tiny tokenizer"),
                                     {{"token_embd.weight", "Q8_0", {4096, 300}}});
  out.emplace_back("tokenizer.gguf.seed", std::string(1, '\x03') + t::gguf_serialize(tokens));
  return out;
}

}  // namespace

TEST_CASE("header seeds: the fuzz corpus is what the builders write, and parses", "[sizing][seeds]")
{
  const std::filesystem::path dir = std::filesystem::path(GPURENT_TEST_DATA) / "headers";
  const bool write = std::getenv("GPURENT_WRITE_SEEDS") != nullptr;
  for (const auto& [name, bytes] : seeds()) {
    INFO(name);
    CHECK(bytes.size() < 64 * 1024);  // scripts/fuzz.sh takes files under 64 KiB
    if (write) {
      std::filesystem::create_directories(dir);
      std::ofstream(dir / name, std::ios::binary) << bytes;
    }
    std::ifstream in(dir / name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == bytes);
    const std::string_view body = std::string_view(bytes).substr(1);
    if (name.find(".safetensors") != std::string::npos) {
      CHECK(gpurent::parse_safetensors_prefix(body, std::nullopt));
    } else {
      const auto p = gpurent::parse_gguf_header(body, std::nullopt);
      REQUIRE(p);
      CHECK(p->header);
    }
  }
}
