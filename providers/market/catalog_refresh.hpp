// SPDX-License-Identifier: MIT
#pragma once
// Refreshing the catalogue cache: each cloud's file is fetched (catalog_fetch.hpp), read by the
// catalogue reader (a port: issue #41's read_catalog_csv + offers_from_catalog), and only when
// the reader accepts it does it replace the cached file and that cloud's offers. A cloud that
// fails keeps what the cache had, and the report says which and why.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_client.hpp"
#include "common/result.hpp"
#include "providers/catalog.hpp"
#include "providers/market/catalog_cache.hpp"
#include "providers/market/catalog_fetch.hpp"

namespace gpurent::market {

// What the catalogue reader makes of one cloud's file: its GPU offers (cards mapped; price
// absent rows left out) and the warnings about single rows ("runpod line 12: …").
struct CatalogReading {
  std::vector<Offer> offers;
  std::vector<std::string> warnings;
};
// The reader port. An error refuses the whole file (not CSV, an HTML page, an unknown column
// layout, a truncated record, no GPU rows) and must name the cloud and line.
using CatalogReader = std::function<Result<CatalogReading>(std::string_view cloud, std::string_view text)>;

struct CatalogRefreshSettings {
  std::string base_url{k_catalog_url};
  std::string fallback_url{k_catalog_fallback_url};
  std::vector<std::string> clouds;             // in this order
  std::chrono::milliseconds timeout{60'000};   // per request
  std::string made_by;                         // this build (a cached file read by another is read again)
};

enum class CloudRefreshOutcome {
  fetched,       // a new file, validated, replaced the cached one
  not_modified,  // HTTP 304: the cached file is current
  failed,        // the cached copy (if any) is kept
  not_tried,     // skipped: the host could not be reached for an earlier cloud
};

struct CloudRefresh {
  std::string cloud;
  CloudRefreshOutcome outcome = CloudRefreshOutcome::failed;
  std::string why;                         // failed / not_tried: the reason, naming the cloud
  std::size_t offers = 0;                  // the cloud's offers now in the cache
  std::vector<std::string> warnings;       // the reader's row warnings (fetched or read again)
  std::optional<CatalogTime> kept_from;    // failed: when the kept copy was fetched (none: no copy)
  bool from_fallback = false;              // the fallback host answered (after a 429)
};

struct CatalogRefreshReport {
  std::vector<CloudRefresh> clouds;
  [[nodiscard]] std::size_t succeeded() const noexcept;  // fetched or not_modified
  [[nodiscard]] std::size_t failed() const noexcept;     // failed or not_tried
};

// Refreshes `settings.clouds` in the cache at `dir` (other clouds' entries are kept) and records
// the attempt time. Errors only when the cache itself cannot be written; per-cloud failures are in
// the report. A damaged offers.tsv is rebuilt (its clouds are fetched without validators).
[[nodiscard]] Result<CatalogRefreshReport> refresh_catalogs(HttpClient& http, const CatalogReader& reader,
                                                            const std::filesystem::path& dir,
                                                            const CatalogRefreshSettings& settings, CatalogTime now);

// The clouds of `wanted` an automatic refresh should fetch: those with no entry in `cache` or
// one last confirmed more than `max_age` ago; none while the last attempt is less than
// min(max_age, 1 h) old (a failing network is not asked on every run).
[[nodiscard]] std::vector<std::string> clouds_due(const CatalogCache& cache, const std::vector<std::string>& wanted,
                                                  CatalogTime now, std::chrono::seconds max_age);

}  // namespace gpurent::market
