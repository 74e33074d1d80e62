// SPDX-License-Identifier: MIT
#include "cli/credential_guard.hpp"

#include "cli/config.hpp"
#include "cli/services.hpp"
#include "providers/http/url_policy.hpp"

namespace gpurent {

std::string config_value_source(const Config& cfg, std::string_view key)
{
  const auto it = cfg.sources.find(key);
  if (it == cfg.sources.end()) {
    return std::string(key) + " (built-in default)";
  }
  switch (cfg.origin(key)) {
  case ConfigOrigin::env:
  case ConfigOrigin::flag: return it->second;
  case ConfigOrigin::file:
  case ConfigOrigin::default_value: break;
  }
  return std::string(key) + " (" + it->second + ")";
}

Result<void> guard_credential_url(Services& s, const Config& cfg, std::string_view url, std::string_view credential,
                                  std::string_view source)
{
  TRY_ASSIGN(const std::string warning,
             check_credential_url(url, credential, source, s.global.insecure_http || cfg.allow_insecure_http));
  if (!warning.empty()) {
    report_warning(s, warning);
  }
  return {};
}

}  // namespace gpurent
