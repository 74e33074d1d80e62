// SPDX-License-Identifier: MIT
#pragma once
// Model resolution: the built-in catalogue, a local config.json, the cache, then the Hugging
// Face Hub (config.json + safetensors index) over the HttpClient port.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_client.hpp"
#include "common/result.hpp"
#include "sizing/model.hpp"

namespace gpurent {

struct ResolveOptions {
  std::string endpoint = "https://huggingface.co";  // $HF_ENDPOINT
  std::optional<std::string> token;                 // $HF_TOKEN, sent as a Bearer token, never printed
  std::filesystem::path cache_dir;                  // .../gpurent/hf; empty: no cache
  bool offline = false;                             // --offline: never touch the network
  std::chrono::milliseconds timeout{30'000};
};

struct ResolvedModel {
  ModelArch arch;
  std::string source_kind;  // "catalog", "hub" or "file"
  bool from_cache = false;  // a hub model read from the cache without fetching
  std::vector<std::string> warnings;
};

// Lazily gives the HTTP client (cli passes Services::http), so that only a model that really
// has to be fetched loads the IO module.
using HttpProvider = std::function<Result<HttpClient*>()>;

// Resolves MODEL as the spec describes: catalogue short name or HF id, then a path to a
// config.json (or a directory holding one), then the cache, then the Hub (unless offline).
[[nodiscard]] Result<ResolvedModel> resolve_model(std::string_view spec, const ResolveOptions& options,
                                                  const HttpProvider& http);
[[nodiscard]] Result<ResolvedModel> resolve_model(std::string_view spec, const ResolveOptions& options,
                                                  HttpClient* http);

// True for a well-formed Hub repo id "org/name" (letters, digits, '.', '_', '-').
[[nodiscard]] bool is_hub_id(std::string_view spec) noexcept;

// The exact parameter count from a model.safetensors.index.json (metadata.total_size divided
// by the bytes of the dtype), or an error when the document or the dtype does not allow it.
[[nodiscard]] Result<std::uint64_t> params_from_safetensors_index(std::string_view index_json, std::string_view dtype);

}  // namespace gpurent
