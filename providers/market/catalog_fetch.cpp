// SPDX-License-Identifier: MIT
#include "providers/market/catalog_fetch.hpp"

#include <algorithm>
#include <array>

namespace gpurent::market {
namespace {

// The clouds with GPU rows in SkyPilot's catalogue (docs/market.md, "Clouds").
constexpr std::array<std::string_view, 15> k_clouds{
    "aws",  "gcp",     "lambda", "runpod",  "vast",      "nebius", "hyperbolic", "primeintellect",
    "shadeform", "cudo", "seeweb", "mithril", "simplepod", "verda", "jarvislabs",
};

std::string host_of(std::string_view url)
{
  const auto scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  return std::string(rest.substr(0, rest.find('/')));
}

HttpRequest conditional_get(const CatalogFetchRequest& r, std::string url)
{
  HttpRequest req;
  req.method = "GET";
  req.url = std::move(url);
  req.timeout = r.timeout;
  req.max_response_bytes = r.max_bytes;
  if (!r.known.etag.empty()) {
    req.headers.emplace_back("If-None-Match", r.known.etag);
  }
  if (!r.known.last_modified.empty()) {
    req.headers.emplace_back("If-Modified-Since", r.known.last_modified);
  }
  return req;
}

// The error for an answer that is neither 200, 304 nor a first 429.
Error status_error(const CatalogFetchRequest& r, const HttpResponse& resp, const std::string& url, bool after_429)
{
  const std::string head = r.cloud + ": HTTP " + std::to_string(resp.status) + " from " + url;
  if (resp.status == 429) {
    return Error{Errc::quota, head + (after_429 ? " after HTTP 429 from " + host_of(r.base_url) : std::string()) +
                                  " (rate limited, try again later)"};
  }
  if (resp.status == 404) {
    return Error{Errc::not_found, head + " (no such file: is `" + r.cloud + "` a cloud of the catalogue's " +
                                      std::string(k_catalog_schema) + " schema?)"};
  }
  if (resp.status >= 500) {
    return Error{Errc::unavailable, head + " (the server failed, try again later)"};
  }
  return Error{Errc::invalid_input, head + " (not a catalogue answer)"};
}

}  // namespace

std::span<const std::string_view> catalog_clouds() noexcept { return k_clouds; }

bool is_catalog_cloud(std::string_view cloud) noexcept
{
  return std::find(k_clouds.begin(), k_clouds.end(), cloud) != k_clouds.end();
}

std::string catalog_file_url(std::string_view base, std::string_view cloud)
{
  while (!base.empty() && base.back() == '/') {
    base.remove_suffix(1);
  }
  std::string url(base);
  url.append("/").append(k_catalog_schema).append("/").append(cloud).append("/vms.csv");
  return url;
}

Result<FetchedCatalog> fetch_catalog(HttpClient& http, const CatalogFetchRequest& request)
{
  bool after_429 = false;
  std::string url = catalog_file_url(request.base_url, request.cloud);
  for (;;) {
    auto resp = http.send(conditional_get(request, url));
    if (!resp) {
      Error e = resp.error();
      e.message = request.cloud + ": " + e.message;
      return std::unexpected(std::move(e));
    }
    if (resp->status == 200) {
      FetchedCatalog f;
      f.status = CatalogFetchStatus::fetched;
      f.text = std::move(resp->body);
      f.validators.etag = resp->header("etag").value_or("");
      f.validators.last_modified = resp->header("last-modified").value_or("");
      f.url = url;
      f.from_fallback = after_429;
      return f;
    }
    if (resp->status == 304) {
      FetchedCatalog f;
      f.status = CatalogFetchStatus::not_modified;
      f.validators = request.known;
      f.url = url;
      f.from_fallback = after_429;
      return f;
    }
    if (resp->status == 429 && !after_429 && !request.fallback_url.empty()) {
      after_429 = true;
      url = catalog_file_url(request.fallback_url, request.cloud);
      continue;
    }
    return std::unexpected(status_error(request, *resp, url, after_429));
  }
}

}  // namespace gpurent::market
