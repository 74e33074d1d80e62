// SPDX-License-Identifier: MIT
#pragma once
// The words `plan` uses for speed, hours and bills (the text view; plan_text.cpp lays them out).
#include <chrono>
#include <string>

#include "planner/plan_report.hpp"

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
// An option on several servers: "12 servers x 8" (its GPUs column: "12x8"), "8" on one.
[[nodiscard]] std::string shape_label(const PlanOption& o);
[[nodiscard]] std::string shape_cell(const PlanOption& o);
// A serving option's workload: "serves 200 requests at once on 3 replicas (identical servers, each
// billed) of 67 each (--max-num-seqs 67, KV pool 180,000 tokens): 12.3 tok/s per user, first token
// in 0.45 s", or "" for other tasks.
[[nodiscard]] std::string serve_line(const PlanOption& o, Engine engine);
// An option on several servers whose training step the network between them dominates: "the
// network between the 12 servers alone makes each step >= 778 s (compute 4.1 s): ...", or "".
[[nodiscard]] std::string network_note(const PlanOption& o);

}  // namespace gpurent
