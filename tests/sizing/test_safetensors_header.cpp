// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "sizing/safetensors_header.hpp"
#include "tests/fakes/checkpoint_builder.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"

using gpurent::Errc;
using gpurent::parse_safetensors_header;
using gpurent::parse_safetensors_prefix;
using gpurent::safetensors_header_length;
namespace t = gpurent::test;

namespace {

std::string le64(std::uint64_t n)
{
  std::string s(8, '\0');
  for (auto& c : s) {
    c = static_cast<char>(n & 0xff);
    n >>= 8;
  }
  return s;
}

// A header whose JSON is `json`, for the hostile cases.
std::string with_json(const std::string& json) { return le64(json.size()) + json; }

}  // namespace

TEST_CASE("safetensors header: a real layout parses to its tensors, sizes exact", "[sizing][safetensors]")
{
  const auto layout = t::qwen3_8b_fp8();
  const std::string bytes = t::safetensors_header(layout.tensors);
  const std::uint64_t file_size = bytes.size() + t::st_total(layout.tensors);
  const auto h = parse_safetensors_prefix(bytes, file_size);
  REQUIRE(h);
  REQUIRE(h->tensors.size() == layout.tensors.size());
  CHECK(h->data_bytes() == t::st_total(layout.tensors));
  CHECK(h->file_bytes() == file_size);
  for (std::size_t i = 0; i < layout.tensors.size(); ++i) {
    CHECK(h->tensors[i].name == layout.tensors[i].name);
    CHECK(h->tensors[i].shape == layout.tensors[i].shape);
    CHECK(std::string(to_string(h->tensors[i].dtype)) == layout.tensors[i].dtype);
    CHECK(h->tensors[i].bytes() == t::st_bytes(layout.tensors[i]));
  }
  REQUIRE(h->metadata.size() == 1);
  CHECK(h->metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
  // The size, when known, must be exactly header + data.
  CHECK_FALSE(parse_safetensors_prefix(bytes, file_size + 1));
  CHECK_FALSE(parse_safetensors_prefix(bytes, file_size - 1));
  CHECK(parse_safetensors_prefix(bytes, std::nullopt));
}

TEST_CASE("safetensors header: every dtype's bits, sub-byte dtypes in whole bytes only", "[sizing][safetensors]")
{
  for (const char* d : {"BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ",
                        "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"}) {
    INFO(d);
    const auto parsed = gpurent::parse_st_dtype(d);
    REQUIRE(parsed);
    CHECK(gpurent::st_dtype_bits(*parsed) == t::st_bits(d));
    CHECK(gpurent::to_string(*parsed) == d);
  }
  CHECK_FALSE(gpurent::parse_st_dtype("bf16"));  // the format spells dtypes in capitals
  CHECK_FALSE(gpurent::parse_st_dtype("Q4_K"));
  // 3 F4 values are 12 bits: not whole bytes (the library's MisalignedSlice).
  const auto odd = parse_safetensors_prefix(with_json(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})"), {});
  REQUIRE_FALSE(odd);
  CHECK_THAT(odd.error().message, Catch::Contains("whole bytes"));
  CHECK(parse_safetensors_prefix(with_json(R"({"a":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})"), {}));
  CHECK(parse_safetensors_prefix(with_json(R"({"a":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}})"), {}));
}

TEST_CASE("safetensors header: hostile input is one invalid_input error", "[sizing][safetensors]")
{
  const std::pair<std::string, std::string> cases[] = {
      {with_json("[]"), "not a JSON object"},
      {with_json("{\"a\""), "not valid JSON"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}} x)"), "not valid JSON"},
      {with_json(R"({"a":{"dtype":"Q9","shape":[2],"data_offsets":[0,4]}})"), "unknown dtype"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[-2],"data_offsets":[0,4]}})"), "negative"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2.5],"data_offsets":[0,4]}})"), "fractional"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,5]}})"), "need 4"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}})"), "do not follow"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[2,6]}})"),
       "do not follow"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2],"data_offsets":[0]}})"), "exactly two"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[2]}})"), "data_offsets"},
      {with_json(R"({"a":{"shape":[2],"data_offsets":[0,4]}})"), "dtype"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})"), "overflows"},
      {with_json(R"({"a":{"dtype":"BF16","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,2]}})"),
       "more than 16"},
      {with_json(R"({"__metadata__":{"k":1}})"), "__metadata__"},
      {with_json(R"({"a":7})"), "tensor \"a\""},
      {with_json(R"({"":{"dtype":"BF16","shape":[],"data_offsets":[0,2]}})"), "empty tensor name"},
      {le64(200'000'000) + "{}", "over the format's limit"},
      {le64(1), "bytes long"},
      {std::string("\x10\0\0", 3), "shorter than the 8-byte"},
      {le64(64) + "{}", "only 10 bytes given"},
  };
  for (const auto& [bytes, why] : cases) {
    INFO(why);
    const auto h = parse_safetensors_prefix(bytes, std::nullopt);
    REQUIRE_FALSE(h);
    CHECK(h.error().code == Errc::invalid_input);
    CHECK_THAT(h.error().message, Catch::Contains(why));
  }
  // The length is checked against the file before anything is read or allocated.
  const auto len = safetensors_header_length(le64(4096), std::uint64_t{100});
  REQUIRE_FALSE(len);
  CHECK_THAT(len.error().message, Catch::Contains("file has 100"));
  // Unknown keys inside a tensor's info are ignored, as serde does; "__metadata__": null is allowed.
  CHECK(parse_safetensors_prefix(
      with_json(R"({"__metadata__":null,"a":{"x":{"y":[1,{"z":null}]},"dtype":"BF16","w":"s","shape":[2],"data_offsets":[0,4]}})"),
      std::nullopt));
  CHECK(parse_safetensors_prefix(with_json("{}"), 8 + 2));  // no tensors: an empty file
}

TEST_CASE("safetensors header: parse(serialize(x)) == x for random headers", "[sizing][safetensors][property]")
{
  std::mt19937_64 rng(20260514);
  const std::vector<std::string> dtypes{"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0", "I16", "U16",
                                        "F16",  "BF16", "I32", "U32", "F32", "F64", "I64", "U64", "C64", "F4"};
  for (int round = 0; round < 300; ++round) {
    std::vector<t::StTensor> ts;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      t::StTensor x;
      x.name = "model.layers." + std::to_string(i) + (rng() % 2 ? ".weight" : ".q\"\\u00e9\xc3\xa9");
      x.dtype = dtypes[rng() % dtypes.size()];
      const std::size_t rank = rng() % 5;
      for (std::size_t d = 0; d < rank; ++d) {
        x.shape.push_back(rng() % 7 == 0 ? 0 : 1 + rng() % 300);
      }
      if (x.dtype == "F4" && t::elements(x.shape) % 2 == 1) {
        x.shape.push_back(2);
      }
      ts.push_back(std::move(x));
    }
    std::map<std::string, std::string> meta;
    if (rng() % 2) {
      meta["format"] = "pt";
      meta["quant"] = std::to_string(rng());
    }
    const std::string bytes = t::safetensors_header(ts, meta);
    const auto h = parse_safetensors_prefix(bytes, bytes.size() + t::st_total(ts));
    INFO(bytes.substr(8));
    REQUIRE(h);
    std::vector<gpurent::SafetensorsTensor> want;
    std::uint64_t offset = 0;
    for (const auto& x : ts) {
      const auto bytes_of = t::st_bytes(x);
      want.push_back({x.name, *gpurent::parse_st_dtype(x.dtype), x.shape, offset, offset + bytes_of});
      offset += bytes_of;
    }
    // Zero-byte tensors share an offset: the parser orders them by name.
    std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
      return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    CHECK(h->tensors == want);
    CHECK(h->metadata == std::vector<std::pair<std::string, std::string>>(meta.begin(), meta.end()));
  }
}

TEST_CASE("safetensors header: mutated real headers never crash", "[sizing][safetensors][property]")
{
  const std::string valid = t::safetensors_header(t::gpt_oss_20b().tensors);
  std::mt19937_64 rng(7);
  int accepted = 0;
  for (int round = 0; round < 400; ++round) {
    std::string b = valid.substr(0, 8 + rng() % std::min<std::size_t>(valid.size(), 6000));
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !b.empty(); ++e) {
      b[rng() % b.size()] = static_cast<char>(rng() % 256);
    }
    const auto h = parse_safetensors_prefix(b, std::nullopt);
    if (h) {
      ++accepted;  // whatever was accepted obeys the format's rules
      std::uint64_t at = 0;
      for (const auto& x : h->tensors) {
        CHECK(x.begin == at);
        CHECK(x.bytes() * 8 == t::elements(x.shape) * gpurent::st_dtype_bits(x.dtype));
        at = x.end;
      }
    } else {
      CHECK(h.error().code == Errc::invalid_input);
      CHECK_FALSE(h.error().message.empty());
    }
  }
  CHECK(accepted < 400);
}
