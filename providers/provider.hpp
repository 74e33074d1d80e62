// SPDX-License-Identifier: MIT
#pragma once
// The Provider interface: one implementation per cloud with an API (providers/<name>/). Only
// the drivers do I/O, through the HttpClient they are given.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/catalog.hpp"

namespace gpurent {

enum class Feature { stop, start, hibernate, spot, offers };

enum class InstanceState {
  pending,      // being created / booting / no address yet
  running,      // up, with an SSH address
  stopping,
  stopped,      // GPU released; the provider may still bill storage
  terminating,
  terminated,   // gone (or preempted) at the provider
  failed,       // the provider says it cannot run (Lambda `unhealthy`/`preempted`)
  offline,      // the provider's host is disconnected and it bills nothing meanwhile (Vast `offline`)
  unknown,      // a state we do not know: never treated as running
};

[[nodiscard]] std::string_view to_string(InstanceState s) noexcept;

struct Instance {
  std::string id;
  std::string name;
  InstanceState state = InstanceState::unknown;
  std::string raw_state;       // the provider's own word, for messages
  std::string user = "root";   // SSH user
  std::string host;            // empty while booting
  std::uint16_t port = 22;
  std::string card;            // Card::id when the provider says which card
  std::uint32_t gpus = 0;
  MicroUsd price_per_hour;     // 0 when not reported (running, storage included where billed with it)
  MicroUsd storage_per_hour;   // what its disk costs per hour whatever the state; 0 when not reported
  // What it bills per hour while stopped, where the provider's document prices that state apart
  // (RunPod: the volume disk at $0.20/GB-month); 0 when not known.
  MicroUsd stopped_per_hour;
  std::string region;
  std::string host_key;        // when the provider reports one
  // A state that needs the user's attention, in one word ("unhealthy", "preempted", "crashed",
  // "offline", "unknown"), and the provider's own account of it; empty when all is well.
  std::string trouble;
  std::string trouble_detail;
};

struct LaunchRequest {
  std::string name;            // the instance's name/label; launch is idempotent on it
  std::string card;            // Card::id
  std::uint32_t gpus = 1;
  bool spot = false;
  std::string region;          // empty: any
  std::optional<MicroUsd> max_price_per_hour;
  std::string ssh_public_key;  // "ssh-ed25519 AAAA… comment"
  std::string image;           // empty: the driver's default
};

class Provider {
public:
  virtual ~Provider() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Why the provider cannot do this, or nullopt when it can.
  [[nodiscard]] virtual std::optional<std::string> unsupported(Feature f) const = 0;
  [[nodiscard]] virtual Result<std::vector<Offer>> fetch_offers() = 0;
  // Creates a server, or returns the live one that already has request.name.
  [[nodiscard]] virtual Result<Instance> launch(const LaunchRequest& request) = 0;
  // nullopt when the provider no longer has it.
  [[nodiscard]] virtual Result<std::optional<Instance>> get(std::string_view id) = 0;
  // Every server the account has, in any state the provider still reports.
  [[nodiscard]] virtual Result<std::vector<Instance>> list() = 0;
  [[nodiscard]] virtual Result<void> stop(std::string_view id) = 0;
  [[nodiscard]] virtual Result<void> start(std::string_view id) = 0;
  [[nodiscard]] virtual Result<void> hibernate(std::string_view id) = 0;
  // Sends ONE destroy request (no retry: the caller confirms with get() before any repeat).
  // Errc::not_found when the provider answers that it has no such server (RunPod's 400
  // "Invalid Pod ID.", a 404, Lambda's `global/object-does-not-exist`): an "already gone"
  // answer, which counts only once get() confirms it (destroy_confirmed in lifecycle.hpp).
  [[nodiscard]] virtual Result<void> terminate(std::string_view id) = 0;
};

}  // namespace gpurent

namespace gpurent {

class HttpClient;
struct HttpResponse;

// The error for a non-2xx answer: 401/403 -> unauthorized, 404 -> not_found, 429 -> quota
// (with Retry-After when given), 5xx -> unavailable, other 4xx -> invalid_input. `detail` is the
// provider's own message (from its error envelope), `what` the operation ("lambda: launch").
[[nodiscard]] Error http_error(std::string_view what, const HttpResponse& response, std::string_view detail);
// The server with that id in provider.list(), nullopt when the list lacks it: how a driver
// settles a GET by id that the provider answered 400 ("invalid id") instead of 404.
[[nodiscard]] Result<std::optional<Instance>> find_listed(Provider& provider, std::string_view id);
// An OpenSSH public key line's type and base64 body without the comment: how keys are compared.
[[nodiscard]] std::string public_key_body(std::string_view public_key);
// Retry-After as delta-seconds ("120"); nullopt for anything else (HTTP-dates are not trusted).
[[nodiscard]] std::optional<std::chrono::seconds> parse_retry_after(std::string_view value) noexcept;

}  // namespace gpurent
