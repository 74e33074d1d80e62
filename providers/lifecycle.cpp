// SPDX-License-Identifier: MIT
#include "providers/lifecycle.hpp"

#include <algorithm>

namespace gpurent {
namespace {

std::string seconds_text(std::chrono::milliseconds d)
{
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

}  // namespace

bool stop_asked(const WaitOptions& options)
{
  return options.cancelled && options.cancelled();
}

bool is_transient(const Error& e) noexcept
{
  return e.code == Errc::unavailable || e.code == Errc::timeout || e.code == Errc::quota;
}

bool pause_until(Clock& clock, std::chrono::system_clock::time_point deadline, std::chrono::milliseconds poll)
{
  const auto now = clock.now();
  if (now >= deadline) {
    return false;
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  clock.sleep_for(std::max(std::chrono::milliseconds{1}, std::min(poll, left)));
  return true;
}

Result<Instance> wait_running(Provider& provider, Clock& clock, std::string_view id, const WaitOptions& options,
                              const PollObserver& observe)
{
  const auto deadline = clock.now() + options.timeout;
  std::string last = "no answer yet";
  do {
    if (stop_asked(options)) {
      return std::unexpected(interrupted_error("waiting for " + std::string(provider.name()) + " server " +
                                               std::string(id) + " to run (last state: " + last + ")"));
    }
    auto got = provider.get(id);
    if (!got) {
      if (!is_transient(got.error())) {
        return std::unexpected(got.error());
      }
      last = got.error().message;
      continue;
    }
    if (!got->has_value()) {
      return fail(Errc::not_found, std::string(provider.name()) + ": server " + std::string(id) +
                                       " disappeared while starting; the provider no longer lists it");
    }
    const Instance& in = **got;
    if (observe) {
      observe(in);
    }
    last = in.raw_state;
    switch (in.state) {
    case InstanceState::running: return in;
    case InstanceState::pending:
    case InstanceState::unknown:
    case InstanceState::stopping: break;
    case InstanceState::stopped:
      if (options.starting) {
        break;
      }
      [[fallthrough]];
    case InstanceState::terminating:
    case InstanceState::terminated:
    case InstanceState::failed:
    case InstanceState::offline:
      return fail(Errc::unavailable, std::string(provider.name()) + ": server " + std::string(id) +
                                         " reached the dead end '" + in.raw_state + "' instead of running");
    }
  } while (pause_until(clock, deadline, options.poll));
  return fail(Errc::timeout, std::string(provider.name()) + ": server " + std::string(id) + " was not running after " +
                                 seconds_text(options.timeout) + " (last state: " + last + ")");
}

Result<std::string> wait_ssh(const std::function<Result<std::string>()>& probe, Clock& clock, const WaitOptions& options)
{
  const auto deadline = clock.now() + options.timeout;
  std::string last;
  do {
    if (stop_asked(options)) {
      return std::unexpected(interrupted_error("waiting for SSH to answer" + (last.empty() ? "" : " (" + last + ")")));
    }
    auto r = probe();
    if (r) {
      return r;
    }
    if (r.error().code != Errc::unavailable && r.error().code != Errc::timeout) {
      return std::unexpected(r.error());
    }
    last = r.error().message;
  } while (pause_until(clock, deadline, options.poll));
  return fail(Errc::timeout, "SSH did not answer within " + seconds_text(options.timeout) + " (" + last + ")");
}

Result<void> wait_stopped(Provider& provider, Clock& clock, std::string_view id, const WaitOptions& options)
{
  const auto deadline = clock.now() + options.timeout;
  std::string last = "no answer yet";
  do {
    if (stop_asked(options)) {
      return std::unexpected(interrupted_error("waiting for " + std::string(provider.name()) + " server " +
                                               std::string(id) + " to stop (last: " + last + ")"));
    }
    auto got = provider.get(id);
    if (!got) {
      if (!is_transient(got.error())) {
        return std::unexpected(got.error());
      }
      last = got.error().message;
      continue;
    }
    if (!got->has_value()) {
      return fail(Errc::not_found, std::string(provider.name()) + ": server " + std::string(id) + " is gone");
    }
    if ((*got)->state == InstanceState::stopped) {
      return {};
    }
    last = (*got)->raw_state;
  } while (pause_until(clock, deadline, options.poll));
  return fail(Errc::timeout, std::string(provider.name()) + ": server " + std::string(id) + " was not stopped after " +
                                 seconds_text(options.timeout) + " (last: " + last + ")");
}

}  // namespace gpurent
