// SPDX-License-Identifier: MIT
#pragma once
// Where a credential (an API key, a Hub token) may be sent, and where a redirect may go: pure
// rules over a URL's text, shared by the CLI (which names where a URL came from) and the libcurl
// client (providers/http/curl_http_client.cpp).
//   - over https to any host;
//   - over plain http only to this machine: 127.0.0.0/8, ::1, localhost (local test doubles);
//   - anything else only when the user allowed plain HTTP (--insecure-http, allow_insecure_http).
// A redirect from https never goes to http (curl is told "https" only); a plain-http request
// (loopback, or allowed) may be redirected to either.
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

struct UrlOrigin {
  std::string scheme;  // lower-cased: "https"
  std::string host;    // lower-cased, without brackets: "::1", "127.0.0.1", "api.runpod.io"
  std::string port;    // "" when not given
  // "https://host:port" without user info, path or query (safe to print).
  [[nodiscard]] std::string text() const;
};

// The scheme, host and port of an absolute URL; nullopt when it has no "scheme://host".
[[nodiscard]] std::optional<UrlOrigin> url_origin(std::string_view url);

// 127.0.0.0/8 as a dotted quad, ::1 (also written out in full), localhost (and its subdomains,
// which resolvers answer with loopback).
[[nodiscard]] bool is_loopback_host(std::string_view host) noexcept;

enum class CredentialRoute {
  https,          // encrypted: allowed
  loopback_http,  // plain http to this machine: allowed
  insecure_http,  // plain http to another machine: refused unless the user allows it
  unusable,       // not an http(s) URL: refused
};
[[nodiscard]] CredentialRoute credential_route(std::string_view url);

// The rule applied: `credential` says what would be sent ("the RunPod API key"), `source` where
// the URL came from ("GPURENT_RUNPOD_API_URL", "runpod_api_url (config.toml:3)"). Returns the
// warning to print when plain HTTP to another machine is allowed, "" when nothing needs saying,
// or a refusal (Errc::refused) naming the source and the way out.
[[nodiscard]] Result<std::string> check_credential_url(std::string_view url, std::string_view credential,
                                                       std::string_view source, bool allow_insecure_http);

// What CURLOPT_REDIR_PROTOCOLS_STR gets for a request to `url`: "https" for an https URL (no
// downgrade), "http,https" for a plain-http one.
[[nodiscard]] std::string_view redirect_protocols(std::string_view url);

// True when following `from` -> `to` would go from https to anything else.
[[nodiscard]] bool is_redirect_downgrade(std::string_view from, std::string_view to);

}  // namespace gpurent
