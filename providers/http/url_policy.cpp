// SPDX-License-Identifier: MIT
#include "providers/http/url_policy.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace gpurent {
namespace {

std::string lower(std::string_view s)
{
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> parts_of(std::string_view s, char sep)
{
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) {
      return out;
    }
    s.remove_prefix(at + 1);
  }
}

bool all_of(std::string_view s, int (*is)(int)) noexcept
{
  return !s.empty() && std::all_of(s.begin(), s.end(), [is](unsigned char c) { return is(c) != 0; });
}

// 127.x.y.z: four decimal parts of at most three digits, each <= 255, the first one 127.
bool is_loopback_v4(std::string_view host)
{
  const auto parts = parts_of(host, '.');
  if (parts.size() != 4 || parts[0] != "127") {
    return false;
  }
  return std::all_of(parts.begin(), parts.end(), [](std::string_view p) {
    return p.size() <= 3 && all_of(p, [](int c) { return std::isdigit(c); }) && std::stoi(std::string(p)) <= 255;
  });
}

// ::1, or the same written with all eight groups (0:0:0:0:0:0:0:1, leading zeros allowed).
bool is_loopback_v6(std::string_view host)
{
  if (host == "::1") {
    return true;
  }
  const auto groups = parts_of(host, ':');
  if (groups.size() != 8) {
    return false;
  }
  for (std::size_t i = 0; i < 8; ++i) {
    const auto g = groups[i];
    if (g.size() > 4 || !all_of(g, [](int c) { return std::isxdigit(c); })) {
      return false;
    }
    const auto nonzero = g.find_first_not_of('0');
    const std::string_view value = nonzero == std::string_view::npos ? std::string_view{} : g.substr(nonzero);
    if (value != (i == 7 ? "1" : "")) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string UrlOrigin::text() const
{
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + (port.empty() ? "" : ":" + port);
}

std::optional<UrlOrigin> url_origin(std::string_view url)
{
  const auto sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) {
    return std::nullopt;
  }
  UrlOrigin o;
  o.scheme = lower(url.substr(0, sep));
  std::string_view authority = url.substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // user info is never part of the host
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    host = authority.substr(1, close - 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) {
      return std::nullopt;
    }
    port = rest.empty() ? rest : rest.substr(1);
  } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return std::nullopt;
  }
  o.host = lower(host);
  o.port = std::string(port);
  return o;
}

bool is_loopback_host(std::string_view host) noexcept
{
  try {
    const std::string h = lower(host);
    return h == "localhost" || h == "localhost." || is_loopback_v4(h) || is_loopback_v6(h);
  } catch (...) {
    return false;  // out of memory: not proven loopback
  }
}

CredentialRoute credential_route(std::string_view url)
{
  const auto o = url_origin(url);
  if (!o) {
    return CredentialRoute::unusable;
  }
  if (o->scheme == "https") {
    return CredentialRoute::https;
  }
  if (o->scheme != "http") {
    return CredentialRoute::unusable;
  }
  return is_loopback_host(o->host) ? CredentialRoute::loopback_http : CredentialRoute::insecure_http;
}

Result<std::string> check_credential_url(std::string_view url, std::string_view credential, std::string_view source,
                                         bool allow_insecure_http)
{
  const auto origin = url_origin(url);
  const std::string where = origin ? origin->text() : std::string(url.substr(0, 60));
  switch (credential_route(url)) {
  case CredentialRoute::https:
  case CredentialRoute::loopback_http: return std::string();
  case CredentialRoute::unusable:
    return fail(Errc::refused, "not sending " + std::string(credential) + " to `" + where + "` (from " + std::string(source) +
                                   "): not an http(s) URL; give an https:// URL there");
  case CredentialRoute::insecure_http:
    if (allow_insecure_http) {
      return "sending " + std::string(credential) + " over plain HTTP to " + where + " (from " + std::string(source) +
             "), as --insecure-http / allow_insecure_http allows: anyone on the network path can read it";
    }
    return fail(Errc::refused, "not sending " + std::string(credential) + " to " + where + " (from " + std::string(source) +
                                   "): plain HTTP to another machine would expose it on the network, and --insecure-http "
                                   "is not given; use an https:// URL there, or allow plain HTTP with --insecure-http "
                                   "(config allow_insecure_http = true)");
  }
  return std::string();
}

std::string_view redirect_protocols(std::string_view url)
{
  const auto o = url_origin(url);
  return o && o->scheme == "http" ? std::string_view("http,https") : std::string_view("https");
}

bool is_redirect_downgrade(std::string_view from, std::string_view to)
{
  const auto a = url_origin(from);
  const auto b = url_origin(to);
  return a && a->scheme == "https" && (!b || b->scheme != "https");
}

}  // namespace gpurent
