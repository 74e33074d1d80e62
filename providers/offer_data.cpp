// SPDX-License-Identifier: MIT
// Reads the built-in offers in data/offers.json's shape. The build's generator
// (providers/gen/gen_offer_data.cpp) reads the file with it and writes builtin_offer_data() as
// C++ initialisers; the file is also compiled in as text for the schema test.
#include "providers/offer_data.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/text.hpp"
#include "providers/json_fields.hpp"
#include "providers/node_link.hpp"

namespace gpurent {
namespace {

using nlohmann::json;
using Keys = std::set<std::string, std::less<>>;

const Keys k_top_keys = {"note", "sources", "providers", "offers"};
const Keys k_source_keys = {"url", "title", "date", "says"};
const Keys k_provider_keys = {"provider", "cards", "cards_from", "price_source", "note", "node_links"};
const Keys k_offer_keys = {"provider", "card", "gpus", "usd_per_hour", "spot_usd_per_hour", "usd_per_gpu_hour",
                           "spot_usd_per_gpu_hour", "region", "source", "quote"};

constexpr std::int64_t k_max_usd = 100'000;  // the same bound as a config price

Error bad(const std::string& where, const std::string& what)
{
  return Error{Errc::invalid_input, "offer data: " + where + ": " + what};
}

Result<void> only_keys(const json& obj, const Keys& allowed, const std::string& where)
{
  return json_only_keys(obj, allowed, "offer data: ", where);
}

// A string; absent or null gives "" unless required.
Result<std::string> text_of(const json& obj, const char* key, const std::string& where, bool required)
{
  return json_text(obj, key, "offer data: ", where, required);
}

// A list of strings (absent or null: empty), each given once.
Result<std::vector<std::string>> names_of(const json& obj, const char* key, const std::string& where)
{
  std::vector<std::string> out;
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return out;
  }
  if (!it->is_array()) {
    return std::unexpected(bad(where + "." + key, "must be a list of names"));
  }
  for (const auto& v : *it) {
    if (!v.is_string() || v.get<std::string>().empty()) {
      return std::unexpected(bad(where + "." + key, "must be a list of non-empty names"));
    }
    if (std::find(out.begin(), out.end(), v.get<std::string>()) != out.end()) {
      return std::unexpected(bad(where + "." + key, "`" + v.get<std::string>() + "` is listed twice"));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

bool valid_date(std::string_view d)
{
  if (d.size() != 10 || d[4] != '-' || d[7] != '-') {
    return false;
  }
  for (const std::size_t i : {0U, 1U, 2U, 3U, 5U, 6U, 8U, 9U}) {
    if (d[i] < '0' || d[i] > '9') {
      return false;
    }
  }
  const int month = (d[5] - '0') * 10 + (d[6] - '0');
  const int day = (d[8] - '0') * 10 + (d[9] - '0');
  return d.substr(0, 2) == "20" && month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

Result<OfferSource> source_from(const json& j, const std::string& key)
{
  const std::string where = "sources." + key;
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be a table (url, title, date, says)"));
  }
  TRY(only_keys(j, k_source_keys, where));
  OfferSource s;
  TRY_ASSIGN(s.url, text_of(j, "url", where, false));
  if (!s.url.empty() && !s.url.starts_with("https://") && !s.url.starts_with("http://")) {
    return std::unexpected(bad(where + ".url", "must be an http(s) address or null"));
  }
  TRY_ASSIGN(s.title, text_of(j, "title", where, true));
  if (trim(s.title).empty()) {
    return std::unexpected(bad(where + ".title", "must not be empty"));
  }
  TRY_ASSIGN(s.date, text_of(j, "date", where, true));
  if (!valid_date(s.date)) {
    return std::unexpected(bad(where + ".date", "must be the date read or verified, YYYY-MM-DD"));
  }
  TRY(text_of(j, "says", where, false));
  return s;
}

// The catalogue card with exactly this id; an alias or another spelling is refused with the id.
Result<const Card*> card_by_id(std::span<const Card> cards, const std::string& id, const std::string& where)
{
  for (const auto& c : cards) {
    if (c.id == id) {
      return &c;
    }
  }
  const std::string key = normalize_key(id);
  for (const auto& c : cards) {
    const bool alias = std::any_of(c.aliases.begin(), c.aliases.end(),
                                   [&](const std::string& a) { return normalize_key(a) == key; });
    if (!key.empty() && (normalize_key(c.id) == key || alias)) {
      return std::unexpected(bad(where, "`" + id + "` names the card `" + c.id + "`: give its id"));
    }
  }
  return std::unexpected(bad(where, "`" + id + "` is not a card of the card catalogue (data/cards.json, `gpurent cards`)"));
}

Result<const ProviderInfo*> provider_by_name(std::span<const ProviderInfo> providers, const std::string& name,
                                             const std::string& where)
{
  for (const auto& p : providers) {
    if (p.name == name) {
      return &p;
    }
  }
  std::string known;
  for (const auto& p : providers) {
    known += (known.empty() ? "" : ", ") + p.name;
  }
  return std::unexpected(bad(where, "`" + name + "` is not a provider; known providers: " + known));
}

Result<ProviderListing> listing_from(const json& j, std::size_t index, const OfferData& out,
                                     std::span<const ProviderInfo> providers, std::span<const Card> cards)
{
  std::string where = "providers[" + std::to_string(index) + "]";
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be a table"));
  }
  ProviderListing l;
  TRY_ASSIGN(l.provider, text_of(j, "provider", where, true));
  TRY_ASSIGN(const ProviderInfo* p, provider_by_name(providers, l.provider, where + ".provider"));
  where = "provider " + p->name;
  TRY(only_keys(j, k_provider_keys, where));
  TRY_ASSIGN(l.cards, names_of(j, "cards", where));
  for (const auto& id : l.cards) {
    TRY_ASSIGN(const Card* c, card_by_id(cards, id, where + ".cards"));
    if (c->label_gb < p->min_card_gb) {
      return std::unexpected(bad(where + ".cards", "`" + id + "` is below the provider's smallest card (" +
                                                       std::to_string(p->min_card_gb) + " GB)"));
    }
  }
  TRY_ASSIGN(l.cards_from, names_of(j, "cards_from", where));
  for (const auto& s : l.cards_from) {
    if (!out.sources.contains(s)) {
      return std::unexpected(bad(where + ".cards_from", "`" + s + "` is not a key of \"sources\""));
    }
  }
  if (!l.cards.empty() && l.cards_from.empty()) {
    return std::unexpected(bad(where + ".cards_from", "missing: name the sources that list these cards"));
  }
  TRY_ASSIGN(l.price_source, text_of(j, "price_source", where, false));
  TRY(text_of(j, "note", where, false));
  const auto card_known = [&](const std::string& id) {
    return std::any_of(cards.begin(), cards.end(), [&](const Card& c) { return c.id == id; });
  };
  TRY_ASSIGN(l.node_links, node_links_from_json(j.value("node_links", json()), where + ".node_links", card_known));
  return l;
}

// A price key's value: an exact decimal string, above zero.
Result<std::optional<MicroUsd>> price_of(const json& obj, const char* key, const std::string& where)
{
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    return std::optional<MicroUsd>();
  }
  if (!it->is_string()) {
    return std::unexpected(bad(where + "." + key, "must be a decimal string of USD per hour, e.g. \"2.86\" (not a number)"));
  }
  auto v = parse_usd_exact(it->get<std::string>());
  if (!v) {
    return std::unexpected(bad(where + "." + key, v.error().message));
  }
  if (v->n == 0) {
    return std::unexpected(bad(where + "." + key, "must be above 0"));
  }
  return std::optional<MicroUsd>(*v);
}

struct Slot {
  std::string provider, card, region;
  std::uint32_t gpus = 0;
  auto operator<=>(const Slot&) const = default;
};

Result<void> offers_from(const json& j, std::size_t index, OfferData& out, std::set<Slot>& seen,
                         std::span<const ProviderInfo> providers, std::span<const Card> cards)
{
  std::string where = "offers[" + std::to_string(index) + "]";
  if (!j.is_object()) {
    return std::unexpected(bad(where, "must be a table"));
  }
  TRY_ASSIGN(const std::string provider, text_of(j, "provider", where, true));
  TRY_ASSIGN(const std::string card_id, text_of(j, "card", where, true));
  TRY_ASSIGN(const ProviderInfo* p, provider_by_name(providers, provider, where + ".provider"));
  where += " (" + provider + " " + card_id + ")";
  TRY(only_keys(j, k_offer_keys, where));
  TRY_ASSIGN(const Card* card, card_by_id(cards, card_id, where + ".card"));
  const auto listing = std::find_if(out.providers.begin(), out.providers.end(),
                                    [&](const ProviderListing& l) { return l.provider == provider; });
  if (listing == out.providers.end() || std::find(listing->cards.begin(), listing->cards.end(), card_id) == listing->cards.end()) {
    return std::unexpected(bad(where + ".card", "`" + card_id + "` is not in " + provider + "'s \"cards\" list in \"providers\""));
  }
  if (listing->price_source.empty()) {
    return std::unexpected(bad(where + ".provider", provider + "'s entry in \"providers\" has no price_source to print with the price"));
  }
  // Prices: one for the whole server, or one per GPU (the server costs gpus x that).
  TRY_ASSIGN(const auto server, price_of(j, "usd_per_hour", where));
  TRY_ASSIGN(const auto server_spot, price_of(j, "spot_usd_per_hour", where));
  TRY_ASSIGN(const auto per_gpu, price_of(j, "usd_per_gpu_hour", where));
  TRY_ASSIGN(const auto per_gpu_spot, price_of(j, "spot_usd_per_gpu_hour", where));
  if (server.has_value() == per_gpu.has_value()) {
    return std::unexpected(bad(where, "give exactly one of usd_per_hour (the whole server) and usd_per_gpu_hour"));
  }
  if (per_gpu ? server_spot.has_value() : per_gpu_spot.has_value()) {
    return std::unexpected(bad(where + (per_gpu ? ".spot_usd_per_hour" : ".spot_usd_per_gpu_hour"),
                               per_gpu ? "a per-GPU offer's spot price is spot_usd_per_gpu_hour"
                                       : "a whole-server offer's spot price is spot_usd_per_hour"));
  }
  const std::optional<MicroUsd> price = per_gpu ? per_gpu : server;
  const std::optional<MicroUsd> spot = per_gpu ? per_gpu_spot : server_spot;
  if (spot && *spot >= *price) {
    return std::unexpected(bad(where + (per_gpu ? ".spot_usd_per_gpu_hour" : ".spot_usd_per_hour"), "must be below the on-demand price"));
  }
  // GPU counts: a whole number, or a list of them for a per-GPU price.
  std::vector<std::uint32_t> counts;
  const auto g = j.find("gpus");
  if (g == j.end() || g->is_null()) {
    return std::unexpected(bad(where + ".gpus", "missing"));
  }
  const auto count_of = [&](const json& v) -> Result<std::uint32_t> {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > p->max_gpus) {
      return std::unexpected(bad(where + ".gpus", "GPUs per server are whole numbers 1.." + std::to_string(p->max_gpus) +
                                                      " on " + provider));
    }
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  };
  if (g->is_array()) {
    if (!per_gpu) {
      return std::unexpected(bad(where + ".gpus", "a list of GPU counts needs a per-GPU price (usd_per_gpu_hour)"));
    }
    if (g->empty()) {
      return std::unexpected(bad(where + ".gpus", "must not be empty"));
    }
    for (const auto& v : *g) {
      TRY_ASSIGN(const std::uint32_t n, count_of(v));
      if (std::find(counts.begin(), counts.end(), n) != counts.end()) {
        return std::unexpected(bad(where + ".gpus", std::to_string(n) + " is listed twice"));
      }
      counts.push_back(n);
    }
  } else {
    TRY_ASSIGN(const std::uint32_t n, count_of(*g));
    counts.push_back(n);
  }
  TRY_ASSIGN(const std::string region, text_of(j, "region", where, false));
  TRY_ASSIGN(const std::string source_key, text_of(j, "source", where, true));
  const auto src = out.sources.find(source_key);
  if (src == out.sources.end()) {
    return std::unexpected(bad(where + ".source", "`" + source_key + "` is not a key of \"sources\""));
  }
  if (src->second.url.empty()) {
    return std::unexpected(bad(where + ".source", "`" + source_key + "` has no url: a built-in price needs a public source"));
  }
  TRY(text_of(j, "quote", where, false));
  for (const std::uint32_t n : counts) {
    if (!seen.insert(Slot{provider, card->id, region, n}).second) {
      return std::unexpected(bad(where + ".gpus", provider + " " + card->id + " x" + std::to_string(n) +
                                                      (region.empty() ? "" : " in " + region) + " is priced twice"));
    }
    const std::int64_t times = per_gpu ? n : 1;
    Offer o;
    o.provider = provider;
    o.card = card->id;
    o.gpus = n;
    o.price_per_hour = MicroUsd{price->n * times};
    if (spot) {
      o.spot_price_per_hour = MicroUsd{spot->n * times};
    }
    o.region = region;
    o.price_origin = "built-in " + src->second.date;
    out.offers.push_back(std::move(o));
    out.offer_sources.push_back(source_key);
  }
  return {};
}

}  // namespace

Result<MicroUsd> parse_usd_exact(std::string_view text)
{
  const auto refuse = [&] {
    return fail(Errc::invalid_input, "`" + std::string(text.substr(0, 40)) +
                                         "`: give USD as plain decimal digits, at most 6 after the point, e.g. \"2.86\"");
  };
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || whole.size() > 6 || !digits(whole) || frac.size() > 6 || !digits(frac) ||
      (dot != std::string_view::npos && frac.empty())) {
    return refuse();
  }
  std::int64_t units = 0;
  for (const char c : whole) {
    units = units * 10 + (c - '0');
  }
  if (units >= k_max_usd) {
    return fail(Errc::invalid_input, "`" + std::string(text) + "`: absurd amount (>= $100000 per hour)");
  }
  std::int64_t micro = 0;
  std::int64_t scale = k_micro_per_unit;
  for (const char c : frac) {
    scale /= 10;
    micro += (c - '0') * scale;
  }
  return MicroUsd{units * k_micro_per_unit + micro};
}

Result<OfferData> offer_data_from_json(std::string_view text, std::span<const ProviderInfo> providers,
                                       std::span<const Card> cards)
{
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return fail(Errc::invalid_input, std::string("offer data: not JSON: ") + e.what());
  }
  if (!doc.is_object()) {
    return fail(Errc::invalid_input, "offer data: expected an object with \"sources\", \"providers\" and \"offers\"");
  }
  TRY(only_keys(doc, k_top_keys, "(top level)"));
  const auto sources = doc.find("sources");
  const auto listings = doc.find("providers");
  const auto offers = doc.find("offers");
  if (sources == doc.end() || !sources->is_object()) {
    return fail(Errc::invalid_input, "offer data: \"sources\" must be a table of key = {url, title, date}");
  }
  if (listings == doc.end() || !listings->is_array() || offers == doc.end() || !offers->is_array()) {
    return fail(Errc::invalid_input, "offer data: \"providers\" and \"offers\" must be lists");
  }
  TRY(text_of(doc, "note", "(top level)", false));
  OfferData out;
  for (const auto& [key, value] : sources->items()) {
    TRY_ASSIGN(OfferSource s, source_from(value, key));
    out.sources.emplace(key, std::move(s));
  }
  for (std::size_t i = 0; i < listings->size(); ++i) {
    TRY_ASSIGN(ProviderListing l, listing_from((*listings)[i], i, out, providers, cards));
    if (std::any_of(out.providers.begin(), out.providers.end(), [&](const ProviderListing& x) { return x.provider == l.provider; })) {
      return fail(Errc::invalid_input, "offer data: provider " + l.provider + ": listed twice in \"providers\"");
    }
    out.providers.push_back(std::move(l));
  }
  std::set<Slot> seen;
  for (std::size_t i = 0; i < offers->size(); ++i) {
    TRY(offers_from((*offers)[i], i, out, seen, providers, cards));
  }
  for (const auto& l : out.providers) {
    const bool priced = std::any_of(out.offers.begin(), out.offers.end(), [&](const Offer& o) { return o.provider == l.provider; });
    if (!l.price_source.empty() && !priced) {
      return fail(Errc::invalid_input, "offer data: provider " + l.provider +
                                           ".price_source: given, but no offer of the provider has a price; leave it \"\"");
    }
  }
  return out;
}

}  // namespace gpurent
