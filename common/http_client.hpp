// SPDX-License-Identifier: MIT
#pragma once
// HttpClient port: gpurent structs only, no curl types. The one libcurl implementation is
// providers/http/curl_http_client.cpp, loaded at run time from the IO module.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;  // secrets go here (Authorization), never into the URL
  std::string body;
  std::chrono::milliseconds timeout{30'000};
  std::uint64_t max_response_bytes = 64ULL * 1024 * 1024;
};

struct HttpResponse {
  long status = 0;
  HttpHeaders headers;  // names lower-cased
  std::string body;
  [[nodiscard]] std::optional<std::string> header(std::string_view lower_name) const
  {
    for (const auto& [k, v] : headers) {
      if (k == lower_name) {
        return v;
      }
    }
    return std::nullopt;
  }
};

class HttpClient {
public:
  virtual ~HttpClient() = default;
  // Transport-level failures only (DNS, TLS, timeout) are errors; any HTTP status is a response.
  [[nodiscard]] virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
};

}  // namespace gpurent
