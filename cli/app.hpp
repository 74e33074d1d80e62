// SPDX-License-Identifier: MIT
#pragma once
// Runs the whole command line against the given services: main() and the CLI tests share it.
#include <string>
#include <vector>

namespace gpurent {
struct Services;

// argv[0] excluded. Returns the process exit code.
int run_app(const std::vector<std::string>& args, Services& s);

}  // namespace gpurent
