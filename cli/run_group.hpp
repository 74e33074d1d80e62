// SPDX-License-Identifier: MIT
#pragma once
// `gpurent run GROUP -- CMD`: pushes the tree to every node, starts CMD on each with the group's
// environment (cli/group_support.hpp node_environment), follows every node's output with a
// "[MEMBER] " prefix, and stops the whole group when one node fails, saying which node and why
// (its out-of-memory report explained as `gpurent oom` would).
#include <cstdint>
#include <string>
#include <vector>

#include "cli/group_support.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
struct Services;

// What `run` was asked to do (cli/run_command.cpp's options add NAME, --then and --stop).
struct RunSettings {
  std::vector<std::string> command;
  std::string workdir = ".";
  std::string to;
  std::vector<std::string> excludes;
  bool with_git = false;
  std::vector<std::string> allow_secrets;
  bool no_push = false;
  bool delete_extra = false;       // --delete: the push also removes what the local tree lost
  std::vector<std::string> env;
  bool detach = false;
  unsigned grace = 10;             // SIGTERM to SIGKILL (--stop; a group stopped after a failure)
  std::string master_addr;         // a group: empty for node 0's address as gpurent reaches it
  std::uint16_t master_port = 29500;
  SshFlags ssh;
};

// The exit code: 0 when every node's job succeeded; 1 when one failed (the others stopped);
// 0 after Ctrl-C (detached: the jobs keep running, as for one server).
[[nodiscard]] int run_group_job(Services& s, const ServerGroup& group, const RunSettings& r);

}  // namespace gpurent
