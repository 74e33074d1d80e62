// SPDX-License-Identifier: MIT
#pragma once
// Internal to providers/hf_hub.cpp and providers/model_files.cpp (not a public interface): the
// steps of resolve_model that read a model's own files.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "providers/hf_hub.hpp"

namespace gpurent::hf_detail {

// A config.json (or a directory holding one) read alone, named after its directory.
[[nodiscard]] Result<ResolvedModel> model_from_config_file(const std::filesystem::path& given);
[[nodiscard]] Result<std::string> read_small_file(const std::filesystem::path& path, std::uint64_t limit);
// Writes via a temporary file and a rename, so readers never see half a file; false on failure.
[[nodiscard]] bool write_atomically(const std::filesystem::path& path, std::string_view text);

// A local path: a checkpoint directory (config.json + safetensors/GGUF files), a LoRA adapter
// directory (adapter_config.json + adapter_model.safetensors, on top of its base model), a .gguf
// file, or a config.json (with the weights beside it).
[[nodiscard]] Result<ResolvedModel> resolve_local(const std::filesystem::path& path, const ResolveOptions& o,
                                                  const HttpProvider& http);

// Reads the Hub repository's file list and weights' headers (or the cache's copies) onto `r`.
// true when exact weights were attached; only a gated/private answer is an error, anything
// else a warning on `r` (the count then comes from the index or the architecture).
[[nodiscard]] Result<bool> attach_hub_weights(ResolvedModel& r, const HttpProvider& http, const ResolveOptions& o,
                                              std::string_view id, const std::filesystem::path& cache_dir,
                                              std::string_view config_json);

// A Hub repository without config.json: a LoRA adapter repository (adapter_config.json +
// adapter_model.safetensors) resolves to the base model it names with the adapter attached; else
// its GGUF file gives the architecture. nullopt when the repository has neither.
[[nodiscard]] Result<std::optional<ResolvedModel>> gguf_repo_model(const HttpProvider& http, const ResolveOptions& o,
                                                                   std::string_view id,
                                                                   const std::filesystem::path& cache_dir);

// --gguf FILE|URL: the weights (and without `spec` the architecture) from that GGUF file.
[[nodiscard]] Result<ResolvedModel> resolve_with_gguf(std::string_view spec, const ResolveOptions& o,
                                                      const HttpProvider& http);

}  // namespace gpurent::hf_detail
