// SPDX-License-Identifier: MIT
#include "providers/offer_cache.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "common/clock.hpp"

namespace gpurent {
namespace {

using nlohmann::json;


Error bad(std::string_view why)
{
  return Error{Errc::invalid_input, "offer cache: " + std::string(why) + "; run `gpurent offers --refresh` to rebuild it"};
}

}  // namespace

Result<std::filesystem::path> offer_cache_path(const std::function<std::optional<std::string>(const std::string&)>& env)
{
  if (auto xdg = env("XDG_CACHE_HOME")) {
    return std::filesystem::path(*xdg) / "gpurent" / "offers.json";
  }
  if (auto home = env("HOME")) {
    return std::filesystem::path(*home) / ".cache" / "gpurent" / "offers.json";
  }
  return fail(Errc::invalid_input, "cannot locate the cache directory: neither XDG_CACHE_HOME nor HOME is set");
}

std::string offer_cache_to_json(const OfferCache& cache)
{
  json providers = json::object();
  for (const auto& [name, entry] : cache) {
    json offers = json::array();
    for (const auto& o : entry.offers) {
      json j = {{"card", o.card}, {"gpus", o.gpus}, {"price_micro", o.price_per_hour.n}, {"region", o.region}};
      if (o.spot_price_per_hour) {
        j["spot_price_micro"] = o.spot_price_per_hour->n;
      }
      offers.push_back(std::move(j));
    }
    providers[name] = {{"fetched_at", to_unix(entry.fetched_at)}, {"offers", std::move(offers)}};
  }
  return json{{"version", 1}, {"providers", std::move(providers)}}.dump(1);
}

Result<OfferCache> offer_cache_from_json(std::string_view text)
{
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return std::unexpected(bad("not JSON"));
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<std::int64_t>() != 1) {
    return std::unexpected(bad("unknown version"));
  }
  if (!j.contains("providers") || !j["providers"].is_object()) {
    return std::unexpected(bad("no `providers` map"));
  }
  OfferCache out;
  for (const auto& [name, entry] : j["providers"].items()) {
    if (!entry.is_object() || !entry.contains("fetched_at") || !entry["fetched_at"].is_number_integer() ||
        !entry.contains("offers") || !entry["offers"].is_array()) {
      return std::unexpected(bad("provider `" + name + "` lacks fetched_at/offers"));
    }
    // Seconds since 1970 up to the year 2100: anything else is damage (and past 2262 would overflow
    // the clock's nanoseconds).
    const auto fetched_unix = entry["fetched_at"].get<std::int64_t>();
    if (fetched_unix < 0 || fetched_unix > 4'102'444'800) {
      return std::unexpected(bad("provider `" + name + "` has an impossible fetched_at"));
    }
    CachedProviderOffers c;
    c.fetched_at = from_unix(fetched_unix);
    for (const auto& o : entry["offers"]) {
      if (!o.is_object() || !o.contains("card") || !o["card"].is_string() || !o.contains("gpus") ||
          !o["gpus"].is_number_unsigned() || !o.contains("price_micro") || !o["price_micro"].is_number_integer()) {
        return std::unexpected(bad("an offer of `" + name + "` lacks card/gpus/price_micro"));
      }
      const auto gpus = o["gpus"].get<std::uint64_t>();
      const auto price = o["price_micro"].get<std::int64_t>();
      if (gpus < 1 || gpus > 64 || price <= 0) {
        return std::unexpected(bad("an offer of `" + name + "` has an impossible GPU count or price"));
      }
      Offer offer;
      offer.provider = name;
      offer.card = o["card"].get<std::string>();
      offer.gpus = static_cast<std::uint32_t>(gpus);
      offer.price_per_hour = MicroUsd{price};
      if (o.contains("spot_price_micro")) {
        if (!o["spot_price_micro"].is_number_integer() || o["spot_price_micro"].get<std::int64_t>() <= 0) {
          return std::unexpected(bad("an offer of `" + name + "` has a bad spot price"));
        }
        offer.spot_price_per_hour = MicroUsd{o["spot_price_micro"].get<std::int64_t>()};
      }
      if (o.contains("region") && !o["region"].is_string()) {
        return std::unexpected(bad("an offer of `" + name + "` has a region that is not text"));
      }
      offer.region = o.contains("region") ? o["region"].get<std::string>() : std::string{};
      offer.price_origin = "fetched " + utc_iso8601(c.fetched_at);
      c.offers.push_back(std::move(offer));
    }
    out.emplace(name, std::move(c));
  }
  return out;
}

namespace {

Result<OfferCache> read_cache(const std::filesystem::path& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return OfferCache{};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  auto parsed = offer_cache_from_json(ss.str());
  if (!parsed) {
    return fail(Errc::invalid_input, path.string() + ": " + parsed.error().message);
  }
  return parsed;
}

}  // namespace

Result<std::vector<Offer>> load_fresh_offers(const std::filesystem::path& path, TimePoint now, std::chrono::seconds max_age)
{
  TRY_ASSIGN(OfferCache cache, read_cache(path));
  std::vector<Offer> out;
  for (const auto& [name, entry] : cache) {
    if (now - entry.fetched_at <= max_age && entry.fetched_at <= now) {
      out.insert(out.end(), entry.offers.begin(), entry.offers.end());
    }
  }
  return out;
}

Result<std::vector<Offer>> refresh_offers(Provider& provider, const std::filesystem::path& path, TimePoint now)
{
  TRY_ASSIGN(std::vector<Offer> fetched, provider.fetch_offers());
  // One offer per (card, gpus): the cheapest.
  std::map<std::pair<std::string, std::uint32_t>, Offer> best;
  for (auto& o : fetched) {
    o.provider = std::string(provider.name());
    o.price_origin = "fetched " + utc_iso8601(now);
    const auto key = std::make_pair(o.card, o.gpus);
    auto it = best.find(key);
    if (it == best.end() || o.price_per_hour < it->second.price_per_hour) {
      best[key] = o;
    }
  }
  std::vector<Offer> offers;
  for (auto& [k, o] : best) {
    offers.push_back(std::move(o));
  }
  auto existing = read_cache(path);
  OfferCache cache = existing ? std::move(*existing) : OfferCache{};  // a damaged cache is rebuilt
  cache[std::string(provider.name())] = CachedProviderOffers{now, offers};
  std::error_code ec;
  if (!path.parent_path().empty()) {
    std::filesystem::create_directories(path.parent_path(), ec);
  }
  const auto tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << offer_cache_to_json(cache);
    if (!out) {
      return fail(Errc::internal, "cannot write the offer cache " + tmp + "; check the cache directory");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    return fail(Errc::internal, "cannot replace the offer cache " + path.string() + ": " + ec.message());
  }
  return offers;
}

}  // namespace gpurent
