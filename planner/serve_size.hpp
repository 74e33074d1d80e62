// SPDX-License-Identifier: MIT
#pragma once
// How a serving workload fills servers of one shape (cli.md plan v4 "One job"; docs/speed.md
// "Per user"): C sequences of I + O tokens held at once, split over identical servers (replicas)
// when one cannot hold them or cannot serve them at the service targets. Pure.
#include <cstdint>
#include <string>
#include <vector>

#include "providers/card.hpp"
#include "planner/rank.hpp"
#include "planner/speed.hpp"
#include "sizing/job.hpp"

namespace gpurent {

struct ServeSizing {
  JobSpec job;            // one replica's job (batch and --max-num-seqs: its sequences)
  MemoryEstimate memory;  // per GPU of one replica
  Speed speed;            // every replica together: the output rate of all C requests
  ServeShape shape;
  bool fits = false;      // one replica's memory within the card's limit, its KV pool holds its sequences
};

// One replica's memory per GPU at `replica.batch` sequences of `seq_tokens` (I + O) each:
// vLLM/SGLang hold the KV cache of the tokens in flight (blocks allocated as tokens arrive;
// --max-model-len only caps one sequence), llama.cpp/ollama a slot of the whole context each.
[[nodiscard]] MemoryEstimate serving_memory(const JobSpec& replica, std::uint64_t seq_tokens, const Estimator& estimator);

// What the speed misses of the targets, in words ("7.2 tok/s per user, 2.8 below the 10 asked");
// empty when it meets them. An unknown figure misses (it is not known to meet the target).
[[nodiscard]] std::vector<std::string> target_misses(const Speed& per_replica, const ServeTargets& targets);

// `there`: the serving job on `card` at the option's GPU count and servers (job_for_gpus).
// `load`: lengths and concurrency (0: the most one replica's KV pool holds, lowered to the most
// that meet the targets; llama.cpp/ollama: the slots planned, --batch), the link between servers.
// With a concurrency C: the fewest replicas whose share ceil(C / replicas) fits one server (its
// KV cache and activations for that many sequences; vLLM/SGLang: a KV pool of share x (I + O)
// tokens) and meets the targets; when no count meets them, the fewest that fit, with the misses.
[[nodiscard]] ServeSizing size_serving(const JobSpec& there, const Card& card, const SpeedLoad& load,
                                       const ServeTargets& targets, const Estimator& estimator,
                                       const SpeedFigures& figures);

}  // namespace gpurent
