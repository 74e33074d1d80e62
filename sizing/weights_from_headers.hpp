// SPDX-License-Identifier: MIT
#pragma once
// Exact weight bytes from the tensors a checkpoint's headers list (pure): each tensor is sorted
// into the part of the model it belongs to (embedding, decoder linear, routed experts, other,
// outside the text decoder), its logical parameters counted (a packed int32 of GPTQ/AWQ holds
// 32/bits weights, an MXFP4 or bitsandbytes-4bit byte two) and its stored bytes summed with the
// quantization scales, zero points and indices that belong to it. Also: which files a repository's
// loader reads (the index's weight_map, the GGUF file of a chosen type, split GGUF shards).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sizing/checkpoint.hpp"
#include "sizing/gguf_header.hpp"
#include "sizing/safetensors_header.hpp"

namespace gpurent {

struct TensorEntry {
  std::string name;
  std::string dtype;  // "BF16", "I32", "F8_E4M3", or a ggml type name "Q4_K"
  std::vector<std::uint64_t> shape;  // as the file lists it (safetensors: outermost first)
  std::uint64_t bytes = 0;
};

// quantization_config of a config.json, as far as sizing needs it (empty when absent).
struct QuantHints {
  std::string method;            // "gptq", "awq", "fp8", "mxfp4", "bitsandbytes", "compressed-tensors", …
  std::uint32_t bits = 0;        // bits / w_bit / num_bits; 0 when not given
  std::uint32_t group_size = 0;  // group_size / q_group_size
  bool bnb_4bit = false;         // load_in_4bit
  bool bnb_8bit = false;         // load_in_8bit
};
[[nodiscard]] QuantHints quant_hints_from_config(std::string_view config_json);

[[nodiscard]] std::vector<TensorEntry> tensor_entries(const SafetensorsHeader& h);
[[nodiscard]] std::vector<TensorEntry> tensor_entries(const GgufHeader& h);

// The breakdown of safetensors tensors (all the files the loader reads, together).
[[nodiscard]] CheckpointWeights weights_from_safetensors(std::span<const TensorEntry> tensors, const QuantHints& hints);
// The breakdown of GGUF tensors (every shard of a split file, together); `file_type` is the
// header's general.file_type when present (names the format: 15 -> Q4_K_M).
[[nodiscard]] CheckpointWeights weights_from_gguf(std::span<const TensorEntry> tensors,
                                                  std::optional<std::uint32_t> file_type);
// The LoRA adapter of an adapter_model.safetensors with adapter_config.json's text.
[[nodiscard]] Result<AdapterWeights> adapter_from_safetensors(std::span<const TensorEntry> tensors,
                                                              std::string_view adapter_config_json);

// llama.cpp's file type names (general.file_type): 15 -> "Q4_K_M"; nullopt when unknown.
[[nodiscard]] std::optional<std::string_view> gguf_file_type_name(std::uint32_t file_type) noexcept;

// ---- Which files ----
// A path a repository may name: relative, '/'-separated, no "." or ".." part, no backslash.
[[nodiscard]] bool safe_repo_path(std::string_view path);
// The files a model.safetensors.index.json's weight_map names (sorted, each once).
[[nodiscard]] Result<std::vector<std::string>> files_of_safetensors_index(std::string_view index_json);
// The safetensors files the loader reads from a repository listing (paths relative to the repo):
// those of the index when given; else model.safetensors; else the top-level *.safetensors except
// copies other loaders use (consolidated*.safetensors) and adapters. Empty when there are none.
[[nodiscard]] std::vector<std::string> safetensors_weight_files(const std::vector<std::string>& listing,
                                                                const std::vector<std::string>& index_files);

// A GGUF model of a repository: one file, or the shards of a split one (…-00001-of-00003.gguf).
struct GgufChoice {
  std::vector<std::string> files;  // in shard order
  std::string type;                // the quant type its name shows ("Q4_K_M"), empty when none
  std::vector<std::string> notes;
};
// The GGUF files of a listing (mmproj files excluded), grouped into models.
[[nodiscard]] std::vector<GgufChoice> gguf_models(const std::vector<std::string>& listing);
// The model of `type` (case-insensitive, '-' = '_'), or when `type` is empty: the only one, else
// Q4_K_M, else an error listing the types. Errc::not_found when `type` is absent.
[[nodiscard]] Result<GgufChoice> choose_gguf(const std::vector<std::string>& listing, std::string_view type,
                                             std::string_view where);

}  // namespace gpurent
