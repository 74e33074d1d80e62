// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sizing/gguf_header.hpp"
#include "tests/fakes/checkpoint_builder.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"

using gpurent::Errc;
using gpurent::GgufHeader;
using gpurent::GgufType;
using gpurent::GgufValue;
using gpurent::parse_gguf_header;
namespace t = gpurent::test;

namespace {

gpurent::GgufHeader parse_whole(const std::string& bytes, std::optional<std::uint64_t> size = std::nullopt)
{
  const auto p = parse_gguf_header(bytes, size);
  REQUIRE(p);
  REQUIRE(p->header);
  return *p->header;
}

std::string u32le(std::uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string u64le(std::uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

TEST_CASE("ggml types: the whole table, removed types refused with the reason", "[sizing][gguf]")
{
  // ggml-common.h: {block, bytes} per type id; 0 = removed.
  const std::pair<std::uint32_t, std::uint32_t> expected[gpurent::k_ggml_type_count] = {
      {1, 4},    {1, 2},    {32, 18},  {32, 20},  {0, 0},    {0, 0},    {32, 22},  {32, 24},  {32, 34},
      {32, 36},  {256, 84}, {256, 110}, {256, 144}, {256, 176}, {256, 210}, {256, 292}, {256, 66}, {256, 74},
      {256, 98}, {256, 50}, {32, 18},  {256, 110}, {256, 82}, {256, 136}, {1, 1},    {1, 2},    {1, 4},
      {1, 8},    {1, 8},    {256, 56}, {1, 2},    {0, 0},    {0, 0},    {0, 0},    {256, 54}, {256, 66},
      {0, 0},    {0, 0},    {0, 0},    {32, 17},  {64, 36},  {128, 18}, {64, 18}};
  for (std::uint32_t id = 0; id < gpurent::k_ggml_type_count; ++id) {
    INFO(id);
    const auto type = gpurent::ggml_type(id);
    REQUIRE(type);
    CHECK(type->id == id);
    CHECK_FALSE(type->name.empty());
    CHECK(type->block == expected[id].first);
    CHECK(type->bytes == expected[id].second);
    CHECK((type->block == 0) == !type->removed.empty());
    CHECK(gpurent::ggml_type_by_name(type->name)->id == id);
  }
  CHECK_FALSE(gpurent::ggml_type(gpurent::k_ggml_type_count));
  const auto q4k = gpurent::ggml_tensor_bytes(12, {4096, 14336});
  REQUIRE(q4k);
  CHECK(*q4k == 4096ULL * 14336 / 256 * 144);
  const auto removed = gpurent::ggml_tensor_bytes(31, {4096, 4096});
  REQUIRE_FALSE(removed);
  CHECK_THAT(removed.error().message, Catch::Contains("Q4_0_4_4") && Catch::Contains("Q4_0"));
  const auto newer = gpurent::ggml_tensor_bytes(99, {32});
  REQUIRE_FALSE(newer);
  CHECK_THAT(newer.error().message, Catch::Contains("newer"));
  const auto ragged = gpurent::ggml_tensor_bytes(12, {100, 4});
  REQUIRE_FALSE(ragged);
  CHECK_THAT(ragged.error().message, Catch::Contains("multiple of Q4_K's block of 256"));
}

TEST_CASE("GGUF header: Llama-3.1-8B Q4_K_M, exact bytes per tensor", "[sizing][gguf]")
{
  const GgufHeader built = t::llama31_8b_q4_k_m(false);
  const std::string bytes = t::gguf_serialize(built);
  const std::uint64_t file_size = built.data_offset + built.tensors.back().offset + built.tensors.back().bytes;
  const GgufHeader h = parse_whole(bytes, file_size);
  CHECK(h == built);
  CHECK(h.version == 3);
  CHECK(h.alignment == 32);
  CHECK(h.data_offset == bytes.size());
  std::uint64_t sum = 0;
  std::uint64_t weights = 0;
  for (const auto& x : h.tensors) {
    sum += x.bytes;
    weights += t::elements(x.dims);
  }
  // Independent of gpurent: the sum of llama.cpp's Q4_K_M choices for this model, and the bits per
  // weight of llama.cpp's quantize README (4.8944 for Llama-3.1-8B).
  CHECK(sum == t::k_llama31_8b_q4_k_m_bytes);
  CHECK(weights == t::k_llama31_8b_params + 64);  // + rope_freqs
  CHECK(static_cast<double>(sum) * 8 / static_cast<double>(t::k_llama31_8b_params) == Approx(4.8944).epsilon(0.0001));
  CHECK(h.find("general.architecture")->as_string() == "llama");
  CHECK(h.find("llama.block_count")->as_u64() == 32);
  CHECK(h.find("llama.rope.freq_base")->as_f64() == Approx(500000.0));
  // A tensor past the end of the file is refused.
  CHECK_FALSE(parse_gguf_header(bytes, file_size - 1));
}

TEST_CASE("GGUF header: a short buffer asks for more, and the parse completes", "[sizing][gguf]")
{
  const std::string bytes = t::gguf_serialize(t::llama31_8b_q4_k_m(true));  // the 128,256-token vocabulary
  REQUIRE(bytes.size() > 1'000'000);
  std::string have = bytes.substr(0, 4096);
  int rounds = 0;
  for (;;) {
    gpurent::GgufParseOptions o;
    o.keep_string_arrays = false;
    const auto p = parse_gguf_header(have, std::nullopt, o);
    REQUIRE(p);
    if (p->header) {
      const auto* tokens = p->header->find("tokenizer.ggml.tokens");
      REQUIRE(tokens);
      CHECK(tokens->count == 128256);
      CHECK(tokens->strings.empty());  // counted, not kept
      CHECK(p->header->tensors.size() == t::llama31_8b_q4_k_m(false).tensors.size());
      break;
    }
    REQUIRE(p->need > have.size());
    have = bytes.substr(0, std::max<std::size_t>(p->need, have.size() * 2));
    REQUIRE(++rounds < 20);
  }
  CHECK(rounds >= 2);
}

TEST_CASE("GGUF header: hostile input is one invalid_input error", "[sizing][gguf]")
{
  const std::string head = "GGUF" + u32le(3);
  const auto kv_header = [&](std::uint64_t tensors, std::uint64_t kvs) { return head + u64le(tensors) + u64le(kvs); };
  const std::pair<std::string, std::string> cases[] = {
      {"GGML" + u32le(3) + u64le(0) + u64le(0), "does not start with"},
      {"GGUF" + u32le(1) + u64le(0) + u64le(0), "version 1"},
      {"GGUF" + u32le(4) + u64le(0) + u64le(0), "version 4"},
      {"GGUF" + u32le(0x03000000) + u64le(0) + u64le(0), "big-endian"},
      {kv_header(1ULL << 60, 0), "more than a header can hold"},
      {kv_header(0, 1) + u64le(1ULL << 40), "over the limit"},
      {kv_header(0, 1) + u64le(0), "is empty"},
      {kv_header(0, 1) + u64le(1) + "k" + u32le(13), "unknown value type"},
      {kv_header(0, 1) + u64le(1) + "k" + u32le(9) + u32le(9) + u64le(1), "array of arrays"},
      {kv_header(0, 1) + u64le(1) + "k" + u32le(9) + u32le(8) + u64le(1ULL << 62), "strings"},
      {kv_header(0, 1) + u64le(1) + "k" + u32le(9) + u32le(4) + u64le(1ULL << 62), "elements"},
      {kv_header(0, 1) + u64le(1) + "k" + u32le(7) + "\x02", "neither 0 nor 1"},
      {kv_header(0, 2) + u64le(1) + "k" + u32le(4) + u32le(1) + u64le(1) + "k" + u32le(4) + u32le(1), "appears twice"},
      {kv_header(0, 1) + u64le(17) + "general.alignment" + u32le(4) + u32le(48), "not a power of 2"},
      {kv_header(0, 1) + u64le(17) + "general.alignment" + u32le(10) + u64le(32), "must be a u32"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(5), "more than ggml's 4"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(1) + u64le(1ULL << 63), "negative dimension"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(1) + u64le(100) + u32le(12) + u64le(0), "multiple of Q4_K"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(1) + u64le(256) + u32le(33) + u64le(0), "Q4_0_8_8"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(1) + u64le(256) + u32le(77) + u64le(0), "newer"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(1) + u64le(256) + u32le(0) + u64le(32), "expected 0"},
      {kv_header(1, 0) + u64le(64) + std::string(64, 'n') + u32le(1) + u64le(1) + u32le(0) + u64le(0), "over the limit"},
      {kv_header(2, 0) + u64le(1) + "t" + u32le(1) + u64le(8) + u32le(0) + u64le(0) + u64le(1) + "t" + u32le(1) +
           u64le(8) + u32le(0) + u64le(32),
       "appears twice"},
      {kv_header(1, 0) + u64le(1) + "t" + u32le(4) + u64le(1ULL << 40) + u64le(1ULL << 40) + u64le(1) + u64le(1) +
           u32le(0) + u64le(0),
       "overflows"},
  };
  for (const auto& [bytes, why] : cases) {
    INFO(why);
    const auto p = parse_gguf_header(bytes, std::nullopt);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == Errc::invalid_input);
    CHECK_THAT(p.error().message, Catch::Contains(why));
  }
  // Lengths are checked against a known file size before anything is allocated.
  const auto big = parse_gguf_header(kv_header(0, 1) + u64le(1000) + "k", std::uint64_t{64});
  REQUIRE_FALSE(big);
  CHECK_THAT(big.error().message, Catch::Contains("past the end of the 64-byte file"));
  // A truncated buffer is not an error: it needs more.
  const auto shorter = parse_gguf_header(kv_header(0, 1) + u64le(4) + "ke", std::nullopt);
  REQUIRE(shorter);
  CHECK_FALSE(shorter->header);
  CHECK(shorter->need >= 33);
}

TEST_CASE("GGUF header: parse(serialize(x)) == x for random headers of every value type", "[sizing][gguf][property]")
{
  std::mt19937_64 rng(42);
  const std::vector<std::string> types{"F32", "F16", "BF16", "Q4_0", "Q8_0", "Q2_K", "Q4_K", "Q6_K", "IQ4_XS", "MXFP4",
                                       "IQ2_XXS", "TQ1_0"};
  for (int round = 0; round < 200; ++round) {
    std::vector<gpurent::GgufKv> kv;
    const int n_kv = static_cast<int>(rng() % 12);
    for (int i = 0; i < n_kv; ++i) {
      GgufValue v;
      v.type = static_cast<GgufType>(rng() % 13);
      if (v.type == GgufType::array) {
        v.type = GgufType::string;
      }
      v.is_array = rng() % 2 == 0;
      v.count = v.is_array ? rng() % 6 : 1;
      if (v.type == GgufType::string) {
        for (std::uint64_t k = 0; k < v.count; ++k) {
          std::string s(rng() % 9, '\0');
          for (auto& c : s) {
            c = static_cast<char>(rng() % 256);
          }
          v.strings.push_back(s);
        }
      } else {
        v.raw.resize(v.count * gpurent::gguf_type_size(v.type));
        for (auto& c : v.raw) {
          c = static_cast<char>(v.type == GgufType::boolean ? rng() % 2 : rng() % 256);
        }
      }
      kv.push_back({"key." + std::to_string(i), std::move(v)});
    }
    std::uint32_t alignment = 32;
    if (rng() % 3 == 0) {
      alignment = 1U << (rng() % 8);
      kv.push_back({"general.alignment", t::gv_u32(alignment)});
    }
    std::vector<t::GgTensor> ts;
    const int n_t = static_cast<int>(rng() % 10);
    for (int i = 0; i < n_t; ++i) {
      const std::string type = types[rng() % types.size()];
      const std::uint64_t block = t::ggml_block(type).first;
      std::vector<std::uint64_t> dims{block * (1 + rng() % 4)};
      const std::size_t rank = rng() % 4;
      for (std::size_t d = 0; d < rank; ++d) {
        dims.push_back(rng() % 5);
      }
      ts.push_back({"blk." + std::to_string(i) + ".w", type, dims});
    }
    GgufHeader h = t::gguf_header(kv, ts, alignment);
    h.version = rng() % 2 ? 2 : 3;
    h.data_offset = t::gguf_serialize(h).size();
    const auto p = parse_gguf_header(t::gguf_serialize(h), std::nullopt);
    REQUIRE(p);
    REQUIRE(p->header);
    CHECK(*p->header == h);
  }
}

TEST_CASE("GGUF header: mutated real headers never crash", "[sizing][gguf][property]")
{
  const std::string valid = t::gguf_serialize(t::mixtral_8x7b_q4_k_m());
  std::mt19937_64 rng(9);
  for (int round = 0; round < 400; ++round) {
    std::string b = valid.substr(0, 4 + rng() % valid.size());
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      b[rng() % b.size()] = static_cast<char>(rng() % 256);
    }
    const auto p = parse_gguf_header(b, rng() % 2 ? std::optional<std::uint64_t>(b.size()) : std::nullopt);
    if (!p) {
      CHECK(p.error().code == Errc::invalid_input);
    } else if (p->header) {
      std::uint64_t at = 0;  // whatever was accepted is laid out as ggml requires
      for (const auto& x : p->header->tensors) {
        CHECK(x.offset == at);
        at += (x.bytes + p->header->alignment - 1) / p->header->alignment * p->header->alignment;
      }
    } else {
      CHECK(p->need > b.size());
    }
  }
}
