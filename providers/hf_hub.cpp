// SPDX-License-Identifier: MIT
#include "providers/hf_hub.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "common/rounding.hpp"
#include "common/text.hpp"
#include "providers/hf_resolve_detail.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/model_config.hpp"
#include "sizing/param_count.hpp"

namespace gpurent {

namespace fs = std::filesystem;

namespace hf_detail {

Result<std::string> read_small_file(const fs::path& path, std::uint64_t limit)
{
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    return fail(Errc::not_found, "model config " + path.string() + ": " + ec.message() +
                                     "; pass an existing config.json");
  }
  if (size > limit) {
    return fail(Errc::invalid_input, "model config " + path.string() + ": the file is " +
                                         std::to_string(size / (1024 * 1024)) +
                                         " MiB, far larger than any config.json (limit 16 MiB); pass the "
                                         "model's config.json, not its weights");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Errc::not_found, "model config " + path.string() + ": cannot open it; check the path and permissions");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = std::move(ss).str();
  if (text.size() > limit) {
    return fail(Errc::invalid_input, "model config " + path.string() + ": larger than 16 MiB; pass a config.json");
  }
  return text;
}

Result<ResolvedModel> model_from_config_file(const fs::path& given)
{
  fs::path path = given;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    path /= "config.json";
  }
  TRY_ASSIGN(const std::string text, read_small_file(path, k_max_model_config_bytes));
  TRY_ASSIGN(ModelArch arch, parse_model_config(text, path.string()));
  if (arch.hf_ids.empty()) {
    const auto dir = path.parent_path().filename().string();
    arch.name = (path.filename() == "config.json" && !dir.empty()) ? dir : path.stem().string();
  } else {
    arch.name = arch.hf_ids.front();
  }
  ResolvedModel r{std::move(arch), "file", false, {}};
  r.warnings.push_back("parameter count of " + r.arch.name + " derived from its architecture (" +
                       std::to_string(r.arch.params) + ")");
  return r;
}

// Writes via a temporary file and a rename, so readers never see half a file.
bool write_atomically(const fs::path& path, std::string_view text)
{
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return false;
  }
  const fs::path tmp = path.string() + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) {
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  return !ec;
}

}  // namespace hf_detail

namespace {

using hf_detail::read_small_file;
using hf_detail::write_atomically;

constexpr std::uint64_t k_max_index_bytes = 64ULL * 1024 * 1024;

bool id_part_ok(std::string_view part) noexcept
{
  if (part.empty() || part.size() > 96 || part == "." || part == ".." || part.front() == '.' || part.front() == '-') {
    return false;
  }
  for (const char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return part.find("..") == std::string_view::npos;
}

bool looks_like_path(std::string_view spec)
{
  return spec.starts_with("/") || spec.starts_with("./") || spec.starts_with("../") || spec.starts_with("~") ||
         spec.ends_with(".json") || spec.ends_with(".gguf") || spec.find('\\') != std::string_view::npos;
}

std::string hub_error_hint(std::string_view id)
{
  return "https://huggingface.co/" + std::string(id);
}

Result<HttpResponse> hub_get(HttpClient& http, const ResolveOptions& o, std::string_view id, std::string_view file)
{
  HttpRequest req;
  req.url = o.endpoint + "/" + std::string(id) + "/resolve/main/" + std::string(file);
  req.timeout = o.timeout;
  req.max_response_bytes = file == "config.json" ? k_max_model_config_bytes : k_max_index_bytes;
  req.headers.emplace_back("Accept", "application/json");
  if (o.token) {
    req.headers.emplace_back("Authorization", "Bearer " + *o.token);
  }
  return http.send(req);
}

Error status_error(const HttpResponse& resp, std::string_view id, const ResolveOptions& o)
{
  const std::string what = "model " + std::string(id) + " on " + o.endpoint;
  if (resp.status == 401 || resp.status == 403) {
    return Error{Errc::unauthorized,
                 what + ": access denied (HTTP " + std::to_string(resp.status) + "); the model is gated or private: " +
                     (o.token ? "accept its licence at " + hub_error_hint(id) + " with the account of your HF_TOKEN"
                              : "accept its licence at " + hub_error_hint(id) + " and set HF_TOKEN to a read token")};
  }
  if (resp.status == 404) {
    return Error{Errc::not_found, what + ": not found (HTTP 404); check the repo id (org/name), or pass a path "
                                         "to a config.json; `gpurent models` lists built-in models"};
  }
  if (resp.status == 429) {
    Error e{Errc::quota, what + ": rate limited (HTTP 429); wait and retry, or set HF_TOKEN"};
    if (const auto ra = resp.header("retry-after")) {
      if (const auto secs = parse_u64(*ra)) {
        e.retry_after = std::chrono::seconds(static_cast<std::int64_t>(*secs));
      }
    }
    return e;
  }
  return Error{Errc::unavailable, what + ": HTTP " + std::to_string(resp.status) + "; retry later"};
}

struct CacheEntry {
  fs::path dir;
  fs::path config() const { return dir / "config.json"; }
  fs::path meta() const { return dir / "gpurent-meta.json"; }
};

// Applies the exact count recorded next to the cached config, when it is plausible.
void apply_meta(ResolvedModel& r, const std::string& meta_text)
{
  const auto meta = nlohmann::json::parse(meta_text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) {
    r.warnings.push_back("cached metadata of " + r.arch.name + " is unreadable; parameter count derived");
    return;
  }
  const auto p = meta.find("params");
  if (p != meta.end() && p->is_number_unsigned()) {
    const auto exact = p->get<std::uint64_t>();
    const double ratio = static_cast<double>(exact) / static_cast<double>(r.arch.params);
    if (std::abs(ratio - 1.0) <= 0.10) {
      r.arch.params = exact;
    }
  }
  const auto s = meta.find("source");
  if (s != meta.end() && s->is_string()) {
    r.arch.source = s->get<std::string>();
  }
}

Result<ResolvedModel> from_cache(const CacheEntry& c, std::string_view id, const ResolveOptions& o,
                                 const HttpProvider& http)
{
  TRY_ASSIGN(const std::string text, read_small_file(c.config(), k_max_model_config_bytes));
  auto arch = parse_model_config(text, c.config().string());
  if (!arch) {
    return fail(Errc::invalid_input, arch.error().message + " (cached copy: delete " + c.dir.string() + " to refetch)");
  }
  arch->name = std::string(id);
  arch->hf_ids = {std::string(id)};
  ResolvedModel r{std::move(*arch), "hub", true, {}};
  std::error_code ec;
  if (fs::exists(c.meta(), ec)) {
    if (auto meta = read_small_file(c.meta(), 1024 * 1024)) {
      apply_meta(r, *meta);
    }
  }
  if (o.read_weights) {
    TRY(hf_detail::attach_hub_weights(r, http, o, id, c.dir, text));
  }
  return r;
}

Result<ResolvedModel> from_hub(HttpClient& http, const ResolveOptions& o, std::string_view id, const CacheEntry* cache)
{
  TRY_ASSIGN(const HttpResponse cfg, hub_get(http, o, id, "config.json"));
  const HttpProvider provider = [&http]() -> Result<HttpClient*> { return &http; };
  const fs::path cache_dir = cache != nullptr ? cache->dir : fs::path();
  if (cfg.status == 404 && o.read_weights) {
    // A GGUF repository has no config.json: its GGUF header describes the model.
    TRY_ASSIGN(auto gguf, hf_detail::gguf_repo_model(provider, o, id, cache_dir));
    if (gguf) {
      return std::move(*gguf);
    }
  }
  if (cfg.status != 200) {
    return std::unexpected(status_error(cfg, id, o));
  }
  const std::string url = o.endpoint + "/" + std::string(id) + "/resolve/main/config.json";
  TRY_ASSIGN(ModelArch arch, parse_model_config(cfg.body, url));
  arch.name = std::string(id);
  arch.hf_ids = {std::string(id)};
  ResolvedModel r{std::move(arch), "hub", false, {}};
  const std::uint64_t derived = r.arch.params;
  nlohmann::json meta = {{"id", std::string(id)}, {"source", url}, {"params_derived", derived}};
  bool exact_weights = false;
  if (o.read_weights) {
    TRY_ASSIGN(exact_weights, hf_detail::attach_hub_weights(r, provider, o, id, cache_dir, cfg.body));
  }
  auto index = exact_weights ? Result<HttpResponse>(HttpResponse{}) : hub_get(http, o, id, "model.safetensors.index.json");
  if (exact_weights) {
    // The headers gave the exact count (sizing/weights_from_headers.hpp); the index is not needed.
  } else if (index && index->status == 200) {
    auto exact = params_from_safetensors_index(index->body, r.arch.dtype);
    if (exact) {
      const double ratio = static_cast<double>(*exact) / static_cast<double>(derived);
      if (std::abs(ratio - 1.0) <= 0.10) {
        r.arch.params = *exact;
        meta["params"] = *exact;
      } else {
        r.warnings.push_back("the safetensors index of " + std::string(id) + " gives " + std::to_string(*exact) +
                             " parameters, " + std::to_string(static_cast<long long>(round_to_i64((ratio - 1.0) * 100))) +
                             "% off the architecture (quantized or extra weights?); using the derived " +
                             std::to_string(derived));
      }
    } else {
      r.warnings.push_back(exact.error().message + "; parameter count derived from the architecture");
    }
  } else if (index && (index->status == 401 || index->status == 403)) {
    return std::unexpected(status_error(*index, id, o));
  } else {
    r.warnings.push_back("no safetensors index for " + std::string(id) +
                         "; parameter count derived from the architecture (" + std::to_string(derived) + ")");
  }
  if (cache != nullptr) {
    const bool ok = write_atomically(cache->config(), cfg.body) && write_atomically(cache->meta(), meta.dump(2) + "\n");
    if (!ok) {
      r.warnings.push_back("cannot write the model cache under " + cache->dir.string() + "; it will be fetched again");
    }
  }
  return r;
}

}  // namespace

Error hub_status_error(const HttpResponse& resp, std::string_view id, const ResolveOptions& o)
{
  return status_error(resp, id, o);
}

bool is_hub_id(std::string_view spec) noexcept
{
  const auto slash = spec.find('/');
  if (slash == std::string_view::npos || spec.find('/', slash + 1) != std::string_view::npos) {
    return false;
  }
  return id_part_ok(spec.substr(0, slash)) && id_part_ok(spec.substr(slash + 1));
}

Result<std::uint64_t> params_from_safetensors_index(std::string_view index_json, std::string_view dtype)
{
  const auto j = nlohmann::json::parse(index_json.begin(), index_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return fail(Errc::invalid_input, "safetensors index: not a JSON object");
  }
  const auto meta = j.find("metadata");
  if (meta == j.end() || !meta->is_object()) {
    return fail(Errc::invalid_input, "safetensors index: no \"metadata\" object");
  }
  const auto total = meta->find("total_size");
  std::uint64_t bytes = 0;
  if (total != meta->end() && total->is_number_unsigned()) {
    bytes = total->get<std::uint64_t>();
  } else if (total != meta->end() && total->is_string()) {
    bytes = parse_u64(total->get<std::string>()).value_or(0);
  }
  if (bytes == 0) {
    return fail(Errc::invalid_input, "safetensors index: \"metadata.total_size\" is missing or not a positive integer");
  }
  const std::uint32_t per = dtype_bytes(dtype);
  if (per == 0) {
    return fail(Errc::invalid_input, "safetensors index: unknown dtype \"" + std::string(dtype) + "\"");
  }
  return bytes / per;
}

Result<ResolvedModel> resolve_model(std::string_view spec_in, const ResolveOptions& o, const HttpProvider& http)
{
  const std::string_view spec = trim(spec_in);
  if (!o.gguf.empty()) {
    return hf_detail::resolve_with_gguf(spec, o, http);
  }
  if (spec.empty()) {
    return fail(Errc::invalid_input, "model: the name is empty; pass a name from `gpurent models`, an HF id or a path");
  }
  if (const ModelArch* m = find_model_ptr(spec)) {
    return ResolvedModel{*m, "catalog", false, {}};
  }
  std::error_code ec;
  const fs::path as_path{std::string(spec)};
  if (looks_like_path(spec) || fs::exists(as_path, ec)) {
    if (!fs::exists(as_path, ec)) {
      return fail(Errc::not_found, "model " + std::string(spec) + ": no such file; pass the path of a config.json");
    }
    return hf_detail::resolve_local(as_path, o, http);
  }
  if (!is_hub_id(spec)) {
    return fail(Errc::not_found, "model " + std::string(spec) + ": not in the built-in catalogue and not an HF id "
                                 "(org/name); see `gpurent models`, or pass a path to a config.json");
  }
  const auto slash = spec.find('/');
  std::optional<CacheEntry> cache;
  if (!o.cache_dir.empty()) {
    // Hub ids are case-insensitive, so is the cache: <cache>/<org>/<name> in lower case.
    cache = CacheEntry{o.cache_dir / to_lower(spec.substr(0, slash)) / to_lower(spec.substr(slash + 1))};
    if (fs::exists(cache->config(), ec)) {
      return from_cache(*cache, spec, o, http);
    }
    if (o.offline && fs::exists(cache->dir / "files.json", ec)) {
      TRY_ASSIGN(auto gguf, hf_detail::gguf_repo_model(http, o, spec, cache->dir));  // a cached GGUF repository
      if (gguf) {
        return std::move(*gguf);
      }
    }
  }
  if (o.offline) {
    return fail(Errc::not_found, "model " + std::string(spec) + ": not in the built-in catalogue nor in the cache (" +
                                     (cache ? cache->dir.string() : std::string("no cache directory")) +
                                     "), and --offline forbids fetching it; run once without --offline, or pass a "
                                     "path to its config.json");
  }
  if (!http) {
    return fail(Errc::internal, "model " + std::string(spec) + ": no HTTP client to fetch it from the Hub");
  }
  TRY_ASSIGN(HttpClient* client, http());
  if (client == nullptr) {
    return fail(Errc::internal, "model " + std::string(spec) + ": no HTTP client to fetch it from the Hub");
  }
  return from_hub(*client, o, spec, cache ? &*cache : nullptr);
}

Result<ResolvedModel> resolve_model(std::string_view spec, const ResolveOptions& options, HttpClient* http)
{
  const HttpProvider provider = [http]() -> Result<HttpClient*> { return http; };
  return resolve_model(spec, options, provider);
}

}  // namespace gpurent
