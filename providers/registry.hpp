// SPDX-License-Identifier: MIT
#pragma once
// Provider drivers by name: one table from the registry key to a factory (ccache's
// scheme -> backend table). Where a base URL or key comes from is the caller's business.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/http_client.hpp"
#include "common/result.hpp"
#include "providers/http/retrying_http_client.hpp"
#include "providers/provider.hpp"

namespace gpurent {

struct DriverSettings {
  std::string base_url;     // empty: the driver's default
  std::string graphql_url;  // RunPod's GraphQL endpoint (prices); empty: default
  std::string api_key;
};

struct DriverInfo {
  std::string_view name;          // "lambda"
  std::string_view key_env;       // "LAMBDA_API_KEY"
  std::string_view url_env;       // "GPURENT_LAMBDA_API_URL"
  std::string_view default_url;
  std::vector<MinInterval> rate_limits;  // requests the provider limits (for RetryingHttpClient)
  std::unique_ptr<Provider> (*make)(HttpClient& http, const DriverSettings& settings);
};

[[nodiscard]] std::span<const DriverInfo> driver_registry();
// nullptr when the provider has no API driver (use `gpurent attach`).
[[nodiscard]] const DriverInfo* find_driver(std::string_view name) noexcept;

}  // namespace gpurent
