// SPDX-License-Identifier: MIT
#pragma once
// `gpurent plan` options: the raw command-line strings, their validation into typed values
// (plan_options.cpp), and the value parsers (plan_values.cpp; exposed for the property tests).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "planner/job_request.hpp"
#include "sizing/job.hpp"
#include "sizing/model.hpp"

namespace CLI {
class App;
}

namespace gpurent {

// As typed on the command line; empty = not given.
struct PlanArgs {
  std::string model;
  std::string task;
  std::string engine;
  std::string weights;
  std::string kv_cache;
  std::string context;
  std::string batch;
  std::string micro_batch;  // --micro-batch (training; --batch is its other name)
  std::string grad_accum;   // --grad-accum
  bool pack = false;        // --pack
  bool compile = false;     // --compile
  std::string optimizer;
  bool grad_checkpointing = false;
  bool no_grad_checkpointing = false;
  std::string lora_rank;
  std::string gpus;
  std::string nodes;  // plan --nodes
  std::string shard;
  std::string gpu_util;
  std::string card;
  std::string provider;  // --provider A,B: a comma list of clouds
  bool rentable = false; // --rentable: only clouds gpurent rents itself
  std::string region;    // --region R
  std::string hours;
  bool spot = false;
  std::string max_price;
  std::string params;
  bool offline = false;
  std::string gguf;  // --gguf FILE|URL
  std::string engine_version;
  // The job's size and the ranking (plan and up --from-plan: add_plan_job_options).
  std::string tokens;
  std::string epochs;
  std::string requests;
  std::string input_len;
  std::string output_len;
  std::string concurrency;
  std::string min_user_speed;  // serve: --min-user-speed TOK/S
  std::string max_ttft;        // serve: --max-ttft SECONDS
  std::string rank_by;
  std::string deadline;
};

// Registers the options that size the job (--task, --engine, --weights, --kv-cache, --context,
// --batch, --micro-batch, --grad-accum, --pack, --optimizer, --grad-checkpointing, --no-grad-checkpointing, --lora-rank, --shard,
// --gpu-util, --engine-version, --offline) on `sub`: `plan`, `fits` and `up --from-plan` share them. Defined in
// plan_command.cpp (the CLI11 unit).
void add_plan_sizing_options(CLI::App& sub, PlanArgs& args);

// Registers --tokens, --epochs, --requests, --input-len, --output-len, --concurrency,
// --min-user-speed, --max-ttft, --rank-by and --deadline (plan and up --from-plan).
void add_plan_job_options(CLI::App& sub, PlanArgs& args);

// The most --min-user-speed (tokens per second each user sees) and --max-ttft (seconds) accept.
inline constexpr std::uint32_t k_max_user_tokens_per_s = 100000;
inline constexpr std::uint32_t k_max_ttft_s = 3600;

// Every value checked; the first bad one is an Errc::usage error naming the flag.
[[nodiscard]] Result<PlanOptions> validate_plan_args(const PlanArgs& args);


// ---- Value parsers (each rejects anything but the whole string as a valid value) ----
// "7B", "70e9", "8.03B", "350M", "1.5T", "7000000000": 1e6 ..= 1e14 parameters.
[[nodiscard]] Result<std::uint64_t> parse_param_count(std::string_view s);
// "50M", "1.2B", "2e9", "500k", "1000": a count of tokens or requests, 1 ..= 1e15; `flag` names it.
[[nodiscard]] Result<std::uint64_t> parse_token_count(std::string_view s, std::string_view flag);
// "10", "2.5", "1e3": a positive rate or duration, > 0 and at most `most`, read exactly to a
// millionth (--min-user-speed tokens per second, --max-ttft seconds); `flag` names it.
[[nodiscard]] Result<double> parse_positive(std::string_view s, std::string_view flag, std::uint32_t most);
// "cost", "time", "hourly".
[[nodiscard]] Result<RankBy> parse_rank_by(std::string_view s);
// "6h", "90m", "1h30m", "45s", or a bare number of hours ("6", "0.5"): > 0 and at most 87600 h.
[[nodiscard]] Result<std::chrono::seconds> parse_deadline(std::string_view s);
// "1", "0.5", "36", "1.25": hours, > 0 and <= 87600 (ten years), to whole seconds rounded up.
[[nodiscard]] Result<std::chrono::seconds> parse_hours(std::string_view s);
// "0.9": vLLM gpu_memory_utilization in (0, 1], as permille (nearest).
[[nodiscard]] Result<std::uint32_t> parse_gpu_util(std::string_view s);
// "2.5", "$2.50": USD per hour, > 0 and <= 100000, to the micro-dollar (rounded down).
[[nodiscard]] Result<MicroUsd> parse_usd_per_hour(std::string_view s);
// "8192", "8k" (= 8192), "128K": tokens, 1 ..= 16M.
[[nodiscard]] Result<std::uint32_t> parse_context(std::string_view s);
// A plain positive integer in [lo, hi]; `flag` names it in the error.
[[nodiscard]] Result<std::uint32_t> parse_count(std::string_view s, std::string_view flag, std::uint32_t lo,
                                                std::uint32_t hi);

}  // namespace gpurent
