// SPDX-License-Identifier: MIT
#include "providers/repo_weights.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <utility>

#include "sizing/gguf_model.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;

constexpr U k_first_read = 100 * 1024;          // most shard headers fit: one request per file
constexpr U k_first_gguf_read = 1024 * 1024;    // GGUF headers carry the tokenizer: megabytes
constexpr U k_max_index_bytes = 64ULL * 1024 * 1024;
constexpr U k_max_config_bytes = 16ULL * 1024 * 1024;

Error with_file(Error e, const RepoFiles& files, std::string_view file)
{
  e.message = files.where(file) + ": " + e.message;
  return e;
}

std::optional<U> size_of(const std::vector<RepoFile>& listing, std::string_view file)
{
  for (const auto& f : listing) {
    if (f.path == file) {
      return f.size;
    }
  }
  return std::nullopt;
}

bool listed(const std::vector<RepoFile>& listing, std::string_view file)
{
  return std::any_of(listing.begin(), listing.end(), [&](const RepoFile& f) { return f.path == file; });
}

std::string count_label(std::size_t n, std::string_view what)
{
  return std::to_string(n) + " " + std::string(what) + (n == 1 ? "" : "s");
}

Result<RepoWeights> read_gguf(RepoFiles& files, const std::vector<RepoFile>& listing, const std::vector<std::string>& chosen)
{
  RepoWeights out;
  std::optional<GgufHeader> first;
  std::vector<TensorEntry> tensors;
  U file_bytes = 0;
  for (const auto& f : chosen) {
    TRY_ASSIGN(GgufHeader h, read_gguf_header(files, f, size_of(listing, f)));
    auto entries = tensor_entries(h);
    tensors.insert(tensors.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
    file_bytes += h.data_offset + h.data_bytes;
    if (!first) {
      first = std::move(h);
    }
  }
  if (!first) {
    return out;
  }
  if (const GgufValue* split = first->find("split.count"); split != nullptr && split->as_u64() &&
                                                           *split->as_u64() != chosen.size()) {
    return fail(Errc::invalid_input, files.where(chosen.front()) + ": the file says it is one of " +
                                         std::to_string(*split->as_u64()) + " parts, but " +
                                         std::to_string(chosen.size()) + " were found");
  }
  TRY_ASSIGN(ModelArch arch, arch_from_gguf(*first, tensors, files.where(chosen.front())));
  arch.checkpoint->files = chosen;
  arch.checkpoint->file_bytes = file_bytes;
  arch.checkpoint->source = "GGUF header" + std::string(chosen.size() > 1 ? "s of " : " of ") +
                            (chosen.size() > 1 ? count_label(chosen.size(), "part") + " of " : std::string()) +
                            chosen.front();
  out.weights = arch.checkpoint;
  out.gguf_arch = std::move(arch);
  return out;
}

Result<RepoWeights> read_safetensors(RepoFiles& files, const std::vector<RepoFile>& listing, std::string_view config_json)
{
  RepoWeights out;
  std::vector<std::string> index_files;
  std::optional<U> index_total;
  if (listed(listing, "model.safetensors.index.json")) {
    TRY_ASSIGN(const std::string index, files.text("model.safetensors.index.json", k_max_index_bytes));
    auto names = files_of_safetensors_index(index);
    if (!names) {
      return std::unexpected(with_file(names.error(), files, "model.safetensors.index.json"));
    }
    index_files = std::move(*names);
    const auto j = nlohmann::json::parse(index, nullptr, false);
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object() &&
        j["metadata"].contains("total_size") && j["metadata"]["total_size"].is_number_unsigned()) {
      index_total = j["metadata"]["total_size"].get<U>();
    }
    for (const auto& f : index_files) {
      if (!listed(listing, f)) {
        return fail(Errc::invalid_input, files.where("model.safetensors.index.json") + " names " + f +
                                             ", which the repository does not have");
      }
    }
  }
  std::vector<std::string> names;
  for (const auto& f : listing) {
    names.push_back(f.path);
  }
  const auto chosen = safetensors_weight_files(names, index_files);
  if (chosen.empty()) {
    return out;
  }
  std::vector<TensorEntry> tensors;
  U file_bytes = 0;
  U data_bytes = 0;
  for (const auto& f : chosen) {
    TRY_ASSIGN(const SafetensorsHeader h, read_safetensors_header(files, f, size_of(listing, f)));
    auto entries = tensor_entries(h);
    tensors.insert(tensors.end(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
    file_bytes += h.file_bytes();
    data_bytes += h.data_bytes();
  }
  CheckpointWeights w = weights_from_safetensors(tensors, quant_hints_from_config(config_json));
  w.files = chosen;
  w.file_bytes = file_bytes;
  w.source = "safetensors header" + std::string(chosen.size() > 1 ? "s of " : " of ") +
             (chosen.size() > 1 ? count_label(chosen.size(), "file") : chosen.front());
  if (index_total && *index_total != data_bytes) {
    out.warnings.push_back("the safetensors index says " + std::to_string(*index_total) + " bytes of tensors, the "
                           "headers of its files " + std::to_string(data_bytes) + "; using the headers");
  }
  std::vector<std::string> others;
  for (const auto& n : names) {
    if (n.ends_with(".safetensors") && std::find(chosen.begin(), chosen.end(), n) == chosen.end() &&
        !n.starts_with("adapter_model")) {
      others.push_back(n);
    }
  }
  if (!others.empty()) {
    w.notes.push_back("not counted: " + others.front() + (others.size() > 1 ? " and " + std::to_string(others.size() - 1) + " more" : std::string()) +
                      " (not read by the loader" + std::string(index_files.empty() ? "" : ": not in the index") + ")");
  }
  out.weights = std::move(w);
  return out;
}

Result<void> read_adapter(RepoFiles& files, const std::vector<RepoFile>& listing, RepoWeights& out)
{
  if (!listed(listing, "adapter_model.safetensors") || !listed(listing, "adapter_config.json")) {
    return {};
  }
  TRY_ASSIGN(const std::string cfg, files.text("adapter_config.json", k_max_config_bytes));
  TRY_ASSIGN(const SafetensorsHeader h, read_safetensors_header(files, "adapter_model.safetensors",
                                                                size_of(listing, "adapter_model.safetensors")));
  auto a = adapter_from_safetensors(tensor_entries(h), cfg);
  if (!a) {
    return std::unexpected(with_file(a.error(), files, "adapter_config.json"));
  }
  out.adapter = std::move(*a);
  const auto j = nlohmann::json::parse(cfg, nullptr, false);
  if (j.is_object() && j.contains("base_model_name_or_path") && j["base_model_name_or_path"].is_string()) {
    out.adapter_base = j["base_model_name_or_path"].get<std::string>();
  }
  return {};
}

}  // namespace

Result<SafetensorsHeader> read_safetensors_header(RepoFiles& files, std::string_view file, std::optional<U> size)
{
  TRY_ASSIGN(Chunk first, files.range(file, 0, k_first_read));
  if (!size) {
    size = first.file_size;
  }
  auto n = safetensors_header_length(first.bytes, size);
  if (!n) {
    return std::unexpected(with_file(n.error(), files, file));
  }
  if (first.bytes.size() < 8 + *n) {
    const U have = first.bytes.size();
    TRY_ASSIGN(const Chunk rest, files.range(file, have, 8 + *n - have));
    first.bytes += rest.bytes;
    if (first.bytes.size() < 8 + *n) {
      return fail(Errc::invalid_input, files.where(file) + ": safetensors header: the file ends inside its " +
                                           std::to_string(*n) + "-byte header");
    }
  }
  auto h = parse_safetensors_header(std::string_view(first.bytes).substr(8, *n), size);
  if (!h) {
    return std::unexpected(with_file(h.error(), files, file));
  }
  return h;
}

Result<GgufHeader> read_gguf_header(RepoFiles& files, std::string_view file, std::optional<U> size)
{
  TRY_ASSIGN(Chunk c, files.range(file, 0, k_first_gguf_read));
  if (!size) {
    size = c.file_size;
  }
  GgufParseOptions o;
  o.keep_string_arrays = false;  // the vocabulary's length is needed, not its text
  for (int round = 0; round < 16; ++round) {
    auto p = parse_gguf_header(c.bytes, size, o);
    if (!p) {
      return std::unexpected(with_file(p.error(), files, file));
    }
    if (p->header) {
      return std::move(*p->header);
    }
    const U have = c.bytes.size();
    const U want = std::min<U>(std::max<U>(p->need, 2 * have), k_max_gguf_header);
    TRY_ASSIGN(const Chunk more, files.range(file, have, want - have));
    if (more.bytes.empty()) {
      return fail(Errc::invalid_input, files.where(file) + ": GGUF header: the file ends inside its header");
    }
    c.bytes += more.bytes;
  }
  return fail(Errc::invalid_input, files.where(file) + ": GGUF header: still incomplete after 16 reads");
}

Result<RepoWeights> read_repo_weights(RepoFiles& files, const std::vector<RepoFile>& listing,
                                      const WeightsRequest& request, std::string_view config_json)
{
  RepoWeights out;
  std::vector<std::string> names;
  bool safetensors = false;
  for (const auto& f : listing) {
    names.push_back(f.path);
    safetensors = safetensors || (f.path.ends_with(".safetensors") && !f.path.starts_with("adapter_model"));
  }
  const auto ggufs = gguf_models(names);
  if (!request.gguf_file.empty()) {
    if (!listed(listing, request.gguf_file)) {
      return fail(Errc::not_found, files.where(request.gguf_file) + ": no such file in the repository");
    }
    // A part of a split file stands for all of its parts.
    std::vector<std::string> chosen{request.gguf_file};
    for (const auto& m : ggufs) {
      if (std::find(m.files.begin(), m.files.end(), request.gguf_file) != m.files.end()) {
        chosen = m.files;
      }
    }
    TRY_ASSIGN(out, read_gguf(files, listing, chosen));
  } else if (!ggufs.empty() && (request.prefer_gguf || !safetensors)) {
    TRY_ASSIGN(const GgufChoice choice, choose_gguf(names, request.gguf_type, "the repository"));
    TRY_ASSIGN(out, read_gguf(files, listing, choice.files));
    out.warnings.insert(out.warnings.end(), choice.notes.begin(), choice.notes.end());
  } else if (safetensors) {
    TRY_ASSIGN(out, read_safetensors(files, listing, config_json));
  }
  TRY(read_adapter(files, listing, out));
  return out;
}

void apply_weights(ModelArch& arch, CheckpointWeights weights)
{
  if (weights.total_params() > 0) {
    arch.params = weights.total_params();
  }
  arch.extra_params = weights.outside_text_params;
  std::erase_if(arch.approximate, [](const ModelArch::Approximation& a) { return a.part == "params"; });
  arch.checkpoint = std::move(weights);
}

}  // namespace gpurent
