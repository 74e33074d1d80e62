// SPDX-License-Identifier: MIT
#pragma once
// Vast.ai driver over the HttpClient port: search offers, rent (ask), stop/start, destroy.
// The base URL is the v0 API (…/api/v0); the paginated instance list lives beside it (…/api/v1).
#include <string>

#include "common/http_client.hpp"
#include "providers/provider.hpp"

namespace gpurent::vast {

inline constexpr const char* k_default_base_url = "https://console.vast.ai/api/v0";
inline constexpr const char* k_default_image = "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel";

class VastProvider final : public Provider {
public:
  VastProvider(HttpClient& http, std::string base_url, std::string api_key);
  [[nodiscard]] std::string_view name() const override { return "vast"; }
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
  [[nodiscard]] Result<HttpResponse> call(const HttpRequest& req, std::string_view what);
  // Registers the public key on the account (POST /ssh/) unless it is there already.
  [[nodiscard]] Result<void> ensure_ssh_key(std::string_view public_key);

  HttpClient& m_http;
  std::string m_base;
  std::string m_v1;  // m_base with its final /v0 replaced by /v1
  std::string m_key;
};

}  // namespace gpurent::vast
