// SPDX-License-Identifier: MIT
#pragma once
// A decorator over HttpClient: retries with exponential backoff, only for 429, 5xx and
// transport timeouts/unavailability, honouring Retry-After, within a deadline from the Clock;
// spaces requests to rate-limited endpoints (Lambda: one launch per 12 s). Logs method, URL
// and status when given a log stream; never headers or bodies (keys live in headers).
#include <chrono>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "common/http_client.hpp"

namespace gpurent {

struct MinInterval {
  std::string url_contains;             // e.g. "/instance-operations/launch"
  std::chrono::milliseconds interval;   // at least this long between two such requests
};

struct RetryPolicy {
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{1'000};
  std::chrono::milliseconds max_backoff{30'000};
  std::chrono::milliseconds deadline{120'000};  // for one send(), waits included
  std::vector<MinInterval> min_intervals;
  std::optional<std::chrono::milliseconds> request_timeout;  // overrides each request's own timeout
};

// POST and PUT may create things, and DELETE destroys them: they are retried only on 429 (the
// server did not act on them). A destroy is repeated only by the lifecycle, after get() showed
// the server still there (a repeated DELETE answers RunPod's 400 "Invalid Pod ID." or a 404).
// GET and HEAD are also retried on 5xx and transport timeouts.
[[nodiscard]] bool is_idempotent(std::string_view method) noexcept;

class RetryingHttpClient final : public HttpClient {
public:
  RetryingHttpClient(HttpClient& inner, Clock& clock, RetryPolicy policy, std::ostream* log = nullptr);
  [[nodiscard]] Result<HttpResponse> send(const HttpRequest& request) override;

private:
  void wait_for_slot(const std::string& url);
  void log_line(const std::string& line);

  HttpClient& m_inner;
  Clock& m_clock;
  RetryPolicy m_policy;
  std::ostream* m_log;
  std::map<std::string, std::chrono::system_clock::time_point> m_last_sent;  // per MinInterval key
};

// The URL with every query value replaced by "***" (for logs).
[[nodiscard]] std::string redact_url(std::string_view url);

}  // namespace gpurent
