// SPDX-License-Identifier: MIT
#pragma once
// Runs the whole command line against the given services: main() and the CLI tests share it.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace gpurent {
struct Services;

// argv[0] excluded. Returns the process exit code. Under --json exactly one JSON document is
// written on stdout, also for errors (cli/errors.hpp).
int run_app(const std::vector<std::string>& args, Services& s);

// The top-level app as run_app builds it (description, help layout, global flags, --version),
// without subcommands: `help`, `completion` and `man` build a full one from it.
void configure_app(CLI::App& app, Services& s);

// "gpurent 0.1.0 (commit 1a2b3c4d5e6f, built 2026-01-31)".
[[nodiscard]] std::string version_line();

}  // namespace gpurent
