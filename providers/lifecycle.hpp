// SPDX-License-Identifier: MIT
#pragma once
// Waiting is code, not sleep: polling a Provider through the Clock port with deadlines, so a
// 10-minute timeout is tested in microseconds with a FakeClock.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent {

struct WaitOptions {
  std::chrono::milliseconds timeout{10 * 60 * 1000};
  std::chrono::milliseconds poll{5'000};
};

using PollObserver = std::function<void(const Instance&)>;

// Until the instance is running with an SSH address. Fails at once on a dead end (stopped,
// terminated, failed, or gone), with Errc::timeout at the deadline; transient API errors
// (unavailable, timeout, quota) are retried until the deadline.
[[nodiscard]] Result<Instance> wait_running(Provider& provider, Clock& clock, std::string_view id,
                                            const WaitOptions& options, const PollObserver& observe = {});

// Until `probe` succeeds (e.g. an SSH handshake that returns the host key), or the deadline.
// Only unavailable/timeout/refused-connection style errors are retried; unauthorized is final.
[[nodiscard]] Result<std::string> wait_ssh(const std::function<Result<std::string>()>& probe, Clock& clock,
                                           const WaitOptions& options);

// Calls terminate, then polls until the provider no longer has the server (or reports it
// terminated). Errc::timeout at the deadline: the caller must keep the ledger open.
[[nodiscard]] Result<void> ensure_terminated(Provider& provider, Clock& clock, std::string_view id,
                                             const WaitOptions& options);

// Polls until the provider reports the instance stopped (after calling stop).
[[nodiscard]] Result<void> wait_stopped(Provider& provider, Clock& clock, std::string_view id, const WaitOptions& options);

}  // namespace gpurent
