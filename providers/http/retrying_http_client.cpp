// SPDX-License-Identifier: MIT
#include "providers/http/retrying_http_client.hpp"

#include <algorithm>
#include <ostream>
#include <utility>

#include "providers/provider.hpp"

namespace gpurent {

bool is_idempotent(std::string_view method) noexcept
{
  return method == "GET" || method == "HEAD";
}

std::string redact_url(std::string_view url)
{
  const auto q = url.find('?');
  if (q == std::string_view::npos) {
    return std::string(url);
  }
  std::string out(url.substr(0, q + 1));
  std::string_view rest = url.substr(q + 1);
  bool first = true;
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    out += first ? "" : "&";
    out += std::string(pair.substr(0, eq));
    if (eq != std::string_view::npos) {
      out += "=***";
    }
    first = false;
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
  }
  return out;
}

RetryingHttpClient::RetryingHttpClient(HttpClient& inner, Clock& clock, RetryPolicy policy, std::ostream* log)
    : m_inner(inner), m_clock(clock), m_policy(std::move(policy)), m_log(log)
{
}

void RetryingHttpClient::log_line(const std::string& line)
{
  if (m_log != nullptr) {
    *m_log << "gpurent: http: " << line << '\n';
  }
}

void RetryingHttpClient::wait_for_slot(const std::string& url)
{
  for (const auto& rule : m_policy.min_intervals) {
    if (url.find(rule.url_contains) == std::string::npos) {
      continue;
    }
    const auto it = m_last_sent.find(rule.url_contains);
    if (it != m_last_sent.end()) {
      const auto ready = it->second + rule.interval;
      const auto now = m_clock.now();
      if (now < ready) {
        const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(ready - now);
        log_line("waiting " + std::to_string(wait.count()) + " ms (rate limit of " + rule.url_contains + ")");
        m_clock.sleep_for(wait);
      }
    }
    m_last_sent[rule.url_contains] = m_clock.now();
  }
}

Result<HttpResponse> RetryingHttpClient::send(const HttpRequest& request)
{
  const auto deadline = m_clock.now() + m_policy.deadline;
  const bool idempotent = is_idempotent(request.method);
  auto backoff = m_policy.initial_backoff;
  const std::string shown = request.method + " " + redact_url(request.url);
  for (int attempt = 1;; ++attempt) {
    wait_for_slot(request.url);
    const auto started = m_clock.now();
    Result<HttpResponse> r = [&] {
      if (!m_policy.request_timeout) {
        return m_inner.send(request);
      }
      HttpRequest copy = request;
      copy.timeout = *m_policy.request_timeout;
      return m_inner.send(copy);
    }();
    std::chrono::milliseconds wait = backoff;
    bool retry = false;
    if (!r) {
      log_line(shown + " -> " + r.error().message);
      retry = idempotent && (r.error().code == Errc::timeout || r.error().code == Errc::unavailable);
    } else {
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(m_clock.now() - started);
      log_line(shown + " -> " + std::to_string(r->status) + " (" + std::to_string(took.count()) + " ms)");
      if (r->status == 429) {
        retry = true;
        if (auto ra = r->header("retry-after")) {
          if (auto secs = parse_retry_after(*ra)) {
            wait = std::max<std::chrono::milliseconds>(*secs, std::chrono::milliseconds{0});
          }
        }
      } else if (r->status >= 500 && r->status <= 599) {
        retry = idempotent;
      }
    }
    if (!retry || attempt >= m_policy.max_attempts) {
      return r;
    }
    if (m_clock.now() + wait > deadline) {
      log_line("not retrying " + shown + ": the wait would pass the deadline");
      return r;
    }
    log_line("retrying " + shown + " in " + std::to_string(wait.count()) + " ms (attempt " +
             std::to_string(attempt + 1) + " of " + std::to_string(m_policy.max_attempts) + ")");
    m_clock.sleep_for(wait);
    backoff = std::min(backoff * 2, m_policy.max_backoff);
  }
}

}  // namespace gpurent
