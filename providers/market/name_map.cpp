// SPDX-License-Identifier: MIT
#include "providers/market/name_map.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace gpurent {
std::string_view embedded_market_names_json() noexcept;
}

namespace gpurent::market {
namespace {

using nlohmann::json;

Error bad(const std::string& where, const std::string& what)
{
  return Error{Errc::invalid_input, "market names: " + where + ": " + what};
}

Result<void> only(const json& j, const std::set<std::string>& keys, const std::string& where)
{
  for (const auto& [k, v] : j.items()) {
    if (!keys.contains(k)) {
      return std::unexpected(bad(where, "unknown key `" + k + "`"));
    }
  }
  return {};
}

Result<std::string> text(const json& j, const char* key, const std::string& where)
{
  const auto it = j.find(key);
  if (it == j.end()) {
    return std::string();
  }
  if (!it->is_string()) {
    return std::unexpected(bad(where + "." + key, "must be a string"));
  }
  return it->get<std::string>();
}

std::string lower(std::string_view s)
{
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool has(std::string_view hay, const std::string& needle)
{
  return needle.empty() || lower(hay).find(lower(needle)) != std::string::npos;
}

bool holds(const NameRule& r, const CatalogRow& row)
{
  return r.name == row.accelerator_name && has(row.instance_type, r.instance_type) && has(row.upstream, r.upstream) &&
         has(row.gpu_info, r.gpu_info);
}

}  // namespace

Result<NameMap> name_map_from_json(std::string_view in)
{
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    return std::unexpected(bad("(file)", std::string("not JSON: ") + e.what()));
  }
  if (!doc.is_object()) {
    return std::unexpected(bad("(file)", "expected an object with \"clouds\" and \"rules\""));
  }
  TRY(only(doc, {"note", "clouds", "rules"}, "(top level)"));
  NameMap out;
  const auto clouds = doc.find("clouds");
  if (clouds != doc.end()) {
    if (!clouds->is_object()) {
      return std::unexpected(bad("clouds", "must be a table of cloud = {quirks}"));
    }
    for (const auto& [cloud, q] : clouds->items()) {
      const std::string where = "clouds." + cloud;
      if (!q.is_object()) {
        return std::unexpected(bad(where, "must be a table"));
      }
      TRY(only(q, {"accelerator_rows_gpu_only", "upstream_separator", "why"}, where));
      CloudQuirks c;
      c.cloud = cloud;
      if (const auto g = q.find("accelerator_rows_gpu_only"); g != q.end()) {
        if (!g->is_boolean()) {
          return std::unexpected(bad(where + ".accelerator_rows_gpu_only", "must be true or false"));
        }
        c.accelerator_rows_gpu_only = g->get<bool>();
      }
      TRY_ASSIGN(c.upstream_separator, text(q, "upstream_separator", where));
      TRY_ASSIGN(const std::string why, text(q, "why", where));
      if (why.empty()) {
        return std::unexpected(bad(where + ".why", "missing: say what the quirk is and where it shows"));
      }
      out.clouds.push_back(std::move(c));
    }
  }
  const auto rules = doc.find("rules");
  if (rules == doc.end() || !rules->is_array()) {
    return std::unexpected(bad("rules", "must be a list"));
  }
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const json& j = (*rules)[i];
    std::string where = "rules[" + std::to_string(i) + "]";
    if (!j.is_object()) {
      return std::unexpected(bad(where, "must be a table"));
    }
    NameRule r;
    TRY_ASSIGN(r.name, text(j, "name", where));
    TRY_ASSIGN(r.cloud, text(j, "cloud", where));
    where += " (" + (r.cloud.empty() ? std::string("any cloud") : r.cloud) + " " + r.name + ")";
    TRY(only(j, {"cloud", "name", "instance_type", "upstream", "gpu_info", "card", "why"}, where));
    if (r.name.empty()) {
      return std::unexpected(bad(where + ".name", "missing"));
    }
    TRY_ASSIGN(r.instance_type, text(j, "instance_type", where));
    TRY_ASSIGN(r.upstream, text(j, "upstream", where));
    TRY_ASSIGN(r.gpu_info, text(j, "gpu_info", where));
    TRY_ASSIGN(r.why, text(j, "why", where));
    const auto card = j.find("card");
    if (card == j.end()) {
      return std::unexpected(bad(where + ".card", "missing: a card id, or null with `why`"));
    }
    if (card->is_string() && !card->get<std::string>().empty()) {
      r.card = card->get<std::string>();
    } else if (!card->is_null()) {
      return std::unexpected(bad(where + ".card", "must be a card id or null"));
    } else if (r.why.empty()) {
      return std::unexpected(bad(where + ".why", "missing: say why the name is not mapped"));
    }
    out.rules.push_back(std::move(r));
  }
  return out;
}

Result<void> check_name_map_cards(const NameMap& map, const std::vector<std::string>& card_ids)
{
  for (std::size_t i = 0; i < map.rules.size(); ++i) {
    const auto& r = map.rules[i];
    if (r.card && std::find(card_ids.begin(), card_ids.end(), *r.card) == card_ids.end()) {
      return std::unexpected(bad("rules[" + std::to_string(i) + "] (" + r.name + ").card",
                                 "`" + *r.card + "` is not a card id of data/cards.json"));
    }
  }
  return {};
}

std::string_view embedded_names_json() noexcept { return embedded_market_names_json(); }

const NameMap& builtin_name_map()
{
  static const NameMap k_map = [] {
    auto m = name_map_from_json(embedded_names_json());
    return m ? std::move(*m) : NameMap{};  // the build's generator refuses a broken file
  }();
  return k_map;
}

const NameRule* match_name(const NameMap& map, std::string_view cloud, const CatalogRow& row)
{
  for (const auto& r : map.rules) {
    if (r.cloud == cloud && holds(r, row)) {
      return &r;
    }
  }
  for (const auto& r : map.rules) {
    if (r.cloud.empty() && holds(r, row)) {
      return &r;
    }
  }
  return nullptr;
}

const CloudQuirks* quirks_of(const NameMap& map, std::string_view cloud)
{
  for (const auto& q : map.clouds) {
    if (q.cloud == cloud) {
      return &q;
    }
  }
  return nullptr;
}

}  // namespace gpurent::market
