// SPDX-License-Identifier: MIT
#include "cli/model_options.hpp"

#include <memory>

#include "cli/config.hpp"
#include "cli/credential_guard.hpp"
#include "cli/services.hpp"

namespace gpurent {

ResolveOptions resolve_options_from(const Services& s, const Config& cfg, bool offline)
{
  ResolveOptions o;
  o.offline = offline;
  if (auto endpoint = cfg.hf_endpoint) {
    while (!endpoint->empty() && endpoint->back() == '/') {
      endpoint->pop_back();
    }
    if (!endpoint->empty()) {
      o.endpoint = *endpoint;
    }
  }
  o.token = cfg.hf_token && !cfg.hf_token->empty() ? cfg.hf_token : s.getenv("HUGGING_FACE_HUB_TOKEN");
  if (const auto xdg = s.getenv("XDG_CACHE_HOME")) {
    o.cache_dir = std::filesystem::path(*xdg) / "gpurent" / "hf";
  } else if (const auto home = s.getenv("HOME")) {
    o.cache_dir = std::filesystem::path(*home) / ".cache" / "gpurent" / "hf";
  }
  return o;
}

HttpProvider hub_http(Services& s, const Config& cfg, const ResolveOptions& o)
{
  if (!o.token) {
    return s.http;  // nothing secret to send
  }
  const std::string endpoint = o.endpoint;
  const std::string source = config_value_source(cfg, "hf_endpoint");
  const std::string token_source = cfg.hf_token ? config_value_source(cfg, "hf_token") : "HUGGING_FACE_HUB_TOKEN";
  const bool allowed = cfg.allow_insecure_http;
  auto checked = std::make_shared<bool>(false);
  return [&s, endpoint, source, token_source, allowed, checked]() -> Result<HttpClient*> {
    if (!*checked) {
      Config flags;
      flags.allow_insecure_http = allowed;
      TRY(guard_credential_url(s, flags, endpoint, "the Hugging Face token (" + token_source + ")", source));
      *checked = true;
    }
    return s.http();
  };
}

}  // namespace gpurent
