// SPDX-License-Identifier: MIT
// The pure parts of the StateStore port: status names, the database location, time encoding.
#include "providers/state_store.hpp"

#include <array>
#include <utility>

namespace gpurent {
namespace {

constexpr std::array<std::pair<ServerStatus, std::string_view>, 12> k_status_names{{
    {ServerStatus::creating, "creating"},
    {ServerStatus::provisioning, "provisioning"},
    {ServerStatus::running, "running"},
    {ServerStatus::stopped, "stopped"},
    {ServerStatus::hibernated, "hibernated"},
    {ServerStatus::destroying, "destroying"},
    {ServerStatus::destroyed, "destroyed"},
    {ServerStatus::gone, "gone"},
    {ServerStatus::failed, "failed"},
    {ServerStatus::destroy_failed, "destroy_failed"},
    {ServerStatus::release_pending, "release_pending"},
    {ServerStatus::offline, "offline"},
}};

}  // namespace

std::string_view to_string(ServerStatus s) noexcept
{
  for (const auto& [status, name] : k_status_names) {
    if (status == s) {
      return name;
    }
  }
  return "unknown";
}

std::optional<ServerStatus> parse_server_status(std::string_view s) noexcept
{
  for (const auto& [status, name] : k_status_names) {
    if (name == s) {
      return status;
    }
  }
  return std::nullopt;
}

Result<std::filesystem::path> state_dir(const std::function<std::optional<std::string>(const std::string&)>& env)
{
  if (auto dir = env("GPURENT_STATE_DIR")) {
    return std::filesystem::path(*dir);
  }
  if (auto xdg = env("XDG_STATE_HOME")) {
    return std::filesystem::path(*xdg) / "gpurent";
  }
  if (auto home = env("HOME")) {
    return std::filesystem::path(*home) / ".local" / "state" / "gpurent";
  }
  return fail(Errc::invalid_input,
              "cannot locate the state directory: none of GPURENT_STATE_DIR, XDG_STATE_HOME, HOME is set; "
              "set GPURENT_STATE_DIR to a private directory");
}

std::int64_t to_unix(TimePoint t) noexcept
{
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

TimePoint from_unix(std::int64_t s) noexcept
{
  // The clock counts nanoseconds: it ends in the years 1677 and 2262. A damaged row or a typed
  // time beyond them saturates instead of overflowing.
  constexpr std::int64_t limit = std::chrono::duration_cast<std::chrono::seconds>(TimePoint::duration::max()).count();
  if (s > limit) {
    return TimePoint::max();
  }
  if (s < -limit) {
    return TimePoint::min();
  }
  return TimePoint{std::chrono::seconds{s}};
}

}  // namespace gpurent
