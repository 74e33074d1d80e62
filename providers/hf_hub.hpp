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
  // Which weights to read from the repository's files (providers/repo_weights.hpp).
  bool read_weights = true;   // the safetensors/GGUF headers (false: config.json and index only)
  bool prefer_gguf = false;   // --engine llama.cpp|ollama: a GGUF file of the repository
  std::string gguf_type;      // --weights as a GGUF type: which GGUF file
  std::string gguf;           // --gguf FILE|URL: a local file, a URL, or a file of the Hub repository
  bool resolving_adapter_base = false;  // set while resolving an adapter's base: a base that is itself an adapter is refused
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
// config.json, a directory holding one (a checkpoint or a LoRA adapter directory) or a .gguf file,
// then the cache, then the Hub (unless offline). Hub and local checkpoints get their exact
// weights from their files' headers (ModelArch::checkpoint). With options.gguf the weights (and,
// when `spec` is empty, the architecture) come from that GGUF file.
[[nodiscard]] Result<ResolvedModel> resolve_model(std::string_view spec, const ResolveOptions& options,
                                                  const HttpProvider& http);
[[nodiscard]] Result<ResolvedModel> resolve_model(std::string_view spec, const ResolveOptions& options,
                                                  HttpClient* http);

// The error of a Hub answer that is not 200 (401/403 gated or private, 404, 429, 5xx), naming the
// model and what to do.
[[nodiscard]] Error hub_status_error(const HttpResponse& resp, std::string_view id, const ResolveOptions& o);

// True for a well-formed Hub repo id "org/name" (letters, digits, '.', '_', '-').
[[nodiscard]] bool is_hub_id(std::string_view spec) noexcept;

// The exact parameter count from a model.safetensors.index.json (metadata.total_size divided
// by the bytes of the dtype), or an error when the document or the dtype does not allow it.
[[nodiscard]] Result<std::uint64_t> params_from_safetensors_index(std::string_view index_json, std::string_view dtype);

}  // namespace gpurent
