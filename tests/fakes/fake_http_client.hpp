// SPDX-License-Identifier: MIT
#pragma once
// An HttpClient that answers from canned responses per "METHOD URL" and records every request.
// A route answers its responses in order and repeats the last one.
#include <deque>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/http_client.hpp"

namespace gpurent::test {

class FakeHttpClient final : public HttpClient {
public:
  // `key` is "METHOD URL" (exact URL, query included).
  void on(const std::string& key, HttpResponse response) { m_routes[key].push_back(std::move(response)); }
  void on(const std::string& key, long status, std::string body, HttpHeaders headers = {})
  {
    on(key, HttpResponse{status, std::move(headers), std::move(body)});
  }
  // A transport failure (timeout, DNS…) for this route.
  void fail_with(const std::string& key, Error e) { m_failures[key] = std::move(e); }

  [[nodiscard]] Result<HttpResponse> send(const HttpRequest& request) override
  {
    m_requests.push_back(request);
    const std::string key = route_key(request);
    if (auto f = m_failures.find(key); f != m_failures.end()) {
      return std::unexpected(f->second);
    }
    auto it = m_routes.find(key);
    if (it == m_routes.end() || it->second.empty()) {
      return HttpResponse{599, {}, "no fake route for " + key};
    }
    HttpResponse r = it->second.front();
    if (it->second.size() > 1) {
      it->second.pop_front();
    }
    return r;
  }

  [[nodiscard]] const std::vector<HttpRequest>& requests() const { return m_requests; }
  [[nodiscard]] std::size_t count(const std::string& key) const
  {
    std::size_t n = 0;
    for (const auto& r : m_requests) {
      n += route_key(r) == key ? 1U : 0U;
    }
    return n;
  }

private:
  // Built with append: GCC 12 warns (-Warray-bounds, a known false positive) on operator+ here.
  static std::string route_key(const HttpRequest& r)
  {
    std::string key;
    key.reserve(r.method.size() + 1 + r.url.size());
    key.append(r.method).append(1, ' ').append(r.url);
    return key;
  }

  std::map<std::string, std::deque<HttpResponse>> m_routes;
  std::map<std::string, Error> m_failures;
  std::vector<HttpRequest> m_requests;
};

// Reads a fixture file (tests/data/...) whole.
inline std::string read_fixture(const std::string& relative)
{
  // Built with append: GCC 12 warns (-Warray-bounds, a known false positive) on operator+ here.
  std::string path(GPURENT_TEST_DATA);
  path.append("/").append(relative);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpurent::test
