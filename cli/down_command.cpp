// SPDX-License-Identifier: MIT
// PLACEHOLDER: replaced by the real `gpurent down` command.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/services.hpp"

namespace gpurent {

void add_down_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("down", "not yet built");
  sub->callback([&s] { s.exit_code = report_error(s, Error{Errc::unsupported, "down: not yet built"}); });
}

}  // namespace gpurent
