// SPDX-License-Identifier: MIT
#include "providers/node_link.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "providers/json_fields.hpp"

namespace gpurent {
namespace {

using nlohmann::json;

const JsonKeys k_link_keys = {"kind", "product", "cards", "gpus_per_node", "max_nodes", "gbit_per_s", "source", "quote"};
constexpr std::string_view k_prefix = "offer data: ";

Error bad(const std::string& where, const std::string& what)
{
  return Error{Errc::invalid_input, std::string(k_prefix) + where + ": " + what};
}

Result<std::uint32_t> whole(const json& obj, const char* key, const std::string& where, std::uint32_t fallback,
                            std::uint32_t lo, std::uint32_t hi)
{
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return fallback;
  }
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() < lo || it->get<std::uint64_t>() > hi) {
    return std::unexpected(bad(where + "." + key, fmt::format("must be a whole number from {} to {}", lo, hi)));
  }
  return static_cast<std::uint32_t>(it->get<std::uint64_t>());
}

Result<NodeLink> link_from(const json& j, const std::string& where, const std::function<bool(const std::string&)>& card_known)
{
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be a table"));
  }
  TRY(json_only_keys(j, k_link_keys, k_prefix, where));
  NodeLink l;
  TRY_ASSIGN(l.kind, json_text(j, "kind", k_prefix, where, true));
  if (l.kind != "cluster" && l.kind != "public") {
    return std::unexpected(bad(where + ".kind", "must be \"cluster\" or \"public\""));
  }
  TRY_ASSIGN(l.product, json_text(j, "product", k_prefix, where, l.kind == "cluster"));
  if (const auto it = j.find("cards"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) {
      return std::unexpected(bad(where + ".cards", "must be a list of card ids"));
    }
    for (const auto& c : *it) {
      if (!c.is_string() || !card_known(c.get<std::string>())) {
        return std::unexpected(bad(where + ".cards", "must be a list of known card ids"));
      }
      l.cards.push_back(c.get<std::string>());
    }
  }
  TRY_ASSIGN(l.gpus_per_node, whole(j, "gpus_per_node", where, 0, 1, 8));
  TRY_ASSIGN(l.max_nodes, whole(j, "max_nodes", where, k_max_nodes, 1, k_max_nodes));
  if (const auto it = j.find("gbit_per_s"); it != j.end() && !it->is_null()) {
    if (!it->is_number() || it->get<double>() <= 0 || it->get<double>() > 1e5) {
      return std::unexpected(bad(where + ".gbit_per_s", "must be a number of Gbit/s above 0, or null (not published)"));
    }
    l.gbit_per_s = it->get<double>();
  }
  if (l.kind == "cluster" && !l.gbit_per_s) {
    return std::unexpected(bad(where + ".gbit_per_s", "a cluster product needs its published bandwidth"));
  }
  TRY_ASSIGN(l.source, json_text(j, "source", k_prefix, where, true));
  TRY_ASSIGN(l.quote, json_text(j, "quote", k_prefix, where, true));
  if (l.source.empty() || l.quote.empty()) {
    return std::unexpected(bad(where, "every node link names its source and quotes it"));
  }
  return l;
}

}  // namespace

std::string NodeLink::label() const
{
  if (kind == "cluster") {
    return fmt::format("{} {:.0f} Gbit/s per server", product, gbit_per_s.value_or(0));
  }
  if (known()) {
    return fmt::format("separate servers, {:.0f} Gbit/s each", *gbit_per_s);
  }
  return "separate servers on public addresses, bandwidth not published";
}

const NodeLink* node_link_for(std::span<const NodeLink> links, const std::string& card) noexcept
{
  const auto it = std::find_if(links.begin(), links.end(), [&](const NodeLink& l) {
    return l.cards.empty() || std::find(l.cards.begin(), l.cards.end(), card) != l.cards.end();
  });
  return it == links.end() ? nullptr : &*it;
}

Result<std::vector<NodeLink>> node_links_from_json(const json& list, const std::string& where,
                                                   const std::function<bool(const std::string&)>& card_known)
{
  std::vector<NodeLink> out;
  if (list.is_null()) {
    return out;
  }
  if (!list.is_array()) {
    return std::unexpected(bad(where, "must be a list of {kind, gbit_per_s, source, quote, ...}"));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    TRY_ASSIGN(NodeLink l, link_from(list[i], where + "[" + std::to_string(i) + "]", card_known));
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace gpurent
