// SPDX-License-Identifier: MIT
// Which of a repository's files hold the weights a loader reads (pure: names in, names out).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/text.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {
namespace {

std::string_view basename(std::string_view path)
{
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool safe_repo_path(std::string_view p)
{
  if (p.empty() || p.size() > 1000 || p.front() == '/' || p.find('\\') != std::string_view::npos) {
    return false;
  }
  for (const auto part : split(p, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
  }
  return true;
}

namespace {

bool ends_with_ci(std::string_view s, std::string_view suffix)
{
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

// "name-00001-of-00003.gguf" -> {"name", 1, 3}; nullopt for an unsplit name.
struct SplitName {
  std::string stem;
  std::uint64_t part = 0;
  std::uint64_t of = 0;
};
std::optional<SplitName> split_name(std::string_view path)
{
  // …-NNNNN-of-MMMMM.gguf
  constexpr std::size_t k_tail = 20;  // "-00001-of-00003.gguf"
  if (path.size() <= k_tail) {
    return std::nullopt;
  }
  const std::string_view tail = path.substr(path.size() - k_tail);
  const auto digits = [](std::string_view s) { return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || !iequals(tail.substr(15), ".gguf") ||
      !digits(tail.substr(1, 5)) || !digits(tail.substr(10, 5))) {
    return std::nullopt;
  }
  SplitName s{std::string(path.substr(0, path.size() - k_tail)), *parse_u64(tail.substr(1, 5)), *parse_u64(tail.substr(10, 5))};
  if (s.part == 0 || s.of == 0 || s.part > s.of) {
    return std::nullopt;
  }
  return s;
}

// The quant type a GGUF file name shows ("Llama-3.1-8B-Instruct-Q4_K_M.gguf" -> "Q4_K_M"): the
// longest llama.cpp type name standing between separators.
std::string type_in_name(std::string_view path)
{
  static constexpr std::array<std::string_view, 40> k_types{
      "MXFP4_MOE", "IQ2_XXS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M",
      "IQ2_XS", "IQ3_XS", "IQ4_NL", "IQ4_XS", "Q2_K_S", "IQ1_S", "IQ1_M", "IQ2_S", "IQ2_M", "IQ3_S",
      "IQ3_M", "TQ1_0", "TQ2_0", "NVFP4", "MXFP4", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
      "Q2_K", "Q6_K", "Q1_0", "BF16", "F16", "F32", "Q3_K", "Q4_K", "Q5_K", "Q8_K"};
  std::string up = to_lower(basename(path));
  for (char& c : up) {
    c = c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  const auto sep = [](char c) { return c == '_' || c == '.' || c == '/'; };
  std::string best;
  for (const auto t : k_types) {
    for (std::size_t at = up.find(t); at != std::string::npos; at = up.find(t, at + 1)) {
      const bool left = at == 0 || sep(up[at - 1]);
      const bool right = at + t.size() == up.size() || sep(up[at + t.size()]);
      if (left && right && t.size() > best.size()) {
        best = std::string(t);
      }
    }
  }
  return best;
}

std::string fold_type(std::string_view t)
{
  std::string s = to_lower(trim(t));
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace

Result<std::vector<std::string>> files_of_safetensors_index(std::string_view index_json)
{
  const auto j = nlohmann::json::parse(index_json.begin(), index_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return fail(Errc::invalid_input, "safetensors index: not a JSON object");
  }
  const auto map = j.find("weight_map");
  if (map == j.end() || !map->is_object()) {
    return fail(Errc::invalid_input, "safetensors index: no \"weight_map\" object");
  }
  std::set<std::string> files;
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string() || !safe_repo_path(file.get<std::string>())) {
      return fail(Errc::invalid_input, "safetensors index: tensor \"" + tensor.substr(0, 120) +
                                           "\" maps to something that is not a relative file name");
    }
    files.insert(file.get<std::string>());
    if (files.size() > 100'000) {
      return fail(Errc::invalid_input, "safetensors index: more than 100,000 files");
    }
  }
  return std::vector<std::string>(files.begin(), files.end());
}

std::vector<std::string> safetensors_weight_files(const std::vector<std::string>& listing,
                                                  const std::vector<std::string>& index_files)
{
  if (!index_files.empty()) {
    return index_files;
  }
  if (std::find(listing.begin(), listing.end(), "model.safetensors") != listing.end()) {
    return {"model.safetensors"};
  }
  std::vector<std::string> out;
  for (const auto& f : listing) {
    const std::string_view name = f;
    if (name.find('/') != std::string_view::npos || !ends_with_ci(name, ".safetensors") ||
        name.starts_with("consolidated") || name.starts_with("adapter_model")) {
      continue;
    }
    out.push_back(f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<GgufChoice> gguf_models(const std::vector<std::string>& listing)
{
  std::map<std::string, GgufChoice> groups;  // by stem (split) or whole name
  std::map<std::string, std::map<std::uint64_t, std::string>> shards;
  std::map<std::string, std::uint64_t> expected;
  for (const auto& f : listing) {
    if (!ends_with_ci(f, ".gguf") || to_lower(basename(f)).starts_with("mmproj") || !safe_repo_path(f)) {
      continue;
    }
    if (const auto s = split_name(f)) {
      const std::string key = s->stem + "-of-" + std::to_string(s->of);
      shards[key][s->part] = f;
      expected[key] = s->of;
    } else {
      groups[f] = GgufChoice{{f}, type_in_name(f), {}};
    }
  }
  for (const auto& [key, parts] : shards) {
    GgufChoice c;
    for (const auto& [part, file] : parts) {
      c.files.push_back(file);
    }
    c.type = type_in_name(parts.begin()->second);
    if (parts.size() != expected[key] || parts.rbegin()->first != expected[key]) {
      c.notes.push_back("only " + std::to_string(parts.size()) + " of the " + std::to_string(expected[key]) +
                        " parts of " + key + " are in the repository");
    }
    groups[key] = std::move(c);
  }
  std::vector<GgufChoice> out;
  for (auto& [key, c] : groups) {
    out.push_back(std::move(c));
  }
  return out;
}

Result<GgufChoice> choose_gguf(const std::vector<std::string>& listing, std::string_view type, std::string_view where)
{
  const auto models = gguf_models(listing);
  if (models.empty()) {
    return fail(Errc::not_found, std::string(where) + " has no .gguf file; pass one with --gguf FILE|URL, or size "
                                                      "its safetensors with --engine vllm or transformers");
  }
  std::string types;
  for (const auto& m : models) {
    types += (types.empty() ? "" : ", ") + (m.type.empty() ? m.files.front() : m.type);
  }
  std::vector<const GgufChoice*> hits;
  const std::string want = fold_type(type.empty() ? "Q4_K_M" : type);
  for (const auto& m : models) {
    if (fold_type(m.type) == want) {
      hits.push_back(&m);
    }
  }
  if (type.empty() && models.size() == 1) {
    return models.front();
  }
  if (hits.empty()) {
    if (type.empty()) {
      return fail(Errc::not_found, std::string(where) + " has several GGUF files (" + types +
                                       "); choose one with --weights TYPE or --gguf FILE");
    }
    return fail(Errc::not_found, std::string(where) + " has no " + std::string(type) + " GGUF file; it has " + types +
                                     "; choose one with --weights TYPE or --gguf FILE");
  }
  if (hits.size() > 1) {
    std::string names;
    for (const auto* h : hits) {
      names += (names.empty() ? "" : ", ") + h->files.front();
    }
    return fail(Errc::not_found, std::string(where) + " has several " + hits.front()->type + " GGUF files (" + names +
                                     "); choose one with --gguf FILE");
  }
  GgufChoice c = *hits.front();
  if (type.empty()) {
    c.notes.push_back(std::string(where) + " has several GGUF files (" + types + "); sized " + c.type +
                      " (ollama's default); choose another with --weights TYPE");
  }
  return c;
}

}  // namespace gpurent
