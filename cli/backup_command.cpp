// SPDX-License-Identifier: MIT
// PLACEHOLDER: replaced by the real `gpurent backup` command.
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/services.hpp"

namespace gpurent {

void add_backup_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("backup", "not yet built");
  sub->callback([&s] { s.exit_code = report_error(s, Error{Errc::unsupported, "backup: not yet built"}); });
}

}  // namespace gpurent
