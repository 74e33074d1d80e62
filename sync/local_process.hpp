// SPDX-License-Identifier: MIT
#pragma once
// Runs a local program (no shell) to its end and collects what it printed, over sync/local_child's
// pipes: how `push` asks git what a repository would commit. stdin is fed from a string and
// closed; stdout and stderr are read concurrently, so neither can block.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct LocalProcessResult {
  int status = -1;  // exit status; 128 + N when killed by signal N
  std::string out;
  std::string err;
};

struct LocalProcessRequest {
  std::vector<std::string> argv;            // argv[0] is looked up on PATH
  std::filesystem::path cwd;                // empty: the current directory
  std::string input;                        // written to stdin, then closed
  std::vector<std::string> unset_env;       // variables removed from the child's environment
  std::uint64_t max_output = 1ULL << 30;    // stdout beyond this is an error (the child is killed)
};

// Errc::not_found when the program is not installed; Errc::internal when it cannot be started
// or printed more than max_output. A non-zero exit is not an error here: see `status`.
[[nodiscard]] Result<LocalProcessResult> run_local_process(const LocalProcessRequest& request);

}  // namespace gpurent
