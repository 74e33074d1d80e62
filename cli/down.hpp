// SPDX-License-Identifier: MIT
#pragma once
// `gpurent down`'s logic for other commands (run's `--then down:stop|hibernate|destroy`):
// the same checks, costs and safety rules as the command (destroy only after a verified
// backup newer than the last change), implemented once in cli/down_command.cpp.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/ssh_options.hpp"
#include "common/result.hpp"

namespace gpurent {
struct Services;

struct DownRequest {
  std::string name;
  std::string mode;                       // "stop", "hibernate" or "destroy"
  std::vector<std::string> backup_paths;  // down --path (empty: the provider's workspace)
  std::string backup_to;                  // down --to
  SshFlags ssh;
};

// Runs `gpurent down NAME --MODE` without asking: the caller holds the user's consent (run's
// --then was given on the command line). Returns the command's JSON document.
[[nodiscard]] Result<nlohmann::json> down_server(Services& s, const DownRequest& r);

}  // namespace gpurent
