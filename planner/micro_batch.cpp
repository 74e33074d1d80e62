// SPDX-License-Identifier: MIT
#include "planner/micro_batch.hpp"

#include <vector>

#include "sizing/estimate.hpp"

namespace gpurent {

JobSpec with_chosen_micro_batch(const JobSpec& job, const Card& card, const SpeedFigures& figures,
                                const std::function<Bytes(const JobSpec&)>& total)
{
  if (!is_training(job.task) || !job.micro_batch_chosen) {
    return job;
  }
  const auto at = [&](std::uint32_t m) {
    JobSpec t = job;
    t.batch = m;
    return t;
  };
  const auto fits = [&](std::uint32_t m) {
    const JobSpec t = at(m);
    return total(t) <= fit_limit_for(t, card.usable);
  };
  if (!fits(1)) {
    return at(1);
  }
  // Memory grows with the micro-batch: the largest that fits, by bisection.
  std::uint32_t lo = 1, hi = k_max_chosen_micro_batch;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  std::vector<double> speed(lo + 1, 0.0);
  double best = 0;
  for (std::uint32_t m = 1; m <= lo; ++m) {
    const Speed s = estimate_speed(at(m), card, SpeedLoad{}, figures);
    speed[m] = s.train_tokens_per_s.value_or(0.0);
    best = std::max(best, speed[m]);
  }
  for (std::uint32_t m = 1; m <= lo; ++m) {
    if (speed[m] >= best * (1.0 - k_micro_batch_gain)) {
      return at(m);
    }
  }
  return at(1);
}

}  // namespace gpurent
