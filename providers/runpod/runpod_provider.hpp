// SPDX-License-Identifier: MIT
#pragma once
// RunPod driver (REST v1 for pods, GraphQL for GPU prices) over the HttpClient port.
#include <string>

#include "common/http_client.hpp"
#include "providers/provider.hpp"

namespace gpurent::runpod {

inline constexpr const char* k_default_base_url = "https://rest.runpod.io/v1";
inline constexpr const char* k_default_graphql_url = "https://api.runpod.io/graphql";
inline constexpr const char* k_default_image = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04";

class RunpodProvider final : public Provider {
public:
  RunpodProvider(HttpClient& http, std::string base_url, std::string graphql_url, std::string api_key);
  [[nodiscard]] std::string_view name() const override { return "runpod"; }
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
  [[nodiscard]] HttpRequest request(std::string method, std::string url, std::string body = {}) const;
  [[nodiscard]] Result<HttpResponse> call(const HttpRequest& req, std::string_view what);

  HttpClient& m_http;
  std::string m_base;
  std::string m_graphql;
  std::string m_key;
};

}  // namespace gpurent::runpod
