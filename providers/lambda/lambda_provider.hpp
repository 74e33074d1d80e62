// SPDX-License-Identifier: MIT
#pragma once
// Lambda Cloud driver over the HttpClient port. No stop, no hibernate, no spot.
#include <string>

#include "common/http_client.hpp"
#include "providers/provider.hpp"

namespace gpurent::lambda {

inline constexpr const char* k_default_base_url = "https://cloud.lambda.ai";
// "Requests to the /instance-operations/launch endpoint are limited to one request per 12
// seconds" (Lambda Cloud API v1.10.0 description, https://docs-api.lambda.ai/api/cloud).
inline constexpr std::chrono::seconds k_launch_interval{12};

class LambdaProvider final : public Provider {
public:
  LambdaProvider(HttpClient& http, std::string base_url, std::string api_key);
  [[nodiscard]] std::string_view name() const override { return "lambda"; }
  [[nodiscard]] std::optional<std::string> unsupported(Feature f) const override;
  [[nodiscard]] Result<std::vector<Offer>> fetch_offers() override;
  [[nodiscard]] Result<Instance> launch(const LaunchRequest& request) override;
  [[nodiscard]] Result<std::optional<Instance>> get(std::string_view id) override;
  [[nodiscard]] Result<std::vector<Instance>> list() override;
  [[nodiscard]] Result<void> stop(std::string_view id) override;
  [[nodiscard]] Result<void> start(std::string_view id) override;
  [[nodiscard]] Result<void> hibernate(std::string_view id) override;
  [[nodiscard]] Result<void> terminate(std::string_view id) override;

private:
  [[nodiscard]] HttpRequest request(std::string method, std::string_view path, std::string body = {}) const;
  [[nodiscard]] Result<std::string> call(const HttpRequest& req, std::string_view what);
  [[nodiscard]] Result<std::string> ensure_ssh_key(std::string_view public_key);

  HttpClient& m_http;
  std::string m_base;
  std::string m_key;
};

}  // namespace gpurent::lambda
