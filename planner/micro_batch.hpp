// SPDX-License-Identifier: MIT
#pragma once
// Training's micro-batch when the user gave none (cli.md plan v4; docs/speed.md "Micro-batch and
// packing"): the one that trains fastest in the memory the card leaves. Pure.
#include <cstdint>
#include <functional>

#include "providers/card.hpp"
#include "planner/speed.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// The most sequences plan puts in one micro-batch by itself.
inline constexpr std::uint32_t k_max_chosen_micro_batch = 64;
// A larger micro-batch is taken only when it trains at least this much faster than the smallest
// that comes within it (a bigger one changes the global batch for nothing).
inline constexpr double k_micro_batch_gain = 0.01;

// `job` (gpus, shard and layout resolved for the option) with its micro-batch chosen on `card`:
// of the micro-batches 1..k_max_chosen_micro_batch whose memory (`total`) fits the card, the
// smallest whose training speed is within k_micro_batch_gain of the fastest. Unchanged when the
// job is not training, the user set the micro-batch, or even one sequence does not fit.
[[nodiscard]] JobSpec with_chosen_micro_batch(const JobSpec& job, const Card& card, const SpeedFigures& figures,
                                              const std::function<Bytes(const JobSpec&)>& total);

}  // namespace gpurent
