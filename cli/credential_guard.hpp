// SPDX-License-Identifier: MIT
#pragma once
// Credentials go only over https, or over plain http to this machine (providers/http/url_policy.hpp);
// a plain-http URL to another machine is refused, naming the variable or config key it came from,
// unless --insecure-http or allow_insecure_http says so (then a warning on stderr each time).
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

struct Config;
struct Services;

// Where the config key's value came from, for messages: the variable ("GPURENT_RUNPOD_API_URL"),
// "runpod_api_url (config.toml:3)", "--runpod_api_url", or "runpod_api_url (built-in default)".
[[nodiscard]] std::string config_value_source(const Config& cfg, std::string_view key);

// Checks that `credential` (e.g. "the RunPod API key") may be sent to `url`, which came from
// `source`; prints the warning when plain HTTP to another machine is allowed.
[[nodiscard]] Result<void> guard_credential_url(Services& s, const Config& cfg, std::string_view url,
                                                std::string_view credential, std::string_view source);

}  // namespace gpurent
