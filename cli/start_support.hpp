// SPDX-License-Identifier: MIT
#pragma once
// Starting a tracked server that is stopped or hibernated (`gpurent start NAME`, and `gpurent up
// --name NAME` on such a record): through its provider's start call, waiting for running and SSH,
// and saying what changed. It never destroys anything: a start the provider refuses leaves the
// server stopped, one that does not come up is left as the provider reports it. docs/lifecycle.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/config.hpp"
#include "cli/ssh_options.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;

struct StartRequest {
  SshFlags ssh;                       // --identity, --known-hosts, --accept-new-host-key
  bool no_wait = false;               // running at the provider is enough; SSH not checked
  std::string verb = "gpurent start";  // how the messages name the command to run again
};

struct StartReport {
  ServerRecord record;                // as recorded afterwards
  bool start_sent = false;            // false: the provider already had it running
  std::vector<std::string> changes;   // "GPU: …", "address: …", "host key: …", "price: …"
};

// The states a start applies to: stopped and hibernated (and provisioning with a provider id: a
// start or create whose wait was cut short, which a start looks at again without a new call).
[[nodiscard]] bool startable(const ServerRecord& rec) noexcept;

// Starts `rec` through its provider: says the price it bills once running, what the provider
// lists for its card now, and what it costs meanwhile; asks (--yes, a TTY, else refused); sends
// the start; waits for running and SSH (the recorded host key, or the one the provider reports;
// a new one only with --accept-new-host-key); records the connection and the ledger. A provider
// without start is refused (exit 3). Nothing is ever destroyed.
[[nodiscard]] Result<StartReport> start_tracked(Services& s, const Config& cfg, StateStore& store, ServerRecord rec,
                                                const StartRequest& request);

// `start --json`: the server (name, provider, provider_id, card, gpus, state, host, port, user,
// host_key, price_per_hour, currency), started, changes.
[[nodiscard]] nlohmann::json start_json(const StartReport& report);

}  // namespace gpurent
