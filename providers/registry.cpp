// SPDX-License-Identifier: MIT
#include "providers/registry.hpp"

#include "providers/lambda/lambda_provider.hpp"
#include "providers/runpod/runpod_provider.hpp"
#include "providers/vast/vast_provider.hpp"

namespace gpurent {
namespace {

std::string or_default(const std::string& v, const char* d)
{
  return v.empty() ? std::string(d) : v;
}

std::unique_ptr<Provider> make_lambda(HttpClient& http, const DriverSettings& s)
{
  return std::make_unique<lambda::LambdaProvider>(http, or_default(s.base_url, lambda::k_default_base_url), s.api_key);
}

std::unique_ptr<Provider> make_runpod(HttpClient& http, const DriverSettings& s)
{
  return std::make_unique<runpod::RunpodProvider>(http, or_default(s.base_url, runpod::k_default_base_url),
                                                  or_default(s.graphql_url, runpod::k_default_graphql_url), s.api_key);
}

std::unique_ptr<Provider> make_vast(HttpClient& http, const DriverSettings& s)
{
  return std::make_unique<vast::VastProvider>(http, or_default(s.base_url, vast::k_default_base_url), s.api_key);
}

const std::vector<DriverInfo>& table()
{
  static const std::vector<DriverInfo> k_table = {
      {"lambda", "LAMBDA_API_KEY", "GPURENT_LAMBDA_API_URL", lambda::k_default_base_url,
       {MinInterval{"/instance-operations/launch", std::chrono::duration_cast<std::chrono::milliseconds>(lambda::k_launch_interval)}},
       &make_lambda},
      {"runpod", "RUNPOD_API_KEY", "GPURENT_RUNPOD_API_URL", runpod::k_default_base_url, {}, &make_runpod},
      {"vast", "VAST_API_KEY", "GPURENT_VAST_API_URL", vast::k_default_base_url, {}, &make_vast},
  };
  return k_table;
}

}  // namespace

std::span<const DriverInfo> driver_registry()
{
  return table();
}

const DriverInfo* find_driver(std::string_view name) noexcept
{
  for (const auto& d : table()) {
    if (d.name == name) {
      return &d;
    }
  }
  return nullptr;
}

}  // namespace gpurent
