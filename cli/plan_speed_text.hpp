// SPDX-License-Identifier: MIT
#pragma once
// The words `plan` uses for speed, hours and bills (the text view; plan_text.cpp lays them out).
#include <chrono>
#include <string>

#include "providers/plan.hpp"

namespace gpurent {

// "decode 21.9 tok/s alone, prefill 4,120 tok/s; memory-bound; measured spread 25%" (the figures of
// the task), or "" when none is known.
[[nodiscard]] std::string speed_line(const Speed& speed, Task task);
// "12.3 h" / "45 min" / "40 s".
[[nodiscard]] std::string duration_label(std::chrono::seconds s);
// Thousands separated: 1234567 -> "1,234,567".
[[nodiscard]] std::string grouped(std::uint64_t n);
// The choice's job line: "job: 12.3 h (start-up 5 min) = $19.32 under per-second billing".
[[nodiscard]] std::string job_line(const PlanOption& c);

}  // namespace gpurent
