// SPDX-License-Identifier: MIT
#pragma once
// The public speed measurements (tests/data/speed/measurements.json) as jobs the speed model can
// predict: shared by the measured-case test and the constant fitter (tests/tools/speed_fit.cpp).
#include <string>
#include <vector>

#include "providers/card.hpp"
#include "planner/speed.hpp"
#include "sizing/job.hpp"

namespace gpurent::test {

struct SpeedCase {
  std::string id;
  std::string kind;       // decode | prefill | serve | train
  JobSpec job;
  Card card;
  SpeedLoad load;
  SpeedEngine engine = SpeedEngine::vllm;
  double measured = 0;    // tokens/s of the whole server
  bool fit = false;       // in the fit half (ids sorted, every other one); else the check half
};

// Every row marked `use` whose model, card and format gpurent knows. Rows it cannot map are
// listed in `skipped` with the reason.
std::vector<SpeedCase> load_speed_cases(const std::string& path, std::vector<std::string>* skipped = nullptr);

// What the model predicts for a case with the given constants (0 when it cannot).
double predict(const SpeedCase& c, const SpeedConstants& k);

// 80th percentile of |predicted / measured - 1| in percent, and the median.
struct Spread {
  double p80 = 0, median = 0;
  std::size_t n = 0;
};
Spread spread_of(const std::vector<double>& ratios);

}  // namespace gpurent::test
