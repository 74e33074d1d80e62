// SPDX-License-Identifier: MIT
#include "cli/catalog_support.hpp"

#include <algorithm>

#include "cli/build_info.hpp"
#include "cli/services.hpp"
#include "common/clock.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/market/catalog_cache.hpp"
#include "providers/market/snapshot.hpp"

namespace gpurent {
namespace {

using namespace std::chrono_literals;

std::string made_by()
{
  const BuildInfo b = build_info();
  return std::string(b.version) + " " + std::string(b.commit);
}

std::string host_of(std::string_view url)
{
  const auto scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  return std::string(rest.substr(0, rest.find('/')));
}

Result<std::filesystem::path> cache_dir(const Services& s)
{
  return market::catalog_cache_dir([&](const std::string& k) { return s.getenv(k); });
}

std::chrono::seconds max_age(const Config& cfg)
{
  return std::chrono::seconds{static_cast<std::int64_t>(cfg.catalog_max_age_hours * 3600.0)};
}

// One line per failed cloud: the reason, and what answers for it meanwhile. No "; " inside: in an
// error message that separates what failed from what to do (cli/errors.cpp).
std::string failure_line(const market::CloudRefresh& c)
{
  std::string why = c.why;
  for (auto at = why.find("; "); at != std::string::npos; at = why.find("; ", at)) {
    why.replace(at, 2, ", ");
  }
  if (c.kept_from) {
    return why + " (kept the copy fetched " + utc_iso8601(*c.kept_from).substr(0, 10) + ")";
  }
  return why + " (no cached copy: the shipped snapshot answers for " + c.cloud + ")";
}

// Runs the refresh and reports row warnings (at most 3 per cloud, then a count) on stderr.
Result<market::CatalogRefreshReport> run_refresh(Services& s, const Config& cfg, std::vector<std::string> clouds,
                                                 const market::CatalogReader& reader)
{
  TRY_ASSIGN(const auto dir, cache_dir(s));
  if (!s.http) {
    return fail(Errc::unavailable, "no network client in this run");
  }
  TRY_ASSIGN(HttpClient* http, s.http());
  TRY_ASSIGN(auto report, market::refresh_catalogs(*http, reader, dir, catalog_settings(cfg, std::move(clouds)), s.clock.now()));
  for (const auto& c : report.clouds) {
    const std::size_t shown = std::min<std::size_t>(c.warnings.size(), 3);
    for (std::size_t i = 0; i < shown; ++i) {
      report_warning(s, "catalogue: " + c.warnings[i]);
    }
    if (c.warnings.size() > shown) {
      report_warning(s, "catalogue: " + c.cloud + ": " + std::to_string(c.warnings.size() - shown) + " more row warning(s)");
    }
  }
  return report;
}

}  // namespace

std::vector<std::string> catalog_cloud_list(const Config& cfg)
{
  std::vector<std::string> out;
  if (cfg.catalog_clouds) {
    for (const auto part : split(*cfg.catalog_clouds, ',')) {
      if (!part.empty()) {
        out.emplace_back(part);
      }
    }
    return out;
  }
  for (const auto c : market::catalog_clouds()) {
    out.emplace_back(c);
  }
  return out;
}

market::CatalogRefreshSettings catalog_settings(const Config& cfg, std::vector<std::string> clouds)
{
  market::CatalogRefreshSettings st;
  st.base_url = cfg.catalog_url.value_or(std::string(market::k_catalog_url));
  st.fallback_url = cfg.catalog_fallback_url.value_or(std::string(market::k_catalog_fallback_url));
  st.clouds = std::move(clouds);
  st.made_by = made_by();
  return st;
}

CatalogRefreshSummary refresh_catalogue(Services& s, const Config& cfg, std::string_view only, const market::CatalogReader& reader)
{
  CatalogRefreshSummary sum;
  std::vector<std::string> clouds = catalog_cloud_list(cfg);
  if (!only.empty()) {
    if (std::find(clouds.begin(), clouds.end(), only) == clouds.end()) {
      return sum;  // not a catalogue cloud, or not one catalog_clouds lists
    }
    clouds = {std::string(only)};
  }
  sum.asked = !clouds.empty();
  if (!sum.asked) {
    return sum;
  }
  const std::string host = host_of(catalog_settings(cfg, {}).base_url);
  s.err << "fetching the price catalogue of " << clouds.size() << (clouds.size() == 1 ? " cloud" : " clouds") << " from "
        << host << '\n';
  auto report = run_refresh(s, cfg, clouds, reader);
  if (!report) {
    std::string why = report.error().message;
    for (auto at = why.find("; "); at != std::string::npos; at = why.find("; ", at)) {
      why.replace(at, 2, ", ");
    }
    sum.failed.push_back("catalogue: " + why);
    return sum;
  }
  for (const auto& c : report->clouds) {
    if (c.outcome == market::CloudRefreshOutcome::fetched || c.outcome == market::CloudRefreshOutcome::not_modified) {
      ++sum.clouds_ok;
      sum.offers += c.offers;
    } else {
      sum.failed.push_back(failure_line(c));
    }
  }
  return sum;
}

void refresh_stale_catalogue(Services& s, const Config& cfg, const market::CatalogReader& reader)
{
  if (!cfg.catalog_auto_refresh || !s.http) {
    return;  // the user said only `offers --refresh` fetches it, or this run has no network client
  }
  auto dir = cache_dir(s);
  if (!dir) {
    return;  // no cache directory known: nowhere to keep it (the snapshot answers)
  }
  auto cache = market::load_catalog_cache(*dir, market::CatalogLoad::clouds_only);
  const bool never_fetched = cache && !cache->has_value();
  const auto due = !cache || never_fetched
                       ? catalog_cloud_list(cfg)  // a damaged cache is rebuilt
                       : market::clouds_due(**cache, catalog_cloud_list(cfg), s.clock.now(), max_age(cfg));
  // The first fetch: no cache, or one holding no cloud yet (every earlier try failed; those are
  // not repeated within the hour, so an offline machine pays one failed connection an hour).
  const bool first = never_fetched || (cache && (*cache)->clouds.empty());
  if (due.empty()) {
    return;
  }
  const std::string clouds = std::to_string(due.size()) + (due.size() == 1 ? " cloud" : " clouds");
  if (first) {
    s.err << "fetching the price catalogue of " << clouds << " from " << host_of(catalog_settings(cfg, {}).base_url)
          << " (no copy cached yet; --offline or catalog_auto_refresh = false skips this)\n";
  } else {
    s.err << "refreshing the price catalogue of " << clouds << " (older than " << cfg.catalog_max_age_hours
          << " h; --offline skips this)\n";
  }
  const std::string snapshot = "the shipped snapshot of " + std::string(market::snapshot_date()) + " answers";
  auto report = run_refresh(s, cfg, due, reader);
  if (!report) {
    report_warning(s, (first ? "the price catalogue was not fetched (" + snapshot + "): "
                             : std::string("the price catalogue was not refreshed: ")) +
                          report.error().message);
    return;
  }
  if (first && report->failed() == report->clouds.size()) {
    // Nothing came (most often: no network): one line, the first cloud's reason.
    const std::string why = report->clouds.empty() ? std::string("no cloud answered") : report->clouds.front().why;
    report_warning(s, "the price catalogue was not fetched (" + snapshot + "): " + why);
    return;
  }
  for (const auto& c : report->clouds) {
    if (c.outcome == market::CloudRefreshOutcome::failed || c.outcome == market::CloudRefreshOutcome::not_tried) {
      report_warning(s, "catalogue: " + failure_line(c));
    }
  }
}

std::vector<Offer> catalogue_offers(Services& s, const Config& cfg, market::CatalogLoad load)
{
  auto dir = cache_dir(s);
  if (!dir) {
    return {};
  }
  auto cache = market::load_catalog_cache(*dir, load);
  if (!cache) {
    report_warning(s, "the catalogue cache was not used: " + cache.error().message);
    return {};
  }
  if (!cache->has_value()) {
    return {};
  }
  const auto listed = catalog_cloud_list(cfg);
  std::vector<std::string_view> cards;
  for (const auto& c : card_catalog()) {
    cards.push_back(c.id);
  }
  std::sort(cards.begin(), cards.end());
  std::vector<Offer> out = std::move((*cache)->offers);
  std::erase_if(out, [&](const Offer& o) {
    // A cloud no longer listed, or a card this build does not know (a cache written by another).
    return std::find(listed.begin(), listed.end(), o.provider) == listed.end() ||
           !std::binary_search(cards.begin(), cards.end(), std::string_view(o.card));
  });
  return out;
}

std::vector<CachedCatalogText> cached_catalogue_texts(Services& s, const Config& cfg)
{
  std::vector<CachedCatalogText> out;
  auto dir = cache_dir(s);
  if (!dir) {
    return out;
  }
  for (const auto& cloud : catalog_cloud_list(cfg)) {
    auto text = market::read_cached_catalog(*dir, cloud);
    if (!text) {
      report_warning(s, "catalogue: " + cloud + ": " + text.error().message);
    } else if (text->has_value()) {
      out.push_back(CachedCatalogText{cloud, std::move(**text)});
    }
  }
  return out;
}

}  // namespace gpurent
