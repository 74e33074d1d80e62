// SPDX-License-Identifier: MIT
// Reads a card catalogue in data/cards.json's shape: at build time, to generate the built-in
// catalogue's initialisers (providers/gen/gen_card_catalog.cpp), and for the config's [cards.<id>]
// tables, which start from the built-in card's JSON (the file is also compiled in as text).
#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "providers/json_fields.hpp"
#include "providers/card.hpp"
#include "providers/card_data.hpp"

namespace gpurent {
namespace {

using nlohmann::json;

const std::set<std::string, std::less<>> k_card_keys = {"id", "display", "label_gb", "aliases", "arch", "compute_capability",
                                                        "usable_gib", "mem_bw_gbs", "tflops", "link", "sources", "gaps",
                                                        "notes"};
const std::set<std::string, std::less<>> k_tflops_keys = {"bf16", "fp16", "fp8", "fp4", "int8"};
const std::set<std::string, std::less<>> k_link_keys = {"nvlink_gen", "nvlink_gb_per_s", "pcie_gen", "nvlink_bridge"};

Error bad(const std::string& where, const std::string& what) { return Error{Errc::invalid_input, where + ": " + what}; }

Result<void> only_keys(const json& obj, const std::set<std::string, std::less<>>& allowed, const std::string& where)
{
  return json_only_keys(obj, allowed, "", where);
}

// A string; absent or null gives "" unless required.
Result<std::string> text_of(const json& obj, const char* key, const std::string& where, bool required)
{
  return json_text(obj, key, "", where, required);
}

// A non-negative number no larger than `max`, or nullopt for null/absent.
Result<std::optional<double>> number_of(const json& obj, const char* key, const std::string& where, double max)
{
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return std::optional<double>();
  }
  if (!it->is_number()) {
    return std::unexpected(bad(where + "." + key, "must be a number or null"));
  }
  const double v = it->get<double>();
  if (!(v > 0 && v <= max)) {  // also NaN and infinities (no libm: plan's start-up links libc only)
    return std::unexpected(bad(where + "." + key, "must be above 0 and at most " + std::to_string(static_cast<long long>(max))));
  }
  return std::optional<double>(v);
}

Result<std::optional<std::uint32_t>> whole_of(const json& obj, const char* key, const std::string& where, std::uint32_t max)
{
  TRY_ASSIGN(const auto v, number_of(obj, key, where, max));
  if (!v) {
    return std::optional<std::uint32_t>();
  }
  if (*v != static_cast<double>(static_cast<std::uint64_t>(*v))) {
    return std::unexpected(bad(where + "." + key, "must be a whole number"));
  }
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v));
}

Result<Card> card_from(const json& j, std::size_t index)
{
  std::string where = "cards[" + std::to_string(index) + "]";
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be an object"));
  }
  Card c;
  TRY_ASSIGN(c.id, text_of(j, "id", where, true));
  if (c.id.empty() || normalize_key(c.id).empty() || !printable_ascii(c.id)) {
    return std::unexpected(bad(where + ".id", "must be a plain name such as `rtx-4090`"));
  }
  where = "card " + c.id;
  TRY(only_keys(j, k_card_keys, where));
  TRY_ASSIGN(c.display, text_of(j, "display", where, false));
  if (c.display.empty()) {
    c.display = c.id;
  }
  TRY_ASSIGN(const auto label, whole_of(j, "label_gb", where, 4096));
  TRY_ASSIGN(const auto usable, number_of(j, "usable_gib", where, 4096));
  if (!usable) {
    return std::unexpected(bad(where + ".usable_gib", "missing: the memory CUDA reports as the card's total, in GiB"));
  }
  const auto centi = static_cast<std::uint64_t>(*usable * 100.0 + 0.5);
  c.usable = Bytes{centi * k_gib / 100};
  c.label_gb = label.value_or(static_cast<std::uint32_t>((centi + 99) / 100));
  if (const auto it = j.find("aliases"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      return std::unexpected(bad(where + ".aliases", "must be a list of names"));
    }
    for (const auto& a : *it) {
      if (!a.is_string() || normalize_key(a.get<std::string>()).empty()) {
        return std::unexpected(bad(where + ".aliases", "must be a list of non-empty names"));
      }
      c.aliases.push_back(a.get<std::string>());
    }
  }
  TRY_ASSIGN(c.arch, text_of(j, "arch", where, false));
  TRY_ASSIGN(const std::string cc, text_of(j, "compute_capability", where, false));
  if (!cc.empty()) {
    auto parsed = parse_compute_capability(cc);
    if (!parsed) {
      return std::unexpected(bad(where + ".compute_capability", parsed.error().message));
    }
    c.compute_capability = *parsed;
  }
  TRY_ASSIGN(c.mem_bw_gbs, whole_of(j, "mem_bw_gbs", where, 100'000));
  if (const auto it = j.find("tflops"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return std::unexpected(bad(where + ".tflops", "must be a table of precision = TFLOPS"));
    }
    TRY(only_keys(*it, k_tflops_keys, where + ".tflops"));
    TRY_ASSIGN(c.tflops.bf16, number_of(*it, "bf16", where + ".tflops", 1e6));
    TRY_ASSIGN(c.tflops.fp16, number_of(*it, "fp16", where + ".tflops", 1e6));
    TRY_ASSIGN(c.tflops.fp8, number_of(*it, "fp8", where + ".tflops", 1e6));
    TRY_ASSIGN(c.tflops.fp4, number_of(*it, "fp4", where + ".tflops", 1e6));
    TRY_ASSIGN(c.tflops.int8, number_of(*it, "int8", where + ".tflops", 1e6));
  }
  if (const auto it = j.find("link"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return std::unexpected(bad(where + ".link", "must be a table (nvlink_gen, nvlink_gb_per_s, pcie_gen)"));
    }
    TRY(only_keys(*it, k_link_keys, where + ".link"));
    TRY_ASSIGN(c.link.nvlink_gen, whole_of(*it, "nvlink_gen", where + ".link", 10));
    TRY_ASSIGN(c.link.nvlink_gb_per_s, whole_of(*it, "nvlink_gb_per_s", where + ".link", 100'000));
    TRY_ASSIGN(c.link.pcie_gen, whole_of(*it, "pcie_gen", where + ".link", 10));
    if (const auto b = it->find("nvlink_bridge"); b != it->end() && !b->is_null()) {
      if (!b->is_boolean()) {
        return std::unexpected(bad(where + ".link.nvlink_bridge", "must be true or false"));
      }
      c.link.nvlink_bridge = b->get<bool>();
    }
  }
  if (const auto it = j.find("sources"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) {
      return std::unexpected(bad(where + ".sources", "must be a table of figure = source"));
    }
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) {
        return std::unexpected(bad(where + ".sources." + k, "must be a string"));
      }
      c.sources[k] = v.get<std::string>();
    }
  }
  TRY_ASSIGN(c.gaps, text_of(j, "gaps", where, false));
  c.source = c.sources.contains("usable_gib") ? c.sources.at("usable_gib") : std::string();
  return c;
}

// A source key of the file's "sources" table becomes "title <url>".
void resolve_sources(Card& c, const json& table)
{
  for (auto& [figure, text] : c.sources) {
    const auto it = table.find(text);
    if (it != table.end() && it->is_object()) {
      const std::string title = it->value("title", std::string());
      const std::string url = it->value("url", std::string());
      text = title.empty() ? url : (url.empty() ? title : title + " <" + url + ">");
    }
  }
  if (c.sources.contains("usable_gib")) {
    c.source = c.sources.at("usable_gib");
  }
}

}  // namespace

Result<std::uint32_t> parse_compute_capability(std::string_view text)
{
  const std::string t{trim(text)};
  const auto dot = t.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 2 != t.size()) {
    return fail(Errc::invalid_input, "compute capability `" + t + "`: give major.minor, e.g. \"8.9\" or \"12.0\"");
  }
  const auto major = parse_u64(t.substr(0, dot));
  const auto minor = parse_u64(t.substr(dot + 1));
  if (!major || !minor || *major < 3 || *major > 20) {
    return fail(Errc::invalid_input, "compute capability `" + t + "`: give major.minor, e.g. \"8.9\" or \"12.0\"");
  }
  return static_cast<std::uint32_t>(*major * 10 + *minor);
}

Result<CardData> card_data_from_json(std::string_view text)
{
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return fail(Errc::invalid_input, std::string("card data: not JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("cards") || !doc["cards"].is_array()) {
    return fail(Errc::invalid_input, "card data: expected an object with a \"cards\" list");
  }
  static const json k_no_sources = json::object();
  const auto found = doc.find("sources");
  const json& sources = found != doc.end() && found->is_object() ? *found : k_no_sources;  // not copied
  CardData out;
  std::set<std::string> ids;
  const auto& cards = doc["cards"];
  for (std::size_t i = 0; i < cards.size(); ++i) {
    TRY_ASSIGN(Card c, card_from(cards[i], i));
    if (!ids.insert(normalize_key(c.id)).second) {
      return fail(Errc::invalid_input, "card " + c.id + ": listed twice");
    }
    resolve_sources(c, sources);
    out.cards.push_back(std::move(c));
  }
  if (const auto it = doc.find("ambiguous"); it != doc.end() && it->is_array()) {
    for (const auto& a : *it) {
      AmbiguousCardName name;
      name.key = normalize_key(a.value("name", std::string()));
      for (const auto& c : a.value("cards", json::array())) {
        if (c.is_string()) {
          name.cards.push_back(c.get<std::string>());
        }
      }
      if (name.key.empty() || name.cards.size() < 2) {
        return fail(Errc::invalid_input, "card data: an \"ambiguous\" entry needs a name and two or more cards");
      }
      out.ambiguous.push_back(std::move(name));
    }
  }
  return out;
}

Result<std::vector<Card>> cards_from_json(std::string_view text)
{
  TRY_ASSIGN(CardData d, card_data_from_json(text));
  return std::move(d.cards);
}

}  // namespace gpurent

namespace gpurent {

Result<Card> user_card_from_json(std::string_view id, std::string_view keys_json)
{
  nlohmann::json keys;
  try {
    keys = nlohmann::json::parse(keys_json);
  } catch (const nlohmann::json::exception& e) {
    return fail(Errc::invalid_input, std::string("card ") + std::string(id) + ": " + e.what());
  }
  const nlohmann::json doc = nlohmann::json::parse(embedded_cards_json(), nullptr, false);
  nlohmann::json base = {{"id", std::string(id)}};
  nlohmann::json sources = nlohmann::json::object();
  if (doc.is_object() && doc.contains("cards") && doc["cards"].is_array()) {
    sources = doc.value("sources", nlohmann::json::object());
    for (const auto& c : doc["cards"]) {
      if (c.is_object() && c.contains("id") && c["id"].is_string() && normalize_key(c["id"].get<std::string>()) == normalize_key(id)) {
        base = c;
      }
    }
  }
  for (const auto& [k, v] : keys.items()) {
    if (v.is_object() && base.contains(k) && base[k].is_object()) {
      for (const auto& [sk, sv] : v.items()) {
        base[k][sk] = sv;
      }
    } else {
      base[k] = v;
    }
  }
  if (!base.contains("sources") || !base["sources"].is_object()) {
    base["sources"] = nlohmann::json::object();
  }
  for (const auto& [k, v] : keys.items()) {
    base["sources"][k] = "the config file's [cards." + std::string(id) + "]";
  }
  TRY_ASSIGN(Card c, card_from(base, 0));
  resolve_sources(c, sources);
  c.origin = "config";
  return c;
}

}  // namespace gpurent
