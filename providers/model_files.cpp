// SPDX-License-Identifier: MIT
// The parts of resolve_model that read a model's own files: local checkpoint and adapter
// directories, .gguf files, the Hub repository's weights' headers, --gguf (docs/models.md).
#include <algorithm>
#include <system_error>
#include <utility>

#include "common/text.hpp"
#include "providers/hf_files.hpp"
#include "providers/hf_resolve_detail.hpp"
#include "providers/repo_weights.hpp"
#include "sizing/model_config.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent::hf_detail {
namespace {

namespace fs = std::filesystem;

WeightsRequest request_from(const ResolveOptions& o)
{
  return WeightsRequest{o.prefer_gguf, o.gguf_type, {}};
}

bool blocking(const Error& e) { return e.code == Errc::unauthorized; }

std::vector<std::string> names_of(const std::vector<RepoFile>& listing)
{
  std::vector<std::string> out;
  for (const auto& f : listing) {
    out.push_back(f.path);
  }
  return out;
}

bool has(const std::vector<RepoFile>& listing, std::string_view file)
{
  return std::any_of(listing.begin(), listing.end(), [&](const RepoFile& f) { return f.path == file; });
}

// A model from the GGUF header alone, named after general.name, else the file.
ResolvedModel from_gguf_arch(RepoWeights&& w, std::string kind, std::string fallback_name)
{
  ModelArch arch = std::move(*w.gguf_arch);
  if (arch.name.empty()) {
    arch.name = std::move(fallback_name);
  }
  return ResolvedModel{std::move(arch), std::move(kind), false, std::move(w.warnings)};
}

void mismatch_warning(ResolvedModel& r, const ModelArch& gguf, std::string_view what)
{
  if (gguf.layers != r.arch.layers || gguf.hidden != r.arch.hidden) {
    r.warnings.push_back(std::string(what) + " describes " + std::to_string(gguf.layers) + " layers of width " +
                         std::to_string(gguf.hidden) + ", " + r.arch.name + " has " + std::to_string(r.arch.layers) +
                         " of " + std::to_string(r.arch.hidden) + "; is it the same model?");
  }
}

void drop_derived_warning(ResolvedModel& r)
{
  std::erase_if(r.warnings, [](const std::string& w) { return w.find("derived from its architecture") != std::string::npos; });
}

fs::path cache_dir_for(const ResolveOptions& o, std::string_view id)
{
  const auto slash = id.find('/');
  if (o.cache_dir.empty() || slash == std::string_view::npos) {
    return {};
  }
  return o.cache_dir / to_lower(id.substr(0, slash)) / to_lower(id.substr(slash + 1));
}

// A LoRA adapter (adapter_config.json + adapter_model.safetensors, no config.json), in a local
// directory (`dir`) or a Hub repository (`hub_id`): the base model it names, resolved as any
// model, with the adapter's exact parameters attached.
struct AdapterPlace {
  fs::path dir;        // a local directory, or empty
  std::string hub_id;  // a Hub repository, or empty
  [[nodiscard]] std::string label() const { return hub_id.empty() ? dir.string() : hub_id; }
};

Result<ResolvedModel> adapter_model(RepoFiles& files, const std::vector<RepoFile>& listing, const AdapterPlace& at,
                                    const ResolveOptions& o, const HttpProvider& http)
{
  const std::string config = at.hub_id.empty() ? (at.dir / "adapter_config.json").string() : at.hub_id + "/adapter_config.json";
  TRY_ASSIGN(RepoWeights w, read_repo_weights(files, listing, WeightsRequest{}, ""));
  if (!w.adapter || !w.adapter_base || trim(*w.adapter_base).empty()) {
    return fail(Errc::invalid_input, config + ": no \"base_model_name_or_path\"; pass the base model's name and the "
                                              "adapter's rank with --lora-rank instead");
  }
  std::string base = std::string(trim(*w.adapter_base));
  if (at.hub_id.empty() && (base.starts_with("./") || base.starts_with("../"))) {
    base = (at.dir / base).lexically_normal().string();
  }
  std::error_code ec;
  if ((at.hub_id.empty() && fs::equivalent(fs::path(base), at.dir, ec)) ||
      (!at.hub_id.empty() && normalize_key(base) == normalize_key(at.hub_id))) {
    return fail(Errc::invalid_input, config + ": the base model is the adapter itself");
  }
  if (o.resolving_adapter_base) {
    return fail(Errc::invalid_input, config + ": the base model of an adapter is itself an adapter; merge the first "
                                              "adapter into its base, or name a plain model");
  }
  ResolveOptions for_base = o;
  for_base.gguf.clear();
  for_base.resolving_adapter_base = true;
  auto resolved = resolve_model(base, for_base, http);
  if (!resolved) {
    Error e = resolved.error();
    e.message = "the base model of the adapter in " + at.label() + ": " + e.message;
    return std::unexpected(e);
  }
  ResolvedModel r = std::move(*resolved);
  const bool base_is_local = r.source_kind == "file";
  r.warnings.insert(r.warnings.end(), w.warnings.begin(), w.warnings.end());
  if (r.arch.hf_ids.empty() && !base_is_local) {
    r.arch.hf_ids.push_back(base);
  }
  r.arch.adapter = std::move(w.adapter);
  if (at.hub_id.empty()) {
    r.arch.name = at.dir.filename().empty() ? at.dir.parent_path().filename().string() : at.dir.filename().string();
    r.source_kind = "file";
  } else {
    r.arch.name = at.hub_id;
    r.source_kind = "hub";
  }
  return r;
}

Result<ResolvedModel> adapter_dir(const fs::path& dir, const std::vector<RepoFile>& listing, const ResolveOptions& o,
                                  const HttpProvider& http)
{
  auto files = local_repo_files(dir);
  return adapter_model(*files, listing, AdapterPlace{dir, ""}, o, http);
}

}  // namespace

Result<ResolvedModel> resolve_local(const fs::path& path, const ResolveOptions& o, const HttpProvider& http)
{
  std::error_code ec;
  const bool is_dir = fs::is_directory(path, ec);
  const std::string name = path.filename().string();
  if (!is_dir && name.size() > 5 && iequals(std::string_view(name).substr(name.size() - 5), ".gguf")) {
    auto files = local_repo_files(path.parent_path().empty() ? fs::path(".") : path.parent_path());
    TRY_ASSIGN(const auto listing, files->listing());
    TRY_ASSIGN(RepoWeights w, read_repo_weights(*files, listing, WeightsRequest{false, {}, name}, ""));
    return from_gguf_arch(std::move(w), "file", path.stem().string());
  }
  const fs::path dir = is_dir ? path : path.parent_path();
  const bool config_here = is_dir ? fs::exists(path / "config.json", ec) : name == "config.json";
  std::vector<RepoFile> listing;
  if (is_dir || (config_here && o.read_weights)) {
    auto files = local_repo_files(dir.empty() ? fs::path(".") : dir);
    TRY_ASSIGN(listing, files->listing());
  }
  if (is_dir && !config_here) {
    if (has(listing, "adapter_config.json")) {
      return adapter_dir(path, listing, o, http);
    }
    if (!gguf_models(names_of(listing)).empty()) {
      auto files = local_repo_files(path);
      WeightsRequest req = request_from(o);
      req.prefer_gguf = true;
      TRY_ASSIGN(RepoWeights w, read_repo_weights(*files, listing, req, ""));
      return from_gguf_arch(std::move(w), "file", path.filename().string());
    }
    return fail(Errc::not_found, "model " + path.string() + ": no config.json, adapter_config.json or .gguf file in "
                                                            "this directory; pass a checkpoint directory or a config.json");
  }
  TRY_ASSIGN(ResolvedModel r, model_from_config_file(path));
  if (!config_here || !o.read_weights) {
    return r;
  }
  auto files = local_repo_files(dir.empty() ? fs::path(".") : dir);
  TRY_ASSIGN(const std::string config, read_small_file(dir / "config.json", k_max_model_config_bytes));
  auto w = read_repo_weights(*files, listing, request_from(o), config);
  if (!w) {
    r.warnings.push_back("cannot read the weights in " + dir.string() + ": " + w.error().message +
                         "; parameter count derived from the architecture");
    return r;
  }
  r.warnings.insert(r.warnings.end(), w->warnings.begin(), w->warnings.end());
  if (w->weights) {
    if (w->gguf_arch) {
      mismatch_warning(r, *w->gguf_arch, "the GGUF file");
    }
    apply_weights(r.arch, std::move(*w->weights));
    drop_derived_warning(r);
  }
  if (w->adapter) {
    r.arch.adapter = std::move(w->adapter);
  }
  return r;
}

Result<bool> attach_hub_weights(ResolvedModel& r, const HttpProvider& http, const ResolveOptions& o, std::string_view id,
                                const fs::path& cache_dir, std::string_view config_json)
{
  auto files = hub_repo_files(http, o, std::string(id), cache_dir);
  auto listing = files->listing();
  if (!listing) {
    if (blocking(listing.error())) {
      return std::unexpected(listing.error());
    }
    if (listing.error().code != Errc::not_found) {  // an endpoint without the API: the index path follows
      r.warnings.push_back("no file list for " + std::string(id) + " (" + listing.error().message +
                           "); weights not read from the files");
    }
    return false;
  }
  auto w = read_repo_weights(*files, *listing, request_from(o), config_json);
  if (!w) {
    if (blocking(w.error())) {
      return std::unexpected(w.error());
    }
    r.warnings.push_back("cannot read the weights' headers of " + std::string(id) + ": " + w.error().message);
    return false;
  }
  r.warnings.insert(r.warnings.end(), w->warnings.begin(), w->warnings.end());
  if (!w->weights) {
    return false;
  }
  if (w->gguf_arch) {
    mismatch_warning(r, *w->gguf_arch, "the GGUF file");
  }
  apply_weights(r.arch, std::move(*w->weights));
  r.arch.checkpoint->hub_repo = std::string(id);
  return true;
}

Result<std::optional<ResolvedModel>> gguf_repo_model(const HttpProvider& http, const ResolveOptions& o,
                                                     std::string_view id, const fs::path& cache_dir)
{
  auto files = hub_repo_files(http, o, std::string(id), cache_dir);
  auto listing = files->listing();
  if (!listing) {
    if (blocking(listing.error())) {
      return std::unexpected(listing.error());
    }
    return std::optional<ResolvedModel>{};
  }
  if (has(*listing, "adapter_config.json") && has(*listing, "adapter_model.safetensors")) {
    // A LoRA adapter repository: the base model it names, with the adapter attached.
    TRY_ASSIGN(ResolvedModel adapter, adapter_model(*files, *listing, AdapterPlace{{}, std::string(id)}, o, http));
    return std::optional<ResolvedModel>(std::move(adapter));
  }
  if (gguf_models(names_of(*listing)).empty()) {
    return std::optional<ResolvedModel>{};
  }
  WeightsRequest req = request_from(o);
  req.prefer_gguf = true;
  TRY_ASSIGN(RepoWeights w, read_repo_weights(*files, *listing, req, ""));
  if (!w.gguf_arch) {
    return std::optional<ResolvedModel>{};
  }
  ResolvedModel r = from_gguf_arch(std::move(w), "hub", std::string(id));
  r.arch.name = std::string(id);
  r.arch.hf_ids = {std::string(id)};
  if (r.arch.checkpoint) {
    r.arch.checkpoint->hub_repo = std::string(id);
  }
  return std::optional<ResolvedModel>(std::move(r));
}

Result<ResolvedModel> resolve_with_gguf(std::string_view spec, const ResolveOptions& o, const HttpProvider& http)
{
  const std::string& g = o.gguf;
  std::unique_ptr<RepoFiles> files;
  std::string file;
  std::string kind = "file";
  std::string repo;  // the Hub repository the file belongs to (none for a URL or a local file)
  std::error_code ec;
  if (g.starts_with("http://") || g.starts_with("https://")) {
    files = url_file(http, o, g);
    kind = "hub";
  } else if (fs::is_regular_file(fs::path(g), ec)) {
    const fs::path p(g);
    files = local_repo_files(p.parent_path().empty() ? fs::path(".") : p.parent_path());
    file = p.filename().string();
  } else if (is_hub_id(spec) && safe_repo_path(g)) {
    files = hub_repo_files(http, o, std::string(spec), cache_dir_for(o, spec));
    file = g;
    kind = "hub";
    repo = std::string(spec);
  } else {
    return fail(Errc::not_found, "--gguf " + g + ": no such file, not a URL, and not a file of a Hub MODEL; pass a "
                                                 "local .gguf, an https:// URL, or MODEL org/name with a file of it");
  }
  TRY_ASSIGN(const auto listing, files->listing());
  if (file.empty()) {
    file = listing.front().path;
  }
  TRY_ASSIGN(RepoWeights w, read_repo_weights(*files, listing, WeightsRequest{false, {}, file}, ""));
  if (!w.gguf_arch || !w.weights) {
    return fail(Errc::invalid_input, "--gguf " + g + ": no GGUF model in it");
  }
  if (spec.empty()) {
    return from_gguf_arch(std::move(w), kind, fs::path(file).stem().string());
  }
  ResolveOptions for_model = o;
  for_model.gguf.clear();
  for_model.read_weights = false;  // the GGUF file is the weights
  auto resolved = resolve_model(spec, for_model, http);
  if (!resolved && resolved.error().code == Errc::not_found && kind == "hub" && !file.empty() && is_hub_id(spec)) {
    // A GGUF repository without config.json: the file of it describes the model.
    ResolvedModel r = from_gguf_arch(std::move(w), "hub", std::string(spec));
    r.arch.name = std::string(spec);
    r.arch.hf_ids = {std::string(spec)};
    if (r.arch.checkpoint) {
      r.arch.checkpoint->hub_repo = repo;
    }
    return r;
  }
  TRY_ASSIGN(ResolvedModel r, std::move(resolved));
  mismatch_warning(r, *w.gguf_arch, "--gguf " + file);
  r.warnings.insert(r.warnings.end(), w.warnings.begin(), w.warnings.end());
  apply_weights(r.arch, std::move(*w.weights));
  r.arch.checkpoint->hub_repo = repo;
  drop_derived_warning(r);
  return r;
}

}  // namespace gpurent::hf_detail
