// SPDX-License-Identifier: MIT
#pragma once
// Waiting is code, not sleep: polling a Provider through the Clock port with deadlines, so a
// 10-minute timeout is tested in microseconds with a FakeClock.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent {

struct WaitOptions {
  std::chrono::milliseconds timeout{10 * 60 * 1000};
  std::chrono::milliseconds poll{5'000};
  // Asked before each poll: true ends the wait with an Error whose `interrupted` is set (the
  // user pressed Ctrl-C); what was asked of the provider so far stands.
  std::function<bool()> cancelled;
  // After a start call on a stopped server: `stopped` is where it comes from (the provider may
  // report it for a while after accepting the start), so it is waited through, not a dead end.
  bool starting = false;
};

[[nodiscard]] bool stop_asked(const WaitOptions& options);

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

// What one destroy came to. `confirmed` is the only outcome that may close a ledger.
struct DestroyOutcome {
  bool confirmed = false;  // get() says the provider no longer has it (or reports it terminated)
  bool accepted = false;   // a destroy request was accepted, or answered "already gone"
  int requests = 0;        // destroy requests sent (one, unless one was lost in transit)
  Error error;             // why it is not confirmed (unset when confirmed)
};

// The most destroy requests one destroy sends: a repeat goes out only after a request failed in
// transit (5xx, timeout) AND get() showed the server still there and not terminating.
inline constexpr int k_max_destroy_requests = 5;

struct DestroyHooks {
  // A destroy may have been sent before (a retry, a crash): get() first, and send only when the
  // provider still has the server and is not already terminating it.
  bool look_first = false;
  // Called once the first destroy request was accepted, before the confirmation (crash tests).
  std::function<void()> on_accepted;
};

// Sends one destroy request and polls get() until the provider confirms the server is gone, or
// the deadline. An "already gone" answer (Errc::not_found from terminate) counts only once get()
// agrees; a refusal (401, 403, 400) is final unless get() shows the server gone anyway.
[[nodiscard]] DestroyOutcome destroy_confirmed(Provider& provider, Clock& clock, std::string_view id,
                                               const WaitOptions& options, const DestroyHooks& hooks = {});

// After a create call whose answer was lost: the server named `name` (not terminated) if the
// provider has one, nullopt when its list says it has none. Transient errors are retried until
// the deadline; then the error is returned and the caller must keep the record open.
[[nodiscard]] Result<std::optional<Instance>> find_named(Provider& provider, Clock& clock, std::string_view name,
                                                         const WaitOptions& options);

// Sleeps one poll interval, or less when the deadline is nearer; false once the deadline passed.
[[nodiscard]] bool pause_until(Clock& clock, std::chrono::system_clock::time_point deadline,
                               std::chrono::milliseconds poll);
// 5xx, timeouts and 429: worth asking again.
[[nodiscard]] bool is_transient(const Error& e) noexcept;

// Polls until the provider reports the instance stopped (after calling stop).
[[nodiscard]] Result<void> wait_stopped(Provider& provider, Clock& clock, std::string_view id, const WaitOptions& options);

}  // namespace gpurent
