// SPDX-License-Identifier: MIT
#pragma once
// One file per subcommand; each registers itself with a typed options struct.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace gpurent {
struct Services;

void add_plan_command(CLI::App& app, Services& s);
void add_fits_command(CLI::App& app, Services& s);
void add_models_command(CLI::App& app, Services& s);
void add_cards_command(CLI::App& app, Services& s);
void add_offers_command(CLI::App& app, Services& s);
void add_cost_command(CLI::App& app, Services& s);
void add_config_command(CLI::App& app, Services& s);
void add_oom_command(CLI::App& app, Services& s);
void add_up_command(CLI::App& app, Services& s);
void add_attach_command(CLI::App& app, Services& s);
void add_status_command(CLI::App& app, Services& s);
void add_start_command(CLI::App& app, Services& s);
void add_down_command(CLI::App& app, Services& s);
void add_ssh_command(CLI::App& app, Services& s);
void add_backup_command(CLI::App& app, Services& s);
void add_doctor_command(CLI::App& app, Services& s);
void add_push_command(CLI::App& app, Services& s);
void add_run_command(CLI::App& app, Services& s);
void add_logs_command(CLI::App& app, Services& s);
void add_jobs_command(CLI::App& app, Services& s);
void add_autostop_command(CLI::App& app, Services& s);
// `--autostop 30m[:stop|hibernate|destroy]` on up, attach and run (cli/autostop_command.cpp); the
// value stays empty when not given. Armed with arm_autostop_flag (cli/autostop_support.hpp).
std::shared_ptr<std::string> add_autostop_flag(CLI::App& sub);
// cli/help_command.cpp: `help [COMMAND...]`, `completion bash|zsh|fish`, `man`.
void add_help_command(CLI::App& app, Services& s);
void add_completion_command(CLI::App& app, Services& s);
void add_man_command(CLI::App& app, Services& s);

// Registers every subcommand above on `app` (cli/commands.cpp), for `gpurent --help`.
void add_all_commands(CLI::App& app, Services& s);

// Registers only the subcommand called `name`; false when there is none. Building one
// subcommand instead of all of them keeps start-up cheap (docs/benchmarks.md, "Start-up").
bool add_command(CLI::App& app, Services& s, std::string_view name);

// Every subcommand's name, in help order.
std::vector<std::string_view> command_names();

}  // namespace gpurent
