// SPDX-License-Identifier: MIT
// PLACEHOLDER: replaced by the real `gpurent up` command.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/services.hpp"

namespace gpurent {

void add_up_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("up", "not yet built");
  sub->callback([&s] { s.exit_code = report_error(s, Error{Errc::unsupported, "up: not yet built"}); });
}

}  // namespace gpurent
