// SPDX-License-Identifier: MIT
#include "cli/commands.hpp"

#include <array>

namespace gpurent {
namespace {

struct CommandEntry {
  std::string_view name;
  void (*add)(CLI::App&, Services&);
};

// In the order `gpurent --help` lists them. Examples and value lists: cli/command_table.cpp.
constexpr auto k_commands = std::to_array<CommandEntry>({
    {"plan", add_plan_command},
    {"fits", add_fits_command},
    {"models", add_models_command},
    {"cards", add_cards_command},
    {"offers", add_offers_command},
    {"cost", add_cost_command},
    {"config", add_config_command},
    {"oom", add_oom_command},
    {"up", add_up_command},
    {"attach", add_attach_command},
    {"status", add_status_command},
    {"start", add_start_command},
    {"down", add_down_command},
    {"ssh", add_ssh_command},
    {"backup", add_backup_command},
    {"doctor", add_doctor_command},
    {"push", add_push_command},
    {"run", add_run_command},
    {"logs", add_logs_command},
    {"jobs", add_jobs_command},
    {"autostop", add_autostop_command},
    {"help", add_help_command},
    {"completion", add_completion_command},
    {"man", add_man_command},
});

}  // namespace

std::vector<std::string_view> command_names()
{
  std::vector<std::string_view> names;
  names.reserve(k_commands.size());
  for (const auto& c : k_commands) {
    names.push_back(c.name);
  }
  return names;
}

bool add_command(CLI::App& app, Services& s, std::string_view name)
{
  for (const auto& c : k_commands) {
    if (c.name == name) {
      c.add(app, s);
      return true;
    }
  }
  return false;
}

void add_all_commands(CLI::App& app, Services& s)
{
  for (const auto& c : k_commands) {
    c.add(app, s);
  }
}

}  // namespace gpurent
