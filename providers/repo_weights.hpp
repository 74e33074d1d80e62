// SPDX-License-Identifier: MIT
#pragma once
// A repository's weights from its files' headers: the safetensors files its loader reads (the
// index's weight_map, or model.safetensors) or a GGUF file (chosen by type, every shard of a
// split one), each header read in one or two range requests, summed per tensor
// (sizing/weights_from_headers.hpp). Also a LoRA adapter beside them.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/hf_files.hpp"
#include "sizing/gguf_header.hpp"
#include "sizing/model.hpp"
#include "sizing/safetensors_header.hpp"

namespace gpurent {

struct WeightsRequest {
  bool prefer_gguf = false;  // --engine llama.cpp|ollama: size a GGUF file when the repository has one
  std::string gguf_type;     // --weights as a GGUF type ("Q4_K_M"): which one
  std::string gguf_file;     // a .gguf named by --gguf (a path inside the repository)
};

struct RepoWeights {
  std::optional<CheckpointWeights> weights;
  std::optional<ModelArch> gguf_arch;      // the GGUF header's architecture, when GGUF was read
  std::optional<AdapterWeights> adapter;   // adapter_model.safetensors + adapter_config.json
  std::optional<std::string> adapter_base; // adapter_config.json's base_model_name_or_path
  std::vector<std::string> warnings;
};

// `config_json`: the repository's config.json text when it has one (quantization_config).
[[nodiscard]] Result<RepoWeights> read_repo_weights(RepoFiles& files, const std::vector<RepoFile>& listing,
                                                    const WeightsRequest& request, std::string_view config_json);

// One header, in as few reads as its length allows (size: from the listing when known).
[[nodiscard]] Result<SafetensorsHeader> read_safetensors_header(RepoFiles& files, std::string_view file,
                                                                std::optional<std::uint64_t> size);
[[nodiscard]] Result<GgufHeader> read_gguf_header(RepoFiles& files, std::string_view file,
                                                  std::optional<std::uint64_t> size);

// Puts the weights on a model: ModelArch::checkpoint, the exact parameter count (packed weights
// unpacked), the parameters outside the text decoder; the "params" approximation is dropped.
void apply_weights(ModelArch& arch, CheckpointWeights weights);

}  // namespace gpurent
