// SPDX-License-Identifier: MIT
#pragma once
// Downloading one cloud's catalogue file (SkyPilot's `catalogs/v8/<cloud>/vms.csv`) over the
// HttpClient port: a conditional GET (If-None-Match / If-Modified-Since), a timeout, and on HTTP
// 429 the catalogue's published fallback host. No file I/O and no CSV reading here: what comes
// back is text for the catalogue reader to validate (providers/market/catalog_refresh.hpp).
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/http_client.hpp"
#include "common/result.hpp"

namespace gpurent::market {

// Where SkyPilot's own client fetches the catalogue (sky/skylet/constants.py, sky/catalog/common.py
// in github.com/skypilot-org/skypilot; docs/market.md): the `catalogs` folder, and the mirror it
// falls back to on HTTP 429.
inline constexpr std::string_view k_catalog_url = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs";
inline constexpr std::string_view k_catalog_fallback_url = "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs";
// The schema version gpurent reads (SkyPilot's CATALOG_SCHEMA_VERSION).
inline constexpr std::string_view k_catalog_schema = "v8";

// The clouds whose catalogue has GPU rows, by SkyPilot's lowercase cloud key: the default list
// of `catalog_clouds`.
[[nodiscard]] std::span<const std::string_view> catalog_clouds() noexcept;
[[nodiscard]] bool is_catalog_cloud(std::string_view cloud) noexcept;

// <base>/v8/<cloud>/vms.csv (one '/' between the parts whatever `base` ends with).
[[nodiscard]] std::string catalog_file_url(std::string_view base, std::string_view cloud);

// What the server said about the copy we hold, sent back to ask "changed since?".
struct CatalogValidators {
  std::string etag;
  std::string last_modified;
  [[nodiscard]] bool empty() const noexcept { return etag.empty() && last_modified.empty(); }
};

struct CatalogFetchRequest {
  std::string cloud;
  std::string base_url{k_catalog_url};
  std::string fallback_url{k_catalog_fallback_url};  // "" = no fallback
  CatalogValidators known;                           // empty: an unconditional GET
  std::chrono::milliseconds timeout{60'000};         // per request
  std::uint64_t max_bytes = 64ULL * 1024 * 1024;
};

enum class CatalogFetchStatus { fetched, not_modified };

struct FetchedCatalog {
  CatalogFetchStatus status = CatalogFetchStatus::fetched;
  std::string text;               // the body (fetched only)
  CatalogValidators validators;   // from the answering server (fetched), else the known ones
  std::string url;                // the URL that answered
  bool from_fallback = false;
};

// One cloud's file. 200 -> fetched (the text is NOT validated here); 304 -> not_modified; 429 ->
// the same path on the fallback host (once); anything else, a second 429, or a transport failure
// -> an error whose message starts with the cloud and names the URL and the status. A transport
// failure keeps the client's code and `not_sent` (the caller may then skip the same host's other
// files).
[[nodiscard]] Result<FetchedCatalog> fetch_catalog(HttpClient& http, const CatalogFetchRequest& request);

}  // namespace gpurent::market
