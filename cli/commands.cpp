// SPDX-License-Identifier: MIT
#include "cli/commands.hpp"

namespace gpurent {

void add_all_commands(CLI::App& app, Services& s)
{
  add_plan_command(app, s);
  add_fits_command(app, s);
  add_models_command(app, s);
  add_offers_command(app, s);
  add_cost_command(app, s);
  add_config_command(app, s);
  add_oom_command(app, s);
  add_up_command(app, s);
  add_attach_command(app, s);
  add_status_command(app, s);
  add_down_command(app, s);
  add_ssh_command(app, s);
  add_backup_command(app, s);
  add_doctor_command(app, s);
}

}  // namespace gpurent
