// SPDX-License-Identifier: MIT
// Reads and writes catalogue models in data/models.json's shape (sizing/model_data.hpp). One
// table of fields drives the reader and the writer, so the two cannot disagree about a key.
#include "sizing/model_data.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "common/text.hpp"

namespace gpurent {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

using ModelMember = std::variant<std::string ModelArch::*, std::vector<std::string> ModelArch::*,
                                 std::uint64_t ModelArch::*, std::uint32_t ModelArch::*, bool ModelArch::*>;
using Quantized = ModelArch::QuantizedCheckpoint;
using QuantMember = std::variant<std::string Quantized::*, std::vector<std::string> Quantized::*,
                                 std::uint64_t Quantized::*, std::uint32_t Quantized::*, bool Quantized::*>;

template <class Member>
struct Field {
  const char* key;
  Member member;
  bool required = false;  // in data/models.json and in a new model of the config file
};

// In the file's order. `quantized` (a list of QuantizedCheckpoint) and `notes` (text for people,
// not read into ModelArch) are handled beside the table.
const Field<ModelMember> k_fields[] = {
    {"name", &ModelArch::name, true},
    {"hf_ids", &ModelArch::hf_ids},
    {"aliases", &ModelArch::aliases},
    {"family", &ModelArch::family, true},
    {"params", &ModelArch::params},
    {"extra_params", &ModelArch::extra_params},
    {"layers", &ModelArch::layers, true},
    {"hidden", &ModelArch::hidden, true},
    {"heads", &ModelArch::heads, true},
    {"kv_heads", &ModelArch::kv_heads, true},
    {"head_dim", &ModelArch::head_dim},
    {"intermediate", &ModelArch::intermediate},
    {"vocab", &ModelArch::vocab, true},
    {"tied_embeddings", &ModelArch::tied_embeddings},
    {"max_context", &ModelArch::max_context, true},
    {"experts", &ModelArch::experts},
    {"experts_active", &ModelArch::experts_active},
    {"moe_intermediate", &ModelArch::moe_intermediate},
    {"shared_experts", &ModelArch::shared_experts},
    {"dense_layers", &ModelArch::dense_layers},
    {"sliding_window", &ModelArch::sliding_window},
    {"global_layers", &ModelArch::global_layers},
    {"kv_free_layers", &ModelArch::kv_free_layers},
    {"kv_lora_rank", &ModelArch::kv_lora_rank},
    {"q_lora_rank", &ModelArch::q_lora_rank},
    {"qk_rope_head_dim", &ModelArch::qk_rope_head_dim},
    {"qk_nope_head_dim", &ModelArch::qk_nope_head_dim},
    {"v_head_dim", &ModelArch::v_head_dim},
    {"qkv_bias", &ModelArch::qkv_bias},
    {"o_bias", &ModelArch::o_bias},
    {"mlp_bias", &ModelArch::mlp_bias},
    {"gated_mlp", &ModelArch::gated_mlp},
    {"qk_norm", &ModelArch::qk_norm},
    {"norm_bias", &ModelArch::norm_bias},
    {"attention_sinks", &ModelArch::attention_sinks},
    {"router_bias", &ModelArch::router_bias},
    {"norms_per_layer", &ModelArch::norms_per_layer},
    {"mxfp4_experts", &ModelArch::mxfp4_experts},
    {"dtype", &ModelArch::dtype},
    {"quant_method", &ModelArch::quant_method},
    {"quant_bits", &ModelArch::quant_bits},
    {"quant_float", &ModelArch::quant_float},
    {"quant_block_n", &ModelArch::quant_block_n},
    {"quant_block_k", &ModelArch::quant_block_k},
    {"quant_skip", &ModelArch::quant_skip},
    {"quant_skip_linear", &ModelArch::quant_skip_linear},
    {"quant_skip_experts", &ModelArch::quant_skip_experts},
    {"ollama_tag", &ModelArch::ollama_tag},
    {"ollama_quant", &ModelArch::ollama_quant},
    {"torchtune", &ModelArch::torchtune},
    {"torchtune_kinds", &ModelArch::torchtune_kinds},
    {"source", &ModelArch::source},
};

const Field<QuantMember> k_quant_fields[] = {
    {"hf_id", &Quantized::hf_id, true},
    {"quant_method", &Quantized::quant_method, true},
    {"quant_bits", &Quantized::quant_bits},
    {"intermediate", &Quantized::intermediate},
    {"block", &Quantized::block},
    {"skip", &Quantized::skip},
    {"skip_linear", &Quantized::skip_linear},
    {"skip_experts", &Quantized::skip_experts},
};

constexpr const char* k_quantized = "quantized";
constexpr const char* k_notes = "notes";

Error bad(const std::string& where, const std::string& what) { return Error{Errc::invalid_input, where + ": " + what}; }

template <class Member, std::size_t N>
Result<void> only_keys(const json& obj, const Field<Member> (&fields)[N], std::initializer_list<const char*> extra,
                       const std::string& where)
{
  for (const auto& item : obj.items()) {
    const std::string& k = item.key();
    bool known = false;
    for (const auto& f : fields) {
      known = known || k == f.key;
    }
    for (const char* e : extra) {
      known = known || k == e;
    }
    if (!known) {
      std::string list;
      for (const auto& f : fields) {
        list += (list.empty() ? "" : ", ") + std::string(f.key);
      }
      for (const char* e : extra) {
        list += std::string(", ") + e;
      }
      return std::unexpected(bad(where + "." + k.substr(0, 60), "unknown key; the keys are " + list));
    }
  }
  return {};
}

// A whole number from 0 to `max`: JSON integers only (1.0 and 1e3 are refused: the file keeps
// exact counts).
Result<std::uint64_t> whole(const json& v, const std::string& where, std::uint64_t max)
{
  const std::string range = "must be a whole number from 0 to " + std::to_string(max);
  if (v.is_number_unsigned()) {
    const auto n = v.get<std::uint64_t>();
    if (n > max) {
      return std::unexpected(bad(where, range));
    }
    return n;
  }
  if (v.is_number_integer()) {  // negative
    return std::unexpected(bad(where, range));
  }
  return std::unexpected(bad(where, range + (v.is_number_float() ? " (no decimal point)" : "")));
}

// Reads one key into `out` through the table's member pointer.
template <class T, class Member>
Result<void> read_field(const json& v, const Member& member, T& out, const std::string& where)
{
  return std::visit(
      [&](auto ptr) -> Result<void> {
        using V = std::remove_reference_t<decltype(out.*ptr)>;
        if constexpr (std::is_same_v<V, std::string>) {
          if (!v.is_string()) {
            return std::unexpected(bad(where, "must be a string"));
          }
          out.*ptr = v.get<std::string>();
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          if (!v.is_array()) {
            return std::unexpected(bad(where, "must be a list of strings"));
          }
          V list;
          for (const auto& s : v) {
            if (!s.is_string() || trim(s.get<std::string>()).empty()) {
              return std::unexpected(bad(where, "must be a list of non-empty strings"));
            }
            list.push_back(s.get<std::string>());
          }
          out.*ptr = std::move(list);
        } else if constexpr (std::is_same_v<V, bool>) {
          if (!v.is_boolean()) {
            return std::unexpected(bad(where, "must be true or false"));
          }
          out.*ptr = v.get<bool>();
        } else {
          TRY_ASSIGN(const std::uint64_t n, whole(v, where, std::numeric_limits<V>::max()));
          out.*ptr = static_cast<V>(n);
        }
        return {};
      },
      member);
}

Result<Quantized> quantized_from(const json& j, const std::string& where)
{
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be an object with hf_id and quant_method"));
  }
  TRY(only_keys(j, k_quant_fields, {}, where));
  Quantized q;
  for (const auto& f : k_quant_fields) {
    const auto it = j.find(f.key);
    if (it == j.end()) {
      if (f.required) {
        return std::unexpected(bad(where + "." + f.key, "missing"));
      }
      continue;
    }
    TRY(read_field(*it, f.member, q, where + "." + f.key));
  }
  if (q.hf_id.empty() || q.quant_method.empty()) {
    return std::unexpected(bad(where, "hf_id and quant_method must not be empty"));
  }
  return q;
}

bool plain_name(std::string_view s) { return !s.empty() && printable_ascii(s) && s.find(' ') == std::string_view::npos; }

// The sizes must describe a model the estimate can size (no zero heads, no more global layers
// than layers): the checks a generic config.json read makes too.
Result<void> check_shape(const ModelArch& m, const std::string& where)
{
  const auto need = [&](bool ok, const char* key, const std::string& what) -> Result<void> {
    if (!ok) {
      return std::unexpected(bad(where + "." + key, what));
    }
    return {};
  };
  TRY(need(m.layers > 0 && m.layers <= 10'000, "layers", "must be from 1 to 10000"));
  TRY(need(m.hidden > 0, "hidden", "must be above 0"));
  TRY(need(m.heads > 0, "heads", "must be above 0"));
  TRY(need(m.kv_heads > 0 && m.kv_heads <= m.heads, "kv_heads", "must be from 1 to heads"));
  TRY(need(m.head_dim > 0 || m.kv_lora_rank > 0, "head_dim", "must be above 0 (it may be left out with kv_lora_rank)"));
  TRY(need(m.vocab > 0, "vocab", "must be above 0"));
  TRY(need(m.max_context > 0, "max_context", "must be above 0"));
  TRY(need(m.global_layers <= m.layers, "global_layers", "must be at most layers"));
  TRY(need(m.dense_layers <= m.layers, "dense_layers", "must be at most layers"));
  TRY(need(m.kv_free_layers <= m.layers, "kv_free_layers", "must be at most layers"));
  TRY(need(m.experts_active <= m.experts, "experts_active", "must be at most experts"));
  TRY(need(m.experts <= 1 || (m.experts_active > 0 && m.moe_intermediate > 0), "experts",
           "a mixture of experts needs experts_active and moe_intermediate"));
  TRY(need(m.experts > 1 || m.intermediate > 0, "intermediate", "must be above 0 for a dense model"));
  TRY(need(m.norms_per_layer <= 16, "norms_per_layer", "must be at most 16"));
  TRY(need(m.extra_params <= m.params || m.params == 0, "extra_params", "must be at most params"));
  return {};
}

// One entry. `from_file`: an entry of data/models.json (params and source required).
Result<ModelArch> model_from(const json& j, std::string where, bool from_file)
{
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be an object"));
  }
  const auto name = j.find("name");
  if (name == j.end() || !name->is_string() || !plain_name(name->get<std::string>())) {
    return std::unexpected(bad(where + ".name", "must be a plain name such as `llama-3.1-8b`"));
  }
  where = "model " + name->get<std::string>().substr(0, 80);
  TRY(only_keys(j, k_fields, {k_quantized, k_notes}, where));
  ModelArch m;
  for (const auto& f : k_fields) {
    const auto it = j.find(f.key);
    if (it == j.end()) {
      const bool needed = f.required || (from_file && (std::string_view(f.key) == "params" ||
                                                       std::string_view(f.key) == "source"));
      if (needed) {
        return std::unexpected(bad(where + "." + f.key, "missing"));
      }
      continue;
    }
    TRY(read_field(*it, f.member, m, where + "." + f.key));
  }
  if (!j.contains("global_layers")) {
    m.global_layers = m.layers;  // every layer attends globally unless the entry says otherwise
  }
  if (from_file && m.params == 0) {
    return std::unexpected(bad(where + ".params", "must be the published parameter count, above 0"));
  }
  if (from_file && !m.source.starts_with("https://")) {
    return std::unexpected(bad(where + ".source", "must be the https:// URL of the config.json read"));
  }
  if (const auto it = j.find(k_notes); it != j.end() && !it->is_string()) {
    return std::unexpected(bad(where + ".notes", "must be a string"));
  }
  if (const auto it = j.find(k_quantized); it != j.end()) {
    if (!it->is_array()) {
      return std::unexpected(bad(where + ".quantized", "must be a list of checkpoints"));
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      TRY_ASSIGN(Quantized q, quantized_from((*it)[i], where + ".quantized[" + std::to_string(i) + "]"));
      m.quantized.push_back(std::move(q));
    }
  }
  for (const auto& a : m.aliases) {
    if (!plain_name(a)) {
      return std::unexpected(bad(where + ".aliases", "`" + a.substr(0, 80) + "` must be a plain name"));
    }
  }
  for (const auto& id : m.hf_ids) {
    if (!plain_name(id)) {
      return std::unexpected(bad(where + ".hf_ids", "`" + id.substr(0, 80) + "` must be an id such as org/name"));
    }
  }
  TRY(check_shape(m, where));
  return m;
}

// Every name a lookup matches (find_model_ptr compares them ignoring case), with its owner.
Result<void> check_unique(const std::vector<ModelArch>& models)
{
  std::map<std::string, std::string> seen;
  for (const auto& m : models) {
    std::vector<std::string> names{m.name};
    names.insert(names.end(), m.aliases.begin(), m.aliases.end());
    names.insert(names.end(), m.hf_ids.begin(), m.hf_ids.end());
    for (const auto& q : m.quantized) {
      names.push_back(q.hf_id);
    }
    std::set<std::string> own;
    for (const auto& n : names) {
      const std::string key = to_lower(n);
      if (!own.insert(key).second) {
        return fail(Errc::invalid_input, "model " + m.name + ": `" + n + "` is listed twice");
      }
      const auto [it, inserted] = seen.emplace(key, m.name);
      if (!inserted) {
        return fail(Errc::invalid_input, "model " + m.name + ": `" + n + "` already names model " + it->second);
      }
    }
  }
  return {};
}

// --- writing ---

template <class T, class Member>
ordered_json value_of(const T& obj, const Member& member)
{
  return std::visit([&](auto ptr) { return ordered_json(obj.*ptr); }, member);
}

template <class T, class Member, std::size_t N>
ordered_json object_of(const T& obj, const Field<Member> (&fields)[N], bool all_fields, const T& defaults,
                       const std::map<std::string, ordered_json>& implied = {})
{
  ordered_json out = ordered_json::object();
  for (const auto& f : fields) {
    ordered_json v = value_of(obj, f.member);
    ordered_json implied_value = value_of(defaults, f.member);
    if (const auto it = implied.find(f.key); it != implied.end()) {
      implied_value = it->second;
    }
    if (all_fields || f.required || v != implied_value) {
      out[f.key] = std::move(v);
    }
  }
  return out;
}

ordered_json model_object(const ModelArch& m, bool all_fields)
{
  static const ModelArch k_defaults{};
  static const Quantized k_quant_defaults{};
  ordered_json out = object_of(m, k_fields, all_fields, k_defaults, {{"global_layers", ordered_json(m.layers)}});
  if (all_fields || !m.quantized.empty()) {
    ordered_json list = ordered_json::array();
    for (const auto& q : m.quantized) {
      list.push_back(object_of(q, k_quant_fields, all_fields, k_quant_defaults));
    }
    // Before `source`, which stays last.
    ordered_json reordered = ordered_json::object();
    for (auto& [k, v] : out.items()) {
      if (k == "source") {
        reordered[k_quantized] = list;
      }
      reordered[k] = v;
    }
    if (!reordered.contains(k_quantized)) {
      reordered[k_quantized] = list;
    }
    out = std::move(reordered);
  }
  return out;
}

// A value on one line, with a space after ',' and ':'.
std::string inline_text(const ordered_json& v)
{
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
      s += (i ? ", " : "") + inline_text(v[i]);
    }
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (const auto& [k, e] : v.items()) {
      s += (first ? "" : ", ") + ordered_json(k).dump() + ": " + inline_text(e);
      first = false;
    }
    return s + "}";
  }
  return v.dump();
}

}  // namespace

Result<std::vector<ModelArch>> models_from_json(std::string_view text)
{
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return fail(Errc::invalid_input, std::string("model data: not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("models") || !doc["models"].is_array()) {
    return fail(Errc::invalid_input, "model data: expected an object with a \"models\" list");
  }
  for (const auto& item : doc.items()) {
    if (item.key() != "note" && item.key() != "models") {
      return fail(Errc::invalid_input, "model data: unknown key `" + item.key().substr(0, 60) + "`; the keys are note, models");
    }
  }
  std::vector<ModelArch> out;
  const auto& models = doc["models"];
  out.reserve(models.size());
  for (std::size_t i = 0; i < models.size(); ++i) {
    TRY_ASSIGN(ModelArch m, model_from(models[i], "models[" + std::to_string(i) + "]", true));
    out.push_back(std::move(m));
  }
  TRY(check_unique(out));
  return out;
}

Result<ModelArch> user_model_from_json(std::string_view name, std::string_view keys_json, const ModelArch* base)
{
  const std::string where = "model " + std::string(name.substr(0, 80));
  json keys;
  try {
    keys = json::parse(keys_json);
  } catch (const json::exception& e) {
    return fail(Errc::invalid_input, where + ": " + e.what());
  }
  if (!keys.is_object()) {
    return fail(Errc::invalid_input, where + ": expected a table of keys");
  }
  json merged = json::object();
  if (base != nullptr) {
    merged = json::parse(model_object(*base, false).dump());
  }
  if (const auto it = keys.find("name"); it != keys.end() && (!it->is_string() || it->get<std::string>() != name)) {
    return fail(Errc::invalid_input, where + ".name: the model's name is its table's, [models." + std::string(name) + "]");
  }
  for (const auto& item : keys.items()) {
    merged[item.key()] = item.value();
  }
  // The base is written without global_layers when it equals layers, so a table that changes
  // `layers` alone keeps every layer global.
  merged["name"] = std::string(name);
  TRY_ASSIGN(ModelArch m, model_from(merged, where, false));
  if (!keys.contains("source")) {
    m.source = "the config file's [models." + std::string(name) + "]";
  }
  std::vector<ModelArch> one{m};
  TRY(check_unique(one));
  return m;
}

std::string models_to_json(std::span<const ModelArch> models, std::string_view note, bool all_fields)
{
  std::string out = "{\n  \"note\": " + ordered_json(std::string(note)).dump() + ",\n  \"models\": [";
  for (std::size_t i = 0; i < models.size(); ++i) {
    out += i ? ",\n    {" : "\n    {";
    const ordered_json obj = model_object(models[i], all_fields);
    bool first = true;
    for (const auto& [k, v] : obj.items()) {
      out += first ? "\n" : ",\n";
      first = false;
      out += "      " + ordered_json(k).dump() + ": ";
      if (k == k_quantized && !v.empty()) {
        out += "[";
        for (std::size_t q = 0; q < v.size(); ++q) {
          out += (q ? ",\n" : "\n") + std::string(8, ' ') + inline_text(v[q]);
        }
        out += "\n      ]";
      } else {
        out += inline_text(v);
      }
    }
    out += "\n    }";
  }
  out += "\n  ]\n}\n";
  return out;
}

}  // namespace gpurent
