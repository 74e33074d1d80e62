// SPDX-License-Identifier: MIT
#pragma once
// The header of a .safetensors file (pure: bytes in, value out). Layout: an 8-byte little-endian
// length N, then N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
// "__metadata__": {"k": "v"}}, then the tensor data. Validated as the safetensors library does
// (safetensors/src/tensor.rs): N at most 100,000,000; offsets contiguous from 0 in increasing
// order; end - begin == elements × dtype bits / 8 exactly; header + data == the file's size.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// Every dtype of the safetensors format (Dtype in safetensors 0.6+); bits per element below.
enum class StDtype : std::uint8_t {
  BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ,
  I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64,
};

[[nodiscard]] std::optional<StDtype> parse_st_dtype(std::string_view s) noexcept;  // "BF16" -> BF16 (exact case)
[[nodiscard]] std::string_view to_string(StDtype d) noexcept;
[[nodiscard]] std::uint32_t st_dtype_bits(StDtype d) noexcept;  // F4 4, F6_* 6, BF16 16, F64 64, …

inline constexpr std::uint64_t k_max_safetensors_header = 100'000'000;  // the library's MAX_HEADER_SIZE
inline constexpr std::size_t k_max_tensor_rank = 16;

struct SafetensorsTensor {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the start of the data (after the header)
  std::uint64_t end = 0;
  [[nodiscard]] std::uint64_t bytes() const noexcept { return end - begin; }
  bool operator==(const SafetensorsTensor&) const = default;
};

struct SafetensorsHeader {
  std::uint64_t header_length = 0;  // N: the JSON's length in bytes
  std::vector<SafetensorsTensor> tensors;  // in data order (increasing offsets)
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__", sorted by key
  [[nodiscard]] std::uint64_t data_bytes() const noexcept { return tensors.empty() ? 0 : tensors.back().end; }
  [[nodiscard]] std::uint64_t file_bytes() const noexcept { return 8 + header_length + data_bytes(); }
  bool operator==(const SafetensorsHeader&) const = default;
};

// N from the file's first 8 bytes (fewer is an error), bounded before anything is allocated:
// at most k_max_safetensors_header, and when the file's size is known 8 + N must fit in it.
[[nodiscard]] Result<std::uint64_t> safetensors_header_length(std::string_view first_bytes,
                                                              std::optional<std::uint64_t> file_size);

// The header from its JSON (the N bytes after the length). `file_size`, when known, must equal
// 8 + N + the end of the last tensor. Every problem is one Errc::invalid_input error naming the
// tensor; never throws. Parsed with a SAX reader: memory grows with the tensors, not the text.
[[nodiscard]] Result<SafetensorsHeader> parse_safetensors_header(std::string_view json_text,
                                                                 std::optional<std::uint64_t> file_size);

// The whole thing from the file's first bytes (length + JSON; the data may be absent).
[[nodiscard]] Result<SafetensorsHeader> parse_safetensors_prefix(std::string_view bytes,
                                                                 std::optional<std::uint64_t> file_size);

}  // namespace gpurent
