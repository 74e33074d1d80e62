// SPDX-License-Identifier: MIT
// ggml's tensor types (block sizes and bytes per block) and GGUF metadata values.
#include <array>
#include <bit>

#include "common/text.hpp"
#include "sizing/gguf_header.hpp"

namespace gpurent {
namespace {

// ggml.h / ggml.c type_traits and ggml-common.h block layouts (checked by their static_asserts).
constexpr std::string_view k_repacked = "removed from GGUF files in Nov 2024 (ggml repacks Q4_0/IQ4_NL at load time); "
                                        "current llama.cpp refuses this file: use a Q4_0 or IQ4_NL file";
constexpr std::array<GgmlType, k_ggml_type_count> k_types{{
    {0, "F32", 1, 4, {}},
    {1, "F16", 1, 2, {}},
    {2, "Q4_0", 32, 18, {}},
    {3, "Q4_1", 32, 20, {}},
    {4, "Q4_2", 0, 0, "removed from ggml in 2023; re-convert the model"},
    {5, "Q4_3", 0, 0, "removed from ggml in 2023; re-convert the model"},
    {6, "Q5_0", 32, 22, {}},
    {7, "Q5_1", 32, 24, {}},
    {8, "Q8_0", 32, 34, {}},
    {9, "Q8_1", 32, 36, {}},
    {10, "Q2_K", 256, 84, {}},
    {11, "Q3_K", 256, 110, {}},
    {12, "Q4_K", 256, 144, {}},
    {13, "Q5_K", 256, 176, {}},
    {14, "Q6_K", 256, 210, {}},
    {15, "Q8_K", 256, 292, {}},
    {16, "IQ2_XXS", 256, 66, {}},
    {17, "IQ2_XS", 256, 74, {}},
    {18, "IQ3_XXS", 256, 98, {}},
    {19, "IQ1_S", 256, 50, {}},
    {20, "IQ4_NL", 32, 18, {}},
    {21, "IQ3_S", 256, 110, {}},
    {22, "IQ2_S", 256, 82, {}},
    {23, "IQ4_XS", 256, 136, {}},
    {24, "I8", 1, 1, {}},
    {25, "I16", 1, 2, {}},
    {26, "I32", 1, 4, {}},
    {27, "I64", 1, 8, {}},
    {28, "F64", 1, 8, {}},
    {29, "IQ1_M", 256, 56, {}},
    {30, "BF16", 1, 2, {}},
    {31, "Q4_0_4_4", 0, 0, k_repacked},
    {32, "Q4_0_4_8", 0, 0, k_repacked},
    {33, "Q4_0_8_8", 0, 0, k_repacked},
    {34, "TQ1_0", 256, 54, {}},
    {35, "TQ2_0", 256, 66, {}},
    {36, "IQ4_NL_4_4", 0, 0, k_repacked},
    {37, "IQ4_NL_4_8", 0, 0, k_repacked},
    {38, "IQ4_NL_8_8", 0, 0, k_repacked},
    {39, "MXFP4", 32, 17, {}},
    {40, "NVFP4", 64, 36, {}},
    {41, "Q1_0", 128, 18, {}},
    {42, "Q2_0", 64, 18, {}},
}};

constexpr std::uint64_t k_int64_max = 0x7fffffffffffffffULL;

Error bad(std::string what) { return Error{Errc::invalid_input, "GGUF header: " + std::move(what)}; }

template <class T>
T load_le(std::string_view raw, std::size_t i) noexcept
{
  std::uint64_t acc = 0;
  for (std::size_t k = sizeof(T); k-- > 0;) {
    acc = (acc << 8) | static_cast<unsigned char>(raw[i * sizeof(T) + k]);
  }
  return static_cast<T>(acc);
}

}  // namespace

std::optional<GgmlType> ggml_type(std::uint32_t id) noexcept
{
  if (id >= k_types.size()) {
    return std::nullopt;
  }
  return k_types[id];
}

std::optional<GgmlType> ggml_type_by_name(std::string_view name) noexcept
{
  for (const auto& t : k_types) {
    if (iequals(t.name, name)) {
      return t;
    }
  }
  return std::nullopt;
}

Result<std::uint64_t> ggml_tensor_bytes(std::uint32_t type, const std::vector<std::uint64_t>& dims)
{
  const auto t = ggml_type(type);
  if (!t) {
    return std::unexpected(bad("ggml type " + std::to_string(type) + " is newer than this build knows (types 0-" +
                               std::to_string(k_ggml_type_count - 1) + "); update gpurent"));
  }
  if (t->block == 0) {
    return std::unexpected(bad("ggml type " + std::to_string(type) + " (" + std::string(t->name) + ") was " +
                               std::string(t->removed)));
  }
  const std::uint64_t ne0 = dims.empty() ? 1 : dims[0];
  if (ne0 % t->block != 0) {
    return std::unexpected(bad("a row of " + std::to_string(ne0) + " elements is not a multiple of " +
                               std::string(t->name) + "'s block of " + std::to_string(t->block)));
  }
  std::uint64_t bytes = ne0 / t->block * t->bytes;  // ne0 < 2^63, bytes per block < 2^9: no overflow
  for (std::size_t i = 1; i < dims.size(); ++i) {
    if (__builtin_mul_overflow(bytes, dims[i], &bytes) || bytes > k_int64_max) {
      return std::unexpected(bad("the size in bytes overflows"));
    }
  }
  return bytes;
}

std::string_view to_string(GgufType t) noexcept
{
  static constexpr std::array<std::string_view, 13> k_names{"u8",  "i8",   "u16",    "i16",   "u32", "i32", "f32",
                                                            "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<std::uint32_t>(t);
  return i < k_names.size() ? k_names[i] : "?";
}

std::uint32_t gguf_type_size(GgufType t) noexcept
{
  switch (t) {
  case GgufType::u8:
  case GgufType::i8:
  case GgufType::boolean: return 1;
  case GgufType::u16:
  case GgufType::i16: return 2;
  case GgufType::u32:
  case GgufType::i32:
  case GgufType::f32: return 4;
  case GgufType::u64:
  case GgufType::i64:
  case GgufType::f64: return 8;
  default: return 0;
  }
}

std::optional<std::uint64_t> GgufValue::as_u64(std::size_t i) const noexcept
{
  const std::uint32_t size = gguf_type_size(type);
  if (size == 0 || type == GgufType::f32 || type == GgufType::f64 || (i + 1) * size > raw.size()) {
    return std::nullopt;
  }
  switch (type) {
  case GgufType::i8: {
    const auto v = load_le<std::int8_t>(raw, i);
    return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
  }
  case GgufType::i16: {
    const auto v = load_le<std::int16_t>(raw, i);
    return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
  }
  case GgufType::i32: {
    const auto v = load_le<std::int32_t>(raw, i);
    return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
  }
  case GgufType::i64: {
    const auto v = load_le<std::int64_t>(raw, i);
    return v < 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
  }
  case GgufType::u8:
  case GgufType::boolean: return load_le<std::uint8_t>(raw, i);
  case GgufType::u16: return load_le<std::uint16_t>(raw, i);
  case GgufType::u32: return load_le<std::uint32_t>(raw, i);
  default: return load_le<std::uint64_t>(raw, i);
  }
}

std::optional<double> GgufValue::as_f64(std::size_t i) const noexcept
{
  if (type == GgufType::f32 && (i + 1) * 4 <= raw.size()) {
    return static_cast<double>(std::bit_cast<float>(load_le<std::uint32_t>(raw, i)));
  }
  if (type == GgufType::f64 && (i + 1) * 8 <= raw.size()) {
    return std::bit_cast<double>(load_le<std::uint64_t>(raw, i));
  }
  if (const auto u = as_u64(i)) {
    return static_cast<double>(*u);
  }
  return std::nullopt;
}

std::optional<std::string_view> GgufValue::as_string(std::size_t i) const noexcept
{
  if (type != GgufType::string || i >= strings.size()) {
    return std::nullopt;
  }
  return std::string_view(strings[i]);
}

}  // namespace gpurent
