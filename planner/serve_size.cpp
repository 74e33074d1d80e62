// SPDX-License-Identifier: MIT
#include "planner/serve_size.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "planner/largest.hpp"
#include "sizing/estimate.hpp"

namespace gpurent {
namespace {

// Engines with a KV pool (vLLM, SGLang, TensorRT-LLM); llama.cpp and ollama hold a cache per slot.
bool pooled(Engine e) { return pools_kv(e); }

// One replica running `seqs` sequences at once.
struct Trial {
  JobSpec job;
  MemoryEstimate memory;
  ServePool pool;
  Speed speed;
  bool fits = false;
  std::vector<std::string> misses;
};

struct Sizer {
  const JobSpec& there;
  const Card& card;
  const SpeedLoad& load;
  const ServeTargets& targets;
  const Estimator& estimator;
  const SpeedFigures& figures;
  std::uint64_t seq_tokens = 0;

  // The replica's job at `seqs` sequences: its KV cache and activations for that many (vLLM
  // profiles --max-num-seqs sequences; llama.cpp holds -np slots of the context each).
  [[nodiscard]] Trial at(std::uint32_t seqs) const
  {
    Trial t;
    t.job = there;
    t.job.batch = seqs;
    if (pooled(there.engine)) {
      t.job.max_seqs = seqs;
    }
    t.memory = serving_memory(t.job, seq_tokens, estimator);
    t.fits = t.memory.total() <= fit_limit_for(t.job, card.usable);
    if (pooled(there.engine)) {
      t.pool = serve_pool(t.job, t.memory, card.usable);
      t.fits = t.fits && t.pool.kv_pool_tokens >= seq_tokens * seqs;
    }
    speed_at(t, seqs);
    return t;
  }

  void speed_at(Trial& t, std::uint32_t seqs) const
  {
    SpeedLoad l = load;
    l.concurrency = seqs;
    t.speed = estimate_speed(t.job, card, l, figures);
    t.misses = target_misses(t.speed, targets);
  }
};

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

std::string rate_text(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v); }

// Seconds to two decimals, or two significant digits below a hundredth.
std::string seconds_text(double s) { return s >= 0.01 ? fmt::format("{:.2f}", s) : fmt::format("{:.2g}", s); }

}  // namespace

MemoryEstimate serving_memory(const JobSpec& replica, std::uint64_t seq_tokens, const Estimator& estimator)
{
  MemoryEstimate m = estimator(replica);
  if (pooled(replica.engine) && seq_tokens > 0 && seq_tokens < replica.context) {
    m.kv_cache = kv_cache_bytes(replica, seq_tokens, std::max<std::uint32_t>(replica.batch, 1));
  }
  return m;
}

std::vector<std::string> target_misses(const Speed& sp, const ServeTargets& targets)
{
  std::vector<std::string> misses;
  if (!sp.per_user_tokens_per_s) {
    misses.push_back("per-user speed unknown (a card figure the speed needs is missing)");
  } else if (*sp.per_user_tokens_per_s < targets.min_user_tokens_per_s) {
    misses.push_back(fmt::format("per-user speed {} tok/s, {} below the {:g} tok/s target",
                                 rate_text(*sp.per_user_tokens_per_s),
                                 rate_text(targets.min_user_tokens_per_s - *sp.per_user_tokens_per_s),
                                 targets.min_user_tokens_per_s));
  }
  if (targets.max_ttft_s) {
    if (!sp.ttft_s) {
      misses.push_back("time to first token unknown (a card figure the speed needs is missing)");
    } else if (*sp.ttft_s > *targets.max_ttft_s) {
      misses.push_back(fmt::format("time to first token {} s, {} s over the {:g} s target", seconds_text(*sp.ttft_s),
                                   seconds_text(*sp.ttft_s - *targets.max_ttft_s), *targets.max_ttft_s));
    }
  }
  return misses;
}

ServeSizing size_serving(const JobSpec& there, const Card& card, const SpeedLoad& load, const ServeTargets& targets,
                         const Estimator& estimator, const SpeedFigures& figures)
{
  const ServeLengths lengths = serve_lengths(there.context, load);
  const Sizer sizer{there, card, load, targets, estimator, figures, lengths.tokens()};
  ServeSizing out;
  Trial chosen;
  std::uint32_t replicas = 1;
  const std::uint32_t asked = load.concurrency;
  if (asked == 0) {
    // No concurrency given: one server; vLLM/SGLang run the most sequences the KV pool holds that
    // still meet the targets (its --max-num-seqs), llama.cpp/ollama the slots planned.
    chosen.job = there;
    chosen.memory = estimator(there);
    chosen.fits = chosen.memory.total() <= fit_limit_for(there, card.usable);
    std::uint32_t seqs = std::max<std::uint32_t>(there.batch, 1);
    if (pooled(there.engine)) {
      chosen.pool = serve_pool(there, chosen.memory, card.usable);
      const std::uint64_t held = lengths.tokens() > 0 ? chosen.pool.kv_pool_tokens / lengths.tokens() : 0;
      const auto cap = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(held, 1, 65536));
      seqs = largest(1, cap, [&](std::uint32_t n) {
               Trial t = chosen;
               sizer.speed_at(t, n);
               return t.misses.empty();
             }).value_or(1);
      chosen.job.max_seqs = seqs;
    }
    sizer.speed_at(chosen, seqs);
    out.shape.per_replica = seqs;
  } else {
    const Trial one = sizer.at(1);
    if (!one.fits) {
      chosen = sizer.at(asked);  // not even one sequence fits: the job as asked, on one server
    } else {
      auto share = largest(1, asked, [&](std::uint32_t n) {
        const Trial t = sizer.at(n);
        return t.fits && t.misses.empty();
      });
      if (!share) {
        share = largest(1, asked, [&](std::uint32_t n) { return sizer.at(n).fits; });  // the fewest that hold C
      }
      replicas = ceil_div(asked, *share);
      chosen = sizer.at(ceil_div(asked, replicas));  // C spread evenly over the replicas
    }
    out.shape.per_replica = chosen.job.batch;
    // Every replica together: C requests at the rate per request of a replica with its share.
    if (chosen.speed.serve_output_tokens_per_s) {
      *chosen.speed.serve_output_tokens_per_s *= static_cast<double>(asked) / chosen.job.batch;
    }
    chosen.speed.concurrency = asked;
  }
  out.job = chosen.job;
  out.memory = chosen.memory;
  out.speed = chosen.speed;
  out.fits = chosen.fits;
  out.shape.replicas = replicas;
  // llama.cpp/ollama: the KV cache cells of -c (the context for each of the -np slots).
  out.shape.kv_pool_tokens = pooled(there.engine) ? chosen.pool.kv_pool_tokens
                                                  : std::uint64_t{chosen.job.context} * out.shape.per_replica;
  out.shape.misses = chosen.misses;
  out.shape.meets_targets = chosen.misses.empty();
  return out;
}

}  // namespace gpurent
