// SPDX-License-Identifier: MIT
// The job on one card: hardware rules and the card facts sizing reads (planner/card_run.hpp).
#include "planner/card_run.hpp"

#include <string>

#include "common/text.hpp"

namespace gpurent {
namespace {

bool names_a100(const Card& c) { return to_lower(c.id + " " + c.display).find("a100") != std::string::npos; }

}  // namespace

bool vllm_large_card(const Card& c) noexcept { return c.usable.n >= 70 * k_gib && !names_a100(c); }

bool nccl_nvls_card(const Card& c) noexcept { return c.link.nvlink_gen.value_or(0) >= 4 && !c.link.nvlink_bridge; }

CardRun run_on(const JobSpec& job, const Card& c)
{
  CardRun run = run_on_card(job, c.compute_capability);
  run.job.large_card_defaults = vllm_large_card(c);
  run.job.nccl_nvls = nccl_nvls_card(c);
  return run;
}

}  // namespace gpurent
