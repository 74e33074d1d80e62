// SPDX-License-Identifier: MIT
// The one libcurl implementation of the HttpClient port. The only file that includes curl.h;
// linked into libgpurent_io.so and exported through gpurent_make_http_client().
#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/http_client.hpp"
#include "providers/http/url_policy.hpp"

namespace gpurent {
namespace {

struct EasyDeleter {
  void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using HeaderList = std::unique_ptr<curl_slist, ListDeleter>;

constexpr std::chrono::milliseconds k_max_connect_timeout{10'000};

// What the callbacks fill while a transfer runs.
struct Transfer {
  std::string body;
  HttpHeaders headers;
  std::uint64_t cap = 0;
  bool too_large = false;
};

extern "C" std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user)
{
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (t->body.size() + n > t->cap) {
    t->too_large = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, n);
  return n;
}

extern "C" std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user)
{
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.starts_with("HTTP/")) {
    t->headers.clear();  // a new response (after a redirect or 100-continue)
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) {
    return n;
  }
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  t->headers.emplace_back(std::move(name), std::string(value));
  return n;
}

// The URL without its query string, for messages (tokens never go into URLs, but be safe).
std::string redacted(const std::string& url)
{
  const auto q = url.find_first_of("?#");
  return q == std::string::npos ? url : url.substr(0, q) + "?…";
}

class CurlHttpClient final : public HttpClient {
public:
  CurlHttpClient()
  {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  [[nodiscard]] Result<HttpResponse> send(const HttpRequest& req) override
  {
    EasyHandle h{curl_easy_init()};
    if (!h) {
      return fail(Errc::internal, "HTTP: cannot create a curl handle; out of memory?");
    }
    Transfer t;
    t.cap = req.max_response_bytes;
    HeaderList headers;
    for (const auto& [k, v] : req.headers) {
      const std::string line = k + ": " + v;
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next == nullptr) {
        return fail(Errc::internal, "HTTP: cannot build request headers; out of memory?");
      }
      static_cast<void>(headers.release());
      headers.reset(next);
    }
    const long total_ms = static_cast<long>(std::max<std::int64_t>(1, req.timeout.count()));
    const long connect_ms = static_cast<long>(std::min(req.timeout, k_max_connect_timeout).count());
    CURL* c = h.get();
    curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, connect_ms));
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpurent/0.1.0");
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    if (headers) {
      curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    }
    if (req.method == "GET") {
      curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
      curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
      // From https only to https (providers/http/url_policy.hpp): a redirect never downgrades.
      const std::string protocols(redirect_protocols(req.url));
      curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, protocols.c_str());
      // The Authorization header is only sent to the host the request names, not to redirects
      // (libcurl >= 7.58 drops a custom Authorization header when the host changes, >= 7.83 also
      // when the port or scheme does; CURLOPT_UNRESTRICTED_AUTH would lift that and stays off).
      curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
    } else if (req.method == "HEAD") {
      curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.c_str());
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    }
    const CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
      const std::string what = req.method + " " + redacted(req.url);
      if (t.too_large) {
        return fail(Errc::invalid_input, "HTTP " + what + ": the response is larger than " +
                                             std::to_string(t.cap) + " bytes; refusing to read more");
      }
      if (rc == CURLE_UNSUPPORTED_PROTOCOL) {
        char* next = nullptr;
        curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &next);
        const std::string to = next != nullptr ? next : "";
        if (!to.empty() && is_redirect_downgrade(req.url, to)) {
          const auto origin = url_origin(to);
          return fail(Errc::refused, "HTTP " + what + ": the server redirected to " + (origin ? origin->text() : redacted(to)) +
                                         " (plain HTTP), and a redirect from https is never followed to http; use an "
                                         "endpoint that stays on https");
        }
      }
      if (rc == CURLE_OPERATION_TIMEDOUT) {
        return fail(Errc::timeout, "HTTP " + what + ": timed out after " + std::to_string(total_ms) +
                                       " ms; check the network or retry");
      }
      Error e{Errc::unavailable, "HTTP " + what + ": " + curl_easy_strerror(rc) +
                                     "; check the network, proxy and TLS certificates"};
      // Before the request was written: no server saw it.
      e.not_sent = rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_COULDNT_CONNECT ||
                   rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION;
      return std::unexpected(std::move(e));
    }
    HttpResponse resp;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    resp.status = status;
    resp.headers = std::move(t.headers);
    resp.body = std::move(t.body);
    return resp;
  }
};

}  // namespace
}  // namespace gpurent

extern "C" __attribute__((visibility("default"))) void gpurent_make_http_client(std::unique_ptr<gpurent::HttpClient>* out)
{
  *out = std::make_unique<gpurent::CurlHttpClient>();
}
