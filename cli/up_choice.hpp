// SPDX-License-Identifier: MIT
// `gpurent up`'s options and what it rents: the offer as given (--provider/--card/--gpus) or the
// cheapest fit `plan` finds among the providers with an API (--from-plan MODEL).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/config.hpp"
#include "cli/plan_options.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "common/result.hpp"

namespace gpurent {

struct UpOptions {
  std::string from_plan;  // --from-plan MODEL
  PlanArgs sizing;        // --task, --context, ... (only with --from-plan)
  std::string provider;
  std::string card;
  std::string gpus;       // "" = 1, or with --from-plan the cheapest count that fits
  bool spot = false;
  std::string name;
  std::string ssh_key;
  bool wait = false;
  bool no_wait = false;
  std::string max_price;
  std::string hours;      // "" = 1
  std::string region;
  std::string image;
  SshFlags ssh;
  // --nodes N: a group of N servers named GROUP-0 … GROUP-(N-1); 0: not given (one server, or
  // with --from-plan and --group as many as plan finds the job needs)
  std::uint32_t nodes = 0;
  std::string group;            // --group NAME
  // Set by the group loop for each member: its rank, whether the group was confirmed already,
  // and the pass: first every member is created (create_only: up returns once the provider
  // answered the create call), then each is brought up (waited for, SSH checked) in turn.
  std::uint32_t group_rank = 0;
  bool confirmed = false;
  bool create_only = false;
  bool second_pass = false;
  bool quiet_plan = false;  // --from-plan: what plan chose was said already (a group's first member)
};

// What to rent: an offer, its GPU count and, with --from-plan, what plan chose and why.
struct UpChoice {
  PricedOffer priced;
  std::uint32_t gpus = 1;
  std::uint32_t nodes = 1;  // --from-plan with --group: the servers plan chose
  nlohmann::json plan;  // null without --from-plan
};

// --provider/--card/--gpus as given: built-in or configured price, else a fetched offer, else
// the price the provider reports once the server exists.
[[nodiscard]] Result<UpChoice> choose_given(Services& s, const Config& cfg, const UpOptions& o);

// --from-plan MODEL: sizes the job as `plan` does and takes the cheapest option that fits among
// the providers with an API (with --spot: those that sell spot servers). When nothing fits, the
// plan (with its fixes) goes to stdout, as `plan` prints it, and the answer is Errc::refused.
[[nodiscard]] Result<UpChoice> choose_from_plan(Services& s, const Config& cfg, const UpOptions& o);

}  // namespace gpurent
