// SPDX-License-Identifier: MIT
#include "sizing/safetensors_header.hpp"

#include <algorithm>
#include <array>
#include <tuple>

#include "sizing/safetensors_sax.hpp"

namespace gpurent {
namespace {

struct DtypeRow {
  StDtype dtype;
  std::string_view name;
  std::uint32_t bits;
};

constexpr std::array<DtypeRow, 22> k_dtypes{{
    {StDtype::BOOL, "BOOL", 8},       {StDtype::F4, "F4", 4},
    {StDtype::F6_E2M3, "F6_E2M3", 6}, {StDtype::F6_E3M2, "F6_E3M2", 6},
    {StDtype::U8, "U8", 8},           {StDtype::I8, "I8", 8},
    {StDtype::F8_E5M2, "F8_E5M2", 8}, {StDtype::F8_E4M3, "F8_E4M3", 8},
    {StDtype::F8_E8M0, "F8_E8M0", 8}, {StDtype::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {StDtype::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8}, {StDtype::I16, "I16", 16},
    {StDtype::U16, "U16", 16},        {StDtype::F16, "F16", 16},
    {StDtype::BF16, "BF16", 16},      {StDtype::I32, "I32", 32},
    {StDtype::U32, "U32", 32},        {StDtype::F32, "F32", 32},
    {StDtype::C64, "C64", 64},        {StDtype::F64, "F64", 64},
    {StDtype::I64, "I64", 64},        {StDtype::U64, "U64", 64},
}};

Error bad(std::string what) { return Error{Errc::invalid_input, "safetensors header: " + std::move(what)}; }

// elements × bits / 8, or an error on overflow or a fraction of a byte.
Result<std::uint64_t> tensor_bytes(const SafetensorsTensor& t)
{
  std::uint64_t n = 1;
  for (const auto d : t.shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return std::unexpected(bad("tensor \"" + t.name + "\": the shape's product overflows 64 bits"));
    }
  }
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(n, st_dtype_bits(t.dtype), &bits)) {
    return std::unexpected(bad("tensor \"" + t.name + "\": its size in bits overflows 64 bits"));
  }
  if (bits % 8 != 0) {
    return std::unexpected(bad("tensor \"" + t.name + "\": " + std::to_string(n) + " elements of " +
                               std::string(to_string(t.dtype)) + " do not fill whole bytes"));
  }
  return bits / 8;
}

}  // namespace

std::optional<StDtype> parse_st_dtype(std::string_view s) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.name == s) {
      return row.dtype;
    }
  }
  return std::nullopt;
}

std::string_view to_string(StDtype d) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.dtype == d) {
      return row.name;
    }
  }
  return "?";
}

std::uint32_t st_dtype_bits(StDtype d) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.dtype == d) {
      return row.bits;
    }
  }
  return 0;
}

Result<std::uint64_t> safetensors_header_length(std::string_view first, std::optional<std::uint64_t> file_size)
{
  if (first.size() < 8) {
    return std::unexpected(bad("the file is shorter than the 8-byte header length"));
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(first[static_cast<std::size_t>(i)]);
  }
  if (n > k_max_safetensors_header) {
    return std::unexpected(bad("the header claims " + std::to_string(n) + " bytes, over the format's limit of " +
                               std::to_string(k_max_safetensors_header) + "; not a safetensors file"));
  }
  if (n < 2) {
    return std::unexpected(bad("the header is " + std::to_string(n) + " bytes long; not a safetensors file"));
  }
  if (file_size && (*file_size < 8 || n > *file_size - 8)) {
    return std::unexpected(bad("the header claims " + std::to_string(n) + " bytes but the file has " +
                               std::to_string(*file_size)));
  }
  return n;
}

Result<SafetensorsHeader> parse_safetensors_header(std::string_view json_text, std::optional<std::uint64_t> file_size)
{
  if (json_text.size() > k_max_safetensors_header) {
    return std::unexpected(bad("the header is over the format's limit of 100,000,000 bytes"));
  }
  auto read = st_detail::read_header_json(json_text);
  if (!read) {
    return std::unexpected(bad(read.error().message));
  }
  SafetensorsHeader h;
  h.header_length = json_text.size();
  h.tensors = std::move(read->tensors);
  h.metadata = std::move(read->metadata);
  std::sort(h.metadata.begin(), h.metadata.end());
  for (std::size_t i = 1; i < h.metadata.size(); ++i) {
    if (h.metadata[i].first == h.metadata[i - 1].first) {
      return std::unexpected(bad("\"__metadata__\" repeats the key \"" + h.metadata[i].first + "\""));
    }
  }
  // Data order: by offsets (names break ties so that empty tensors sort deterministically).
  std::sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < h.tensors.size(); ++i) {
    const auto& t = h.tensors[i];
    if (i > 0 && t.name == h.tensors[i - 1].name) {
      return std::unexpected(bad("tensor \"" + t.name + "\" is listed twice"));
    }
    if (t.begin != expected || t.end < t.begin) {
      return std::unexpected(bad("tensor \"" + t.name + "\": data_offsets [" + std::to_string(t.begin) + ", " +
                                 std::to_string(t.end) + "] do not follow the previous tensor (expected to start at " +
                                 std::to_string(expected) + ")"));
    }
    TRY_ASSIGN(const std::uint64_t size, tensor_bytes(t));
    if (t.end - t.begin != size) {
      return std::unexpected(bad("tensor \"" + t.name + "\": data_offsets span " + std::to_string(t.end - t.begin) +
                                 " bytes but its shape and dtype need " + std::to_string(size)));
    }
    expected = t.end;
  }
  if (file_size) {
    const std::uint64_t need = 8 + h.header_length + expected;  // no overflow: each part < 2^62 here
    if (expected > (UINT64_MAX >> 2) || need != *file_size) {
      return std::unexpected(bad("header and tensors cover " + std::to_string(need) + " bytes but the file has " +
                                 std::to_string(*file_size) + " (truncated or padded file)"));
    }
  }
  return h;
}

Result<SafetensorsHeader> parse_safetensors_prefix(std::string_view bytes, std::optional<std::uint64_t> file_size)
{
  TRY_ASSIGN(const std::uint64_t n, safetensors_header_length(bytes, file_size));
  if (bytes.size() - 8 < n) {
    return std::unexpected(bad("only " + std::to_string(bytes.size()) + " bytes given of a " + std::to_string(n + 8) +
                               "-byte header"));
  }
  return parse_safetensors_header(bytes.substr(8, n), file_size);
}

}  // namespace gpurent
