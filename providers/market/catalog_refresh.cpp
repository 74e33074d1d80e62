// SPDX-License-Identifier: MIT
#include "providers/market/catalog_refresh.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/clock.hpp"

namespace gpurent::market {
namespace {

constexpr std::uint32_t k_max_gpus = 64;

std::string host_of(std::string_view url)
{
  const auto scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  return std::string(rest.substr(0, rest.find('/')));
}

// The reader's offers as the cache keeps them: this cloud's, priced, one per (card, GPUs,
// region, instance type, upstream, GPU only) (AWS repeats a row per availability zone): the cheapest.
std::vector<Offer> cache_form(std::string_view cloud, std::vector<Offer> offers, std::vector<std::string>& warnings)
{
  std::map<std::tuple<std::string, std::uint32_t, std::string, std::string, std::string, bool>, Offer> best;
  std::size_t dropped = 0;
  for (auto& o : offers) {
    if (o.card.empty() || o.gpus < 1 || o.gpus > k_max_gpus || o.price_per_hour.n <= 0 ||
        (o.spot_price_per_hour && o.spot_price_per_hour->n <= 0)) {
      ++dropped;
      continue;
    }
    o.provider = std::string(cloud);
    auto key = std::make_tuple(o.card, o.gpus, o.region, o.instance_type, o.upstream, o.gpu_only);
    auto it = best.find(key);
    if (it == best.end()) {
      best.emplace(std::move(key), std::move(o));
    } else if (o.price_per_hour < it->second.price_per_hour) {
      it->second = std::move(o);
    }
  }
  if (dropped > 0) {
    warnings.push_back(std::string(cloud) + ": " + std::to_string(dropped) +
                       " offer(s) from the reader without a card, a GPU count of 1.." + std::to_string(k_max_gpus) +
                       " or a price above 0 were left out");
  }
  std::vector<Offer> out;
  out.reserve(best.size());
  for (auto& [k, o] : best) {
    out.push_back(std::move(o));
  }
  return out;
}

CachedCloud* find_mutable(CatalogCache& cache, std::string_view cloud)
{
  for (auto& c : cache.clouds) {
    if (c.cloud == cloud) {
      return &c;
    }
  }
  return nullptr;
}

}  // namespace

std::size_t CatalogRefreshReport::succeeded() const noexcept
{
  return static_cast<std::size_t>(std::count_if(clouds.begin(), clouds.end(), [](const CloudRefresh& c) {
    return c.outcome == CloudRefreshOutcome::fetched || c.outcome == CloudRefreshOutcome::not_modified;
  }));
}

std::size_t CatalogRefreshReport::failed() const noexcept { return clouds.size() - succeeded(); }

Result<CatalogRefreshReport> refresh_catalogs(HttpClient& http, const CatalogReader& reader, const std::filesystem::path& dir,
                                              const CatalogRefreshSettings& settings, CatalogTime now)
{
  auto loaded = load_catalog_cache(dir);
  CatalogCache cache = loaded && *loaded ? std::move(**loaded) : CatalogCache{};  // damaged: rebuilt
  CatalogRefreshReport report;
  std::string unreachable;  // set once the host could not be reached: the rest are not tried
  for (const auto& cloud : settings.clouds) {
    CloudRefresh r;
    r.cloud = cloud;
    const CachedCloud* had = cache.find(cloud);
    if (had != nullptr) {
      r.kept_from = had->fetched_at;
      r.offers = had->count;
    }
    if (!unreachable.empty()) {
      r.outcome = CloudRefreshOutcome::not_tried;
      r.why = cloud + ": not tried, " + unreachable;
      report.clouds.push_back(std::move(r));
      continue;
    }
    auto raw = read_cached_catalog(dir, cloud);
    const bool have_raw = raw && raw->has_value();
    CatalogFetchRequest req;
    req.cloud = cloud;
    req.base_url = settings.base_url;
    req.fallback_url = settings.fallback_url;
    req.timeout = settings.timeout;
    if (had != nullptr && have_raw) {
      req.known = had->validators;  // only a copy we hold may be answered "not modified"
    }
    auto got = fetch_catalog(http, req);
    if (!got) {
      r.outcome = CloudRefreshOutcome::failed;
      r.why = got.error().message;
      if (got.error().not_sent || got.error().code == Errc::timeout) {
        unreachable = host_of(settings.base_url) + " could not be reached (" + cloud + ": " +
                      (got.error().code == Errc::timeout ? "timed out" : "no connection") + ")";
      }
      report.clouds.push_back(std::move(r));
      continue;
    }
    r.from_fallback = got->from_fallback;
    if (got->status == CatalogFetchStatus::not_modified) {
      if (had == nullptr || !have_raw) {
        r.outcome = CloudRefreshOutcome::failed;
        r.why = cloud + ": HTTP 304 from " + got->url + " for a file not cached here";
        report.clouds.push_back(std::move(r));
        continue;
      }
      if (had->made_by != settings.made_by) {
        // Another build read it: read it again, so that this build's names and quirks apply.
        auto reading = reader(cloud, **raw);
        if (!reading) {
          r.outcome = CloudRefreshOutcome::failed;
          r.why = cloud + ": the cached file no longer reads: " + reading.error().message;
          report.clouds.push_back(std::move(r));
          continue;
        }
        r.warnings = std::move(reading->warnings);
        CachedCloud entry = *had;
        entry.checked_at = now;
        entry.made_by = settings.made_by;
        auto offers = cache_form(cloud, std::move(reading->offers), r.warnings);
        r.offers = offers.size();
        put_cloud(cache, std::move(entry), std::move(offers));
      } else if (CachedCloud* entry = find_mutable(cache, cloud); entry != nullptr) {
        entry->checked_at = now;
        const std::string day = utc_iso8601(now).substr(0, 10);
        for (std::size_t i = entry->first; i < entry->first + entry->count && i < cache.offers.size(); ++i) {
          cache.offers[i].price_date = day;
        }
      }
      r.outcome = CloudRefreshOutcome::not_modified;
      report.clouds.push_back(std::move(r));
      continue;
    }
    auto reading = reader(cloud, got->text);
    if (!reading) {
      r.outcome = CloudRefreshOutcome::failed;
      const std::string& why = reading.error().message;
      r.why = (why.starts_with(cloud) ? why : cloud + ": " + why) + " (from " + got->url + ")";
      report.clouds.push_back(std::move(r));
      continue;
    }
    if (auto stored = store_catalog(dir, cloud, got->text); !stored) {
      r.outcome = CloudRefreshOutcome::failed;
      r.why = cloud + ": " + stored.error().message;
      report.clouds.push_back(std::move(r));
      continue;
    }
    r.warnings = std::move(reading->warnings);
    CachedCloud entry;
    entry.cloud = cloud;
    entry.fetched_at = now;
    entry.checked_at = now;
    entry.made_by = settings.made_by;
    entry.validators = got->validators;
    auto offers = cache_form(cloud, std::move(reading->offers), r.warnings);
    r.offers = offers.size();
    r.kept_from.reset();
    put_cloud(cache, std::move(entry), std::move(offers));
    r.outcome = CloudRefreshOutcome::fetched;
    report.clouds.push_back(std::move(r));
  }
  cache.tried_at = now;
  TRY(save_catalog_cache(dir, cache));
  return report;
}

std::vector<std::string> clouds_due(const CatalogCache& cache, const std::vector<std::string>& wanted, CatalogTime now,
                                    std::chrono::seconds max_age)
{
  const auto pause = std::min<std::chrono::seconds>(max_age, std::chrono::hours{1});
  if (cache.tried_at <= now && now - cache.tried_at < pause) {
    return {};
  }
  std::vector<std::string> due;
  for (const auto& cloud : wanted) {
    const CachedCloud* c = cache.find(cloud);
    if (c == nullptr || c->checked_at > now || now - c->checked_at > max_age) {
      due.push_back(cloud);
    }
  }
  return due;
}

}  // namespace gpurent::market
