// SPDX-License-Identifier: MIT
#pragma once
// Whether an attached server waiting for its release (`release_pending`) is gone, from SSH checks
// made by `status --refresh`. Pure: the caller probes and stores `unreachable_since`.
#include <chrono>
#include <optional>
#include <string>

namespace gpurent {

enum class SshProbe {
  answered,        // the recorded host answered SSH (authenticated or not): still there
  unreachable,     // connection refused, no route, timed out
  other_host_key,  // something answers at the address with another host key
};

struct ReleaseVerdict {
  bool released = false;                                     // close the ledger as destroyed
  std::optional<std::chrono::system_clock::time_point> unreachable_since;  // to store
  std::string why;                                           // for the ledger note and the log
};

// Two unreachable checks at least `gap` apart (with no answer between) or another host key at
// the address mean the server was released. The first unreachable check only starts the clock.
[[nodiscard]] ReleaseVerdict release_verdict(SshProbe probe,
                                             std::optional<std::chrono::system_clock::time_point> unreachable_since,
                                             std::chrono::system_clock::time_point now,
                                             std::chrono::seconds gap = std::chrono::seconds{60});

}  // namespace gpurent
