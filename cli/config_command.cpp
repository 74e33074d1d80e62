// SPDX-License-Identifier: MIT
// PLACEHOLDER: replaced by the real `gpurent config` command.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/services.hpp"

namespace gpurent {

void add_config_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("config", "not yet built");
  sub->callback([&s] { s.exit_code = report_error(s, Error{Errc::unsupported, "config: not yet built"}); });
}

}  // namespace gpurent
