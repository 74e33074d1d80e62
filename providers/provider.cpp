// SPDX-License-Identifier: MIT
#include "providers/provider.hpp"

#include <string>

#include "common/http_client.hpp"
#include "common/text.hpp"

namespace gpurent {

std::string_view to_string(InstanceState s) noexcept
{
  switch (s) {
  case InstanceState::pending: return "pending";
  case InstanceState::running: return "running";
  case InstanceState::stopping: return "stopping";
  case InstanceState::stopped: return "stopped";
  case InstanceState::terminating: return "terminating";
  case InstanceState::terminated: return "terminated";
  case InstanceState::failed: return "failed";
  case InstanceState::offline: return "offline";
  case InstanceState::unknown: return "unknown";
  }
  return "unknown";
}

Result<std::optional<Instance>> find_listed(Provider& provider, std::string_view id)
{
  TRY_ASSIGN(auto all, provider.list());
  for (auto& in : all) {
    if (in.id == id) {
      return std::optional<Instance>{std::move(in)};
    }
  }
  return std::optional<Instance>{};
}

std::string public_key_body(std::string_view public_key)
{
  const auto first = public_key.find(' ');
  if (first == std::string_view::npos) {
    return std::string(public_key);
  }
  const auto second = public_key.find(' ', first + 1);
  return std::string(public_key.substr(0, second));
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) noexcept
{
  const auto n = parse_u64(trim(value));
  if (!n || *n > 86'400) {
    return std::nullopt;
  }
  return std::chrono::seconds{static_cast<std::int64_t>(*n)};
}

Error http_error(std::string_view what, const HttpResponse& response, std::string_view detail)
{
  const std::string status = "HTTP " + std::to_string(response.status);
  const std::string why = detail.empty() ? status : status + ", " + std::string(detail);
  const std::string head = std::string(what) + ": ";
  if (response.status == 401 || response.status == 403) {
    return Error{Errc::unauthorized, head + "the API key was refused (" + why +
                                         "); check the key in the environment or the config file"};
  }
  if (response.status == 404) {
    return Error{Errc::not_found, head + "not found (" + why + ")"};
  }
  if (response.status == 429) {
    Error e{Errc::quota, head + "rate limited by the provider (" + why + "); wait and try again"};
    if (auto ra = response.header("retry-after")) {
      e.retry_after = parse_retry_after(*ra);
    }
    return e;
  }
  if (response.status >= 500) {
    return Error{Errc::unavailable, head + "the provider's API failed (" + why + "); try again in a minute"};
  }
  return Error{Errc::invalid_input, head + "the request was refused (" + why + ")"};
}

}  // namespace gpurent
