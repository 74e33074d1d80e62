// SPDX-License-Identifier: MIT
#pragma once
// The header of a GGUF file (v2/v3, little-endian), pure: bytes in, value out. Layout: magic
// "GGUF", u32 version, u64 tensor count, u64 metadata count, typed key/value pairs, tensor infos
// (name, n_dims, dims, ggml type, offset), padding to `general.alignment` (default 32), data.
// Validated as ggml's gguf.cpp does: no duplicate or empty keys, no duplicate tensor names, at
// most 4 dims, dims[0] a multiple of the type's block, offsets contiguous (each tensor padded to
// the alignment), no nested arrays; and every tensor inside the file when its size is known.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// ---- ggml tensor types ----
// The whole table of ggml.h (types 0-42 as of ggml 2026-08): block size in elements and bytes per
// block. Removed types (4, 5, 31-33, 36-38) have block == 0 and say why in `removed`.
struct GgmlType {
  std::uint32_t id = 0;
  std::string_view name;     // "Q4_K", "F16", "MXFP4"
  std::uint32_t block = 0;   // elements per block (1 for plain types)
  std::uint32_t bytes = 0;   // bytes per block
  std::string_view removed;  // non-empty: ggml no longer loads it (and why)
};
inline constexpr std::uint32_t k_ggml_type_count = 43;
// nullopt for ids beyond the table (a type newer than this build knows).
[[nodiscard]] std::optional<GgmlType> ggml_type(std::uint32_t id) noexcept;
[[nodiscard]] std::optional<GgmlType> ggml_type_by_name(std::string_view name) noexcept;  // case-insensitive
// Bytes of a tensor of `type` with `dims` (dims[0] innermost), checked: a usable type,
// dims[0] a multiple of the block, no overflow. Errc::invalid_input otherwise.
[[nodiscard]] Result<std::uint64_t> ggml_tensor_bytes(std::uint32_t type, const std::vector<std::uint64_t>& dims);

// ---- metadata values ----
enum class GgufType : std::uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7, string = 8, array = 9,
  u64 = 10, i64 = 11, f64 = 12,
};
[[nodiscard]] std::string_view to_string(GgufType t) noexcept;
// Bytes of one element of a fixed-size type (0 for string and array).
[[nodiscard]] std::uint32_t gguf_type_size(GgufType t) noexcept;

struct GgufValue {
  GgufType type = GgufType::u32;     // the element type, never `array`
  bool is_array = false;
  std::uint64_t count = 1;           // elements (1 for a scalar)
  std::string raw;                   // fixed-size elements, little-endian, back to back (as in the file)
  std::vector<std::string> strings;  // string elements (empty when skipped: see GgufParseOptions)
  bool operator==(const GgufValue&) const = default;

  // Element i as an unsigned integer (any integer or bool type; negative values give nullopt).
  [[nodiscard]] std::optional<std::uint64_t> as_u64(std::size_t i = 0) const noexcept;
  [[nodiscard]] std::optional<double> as_f64(std::size_t i = 0) const noexcept;  // any number
  [[nodiscard]] std::optional<std::string_view> as_string(std::size_t i = 0) const noexcept;
};

struct GgufKv {
  std::string key;
  GgufValue value;
  bool operator==(const GgufKv&) const = default;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<std::uint64_t> dims;  // ne[0] (innermost) first
  std::uint32_t type = 0;           // ggml type id
  std::uint64_t offset = 0;         // from the start of the data section
  std::uint64_t bytes = 0;          // computed from type and dims
  bool operator==(const GgufTensorInfo&) const = default;
};

struct GgufHeader {
  std::uint32_t version = 3;
  std::vector<GgufKv> kv;                 // in file order
  std::vector<GgufTensorInfo> tensors;    // in file order
  std::uint32_t alignment = 32;           // general.alignment
  std::uint64_t data_offset = 0;          // where the data section starts (header end, padded)
  std::uint64_t data_bytes = 0;           // the data section, each tensor padded to the alignment
  bool operator==(const GgufHeader&) const = default;
  [[nodiscard]] const GgufValue* find(std::string_view key) const noexcept;
};

inline constexpr std::uint64_t k_max_gguf_header = 256ULL * 1024 * 1024;

struct GgufParseOptions {
  // Keep the elements of string arrays (the tokenizer's vocabulary and merges: megabytes).
  // Off, only their count is kept: sizing needs the vocabulary's length, not its text.
  bool keep_string_arrays = true;
  std::uint64_t max_header = k_max_gguf_header;  // larger headers are refused
};

// The header, or how many bytes the parse needs (`need`: the buffer was too short; read at least
// that many from the start of the file and try again). Errors (Errc::invalid_input) name the
// key or tensor; never throws; nothing is allocated beyond what the given bytes can hold.
struct GgufParse {
  std::optional<GgufHeader> header;
  std::uint64_t need = 0;
};
[[nodiscard]] Result<GgufParse> parse_gguf_header(std::string_view bytes, std::optional<std::uint64_t> file_size,
                                                  const GgufParseOptions& options = {});

}  // namespace gpurent
