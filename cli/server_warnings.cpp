// SPDX-License-Identifier: MIT
#include "cli/server_warnings.hpp"

#include "cli/lifecycle_support.hpp"
#include "providers/catalog.hpp"
#include "providers/cloud_rules.hpp"

namespace gpurent {

std::string shown_state(const ServerRecord& r)
{
  const bool up_or_stopped = r.status == ServerStatus::running || r.status == ServerStatus::provisioning ||
                             r.status == ServerStatus::stopped;
  return up_or_stopped && !r.trouble.empty() ? r.trouble : std::string(to_string(r.status));
}

std::vector<std::string> lifecycle_warnings(const ServerRecord& r, MicroUsd rate, std::string_view last_note)
{
  std::vector<std::string> w;
  const std::string billed = per_hour(rate);
  const std::string destroy_cmd = "`gpurent down " + r.name + " --destroy`";
  switch (r.status) {
  case ServerStatus::creating:
    w.push_back("the create call was not confirmed: it may exist and bill; run `gpurent status --refresh`");
    break;
  case ServerStatus::destroying:
    w.push_back("destroy not confirmed: it may still bill " + billed + "; run `gpurent status --refresh`");
    break;
  case ServerStatus::destroy_failed:
    w.push_back("DESTROY FAILED (" + std::string(last_note) + "): " + r.provider + " still has it and it bills " +
                billed + "; retry with " + destroy_cmd + " or `gpurent status --refresh`, or destroy it in " +
                r.provider + "'s console");
    break;
  case ServerStatus::release_pending:
    w.push_back("release pending: backed up, still billed " + billed + " until you destroy it in " + r.provider +
                "'s console and run `gpurent down " + r.name + " --released`");
    break;
  case ServerStatus::gone:
    w.push_back("the provider no longer has it; billed until it was found gone");
    break;
  case ServerStatus::offline:
    w.push_back("offline: " + (r.trouble_detail.empty() ? r.provider + " reports its host disconnected" : r.trouble_detail) +
                "; " + r.provider + " charges nothing while it is offline, and storage billing resumes when it "
                "returns; its data is out of reach meanwhile: if it does not come back, destroy it (" +
                destroy_cmd + ")");
    break;
  default: break;
  }
  const bool shows_trouble = r.status != ServerStatus::offline && !r.trouble.empty() && shown_state(r) == r.trouble;
  if (shows_trouble) {
    std::string what = r.trouble_detail.empty() ? r.provider + " reports " + r.provider_state : r.trouble_detail;
    if (r.trouble == "exited" || r.trouble == "crashed") {
      what += "; the GPU is released but it still bills " + billed + " (storage) until destroyed: restart it in " +
              r.provider + "'s console, or back it up and destroy it (" + destroy_cmd + ")";
    } else if (r.trouble == "unknown") {
      what += "; gpurent bills it as " + std::string(to_string(r.status)) + " (" + billed + ") meanwhile: check " +
              r.provider + "'s console";
    } else {
      what += "; it may still bill " + billed + ": check it (`gpurent doctor " + r.name + "`) or destroy it (" +
              destroy_cmd + ")";
    }
    w.push_back(r.trouble + ": " + what);
  }
  if (const auto p = find_provider(r.provider); p && !billing_known(*p)) {
    // cli.md plan v4: a cloud with no published billing rule is billed per started hour, said so.
    w.push_back("billing unknown: " + r.provider + " publishes no billing rule gpurent found; its cost assumes per-hour "
                "billing");
  }
  return w;
}

}  // namespace gpurent
