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
#include "providers/plan.hpp"
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
  std::string optimizer;
  bool grad_checkpointing = false;
  bool no_grad_checkpointing = false;
  std::string lora_rank;
  std::string gpus;
  std::string nodes;  // plan --nodes
  std::string shard;
  std::string gpu_util;
  std::string card;
  std::string provider;
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
  std::string rank_by;
  std::string deadline;
};

// Registers the options that size the job (--task, --engine, --weights, --kv-cache, --context,
// --batch, --micro-batch, --grad-accum, --pack, --optimizer, --grad-checkpointing, --no-grad-checkpointing, --lora-rank, --shard,
// --gpu-util, --engine-version, --offline) on `sub`: `plan`, `fits` and `up --from-plan` share them. Defined in
// plan_command.cpp (the CLI11 unit).
void add_plan_sizing_options(CLI::App& sub, PlanArgs& args);

// Registers --tokens, --epochs, --requests, --input-len, --output-len, --concurrency, --rank-by and
// --deadline (plan and up --from-plan).
void add_plan_job_options(CLI::App& sub, PlanArgs& args);

inline constexpr std::uint32_t k_default_context = 4096;

// Validated and typed, with cli.md's defaults applied. What depends on the model (the engine of a
// GGUF checkpoint, the weight format, the LoRA rank of an adapter, the context, checkpointing)
// stays unset, or flagged as not given, until make_job knows it.
struct PlanOptions {
  std::string model;                    // empty when only --params is given
  std::optional<std::uint64_t> params;  // --params
  Task task = Task::infer;
  Engine engine = Engine::transformers;
  bool engine_given = false;
  std::optional<WeightFormat> weights;   // --weights; nullopt: the checkpoint's own (make_job)
  KvDtype kv_cache = KvDtype::auto_;
  bool kv_cache_given = false;
  std::optional<std::uint32_t> context;  // --context as given
  std::uint32_t batch = 1;
  bool batch_given = false;  // --batch or --micro-batch
  std::uint32_t grad_accum = 1;  // --grad-accum: micro-batches per optimizer step (training)
  bool grad_accum_given = false;
  bool pack = false;             // --pack: sequences packed to the context (training)
  Optimizer optimizer = Optimizer::adamw;
  bool optimizer_given = false;
  std::optional<bool> grad_checkpointing;  // --grad-checkpointing / --no-grad-checkpointing
  std::uint32_t lora_rank = 16;
  bool lora_rank_given = false;
  std::uint32_t gpu_util_permille = 900;
  bool gpu_util_given = false;
  PlanRequest request;  // gpus, shard, hours, provider, spot, max price, card (ids)
  std::string card_display;  // the --card as found, for messages
  bool offline = false;
  std::string gguf;          // --gguf FILE|URL: size that GGUF file
  std::uint32_t engine_version = 0;  // --engine-version (sizing/engine_release.hpp); 0 = the current release
};

// Every value checked; the first bad one is an Errc::usage error naming the flag.
[[nodiscard]] Result<PlanOptions> validate_plan_args(const PlanArgs& args);

// The engine can run the task (training engines train, serving engines serve); Errc::usage.
[[nodiscard]] Result<void> check_task_engine(Task task, Engine engine);
// The engine loads that weight format and the task can train on it (GGUF types under
// llama.cpp/ollama/vllm, 16-bit for full training, 4-bit for qlora); Errc::usage.
[[nodiscard]] Result<void> check_weights(Task task, Engine engine, WeightFormat weights);

// A value plan chose for the user (cli.md plan v2 `job.defaults`), with the reason and source.
struct JobDefault {
  enum class Kind { text, number, boolean };
  std::string key;    // "weights", "grad_checkpointing", "context", …
  std::string value;  // "mxfp4", "true", "4096"
  std::string why;
  Kind kind = Kind::text;
};

// The job for `model` with every default of docs/sizing.md "Defaults" applied: the weights in the
// checkpoint's own format (QLoRA: NF4 with double quantization; GGUF engines: ollama's tag
// quantization or Q4_K_M), gradient checkpointing on for LoRA/QLoRA, context 4096 capped at the
// model's maximum. An explicit --context above the maximum, or --weights the task cannot train
// on, is a usage error. `defaults` (when given) receives every value chosen for the user.
// Defined in plan_job.cpp.
[[nodiscard]] Result<JobSpec> make_job(const PlanOptions& opts, const ModelArch& model,
                                       std::vector<JobDefault>* defaults = nullptr);

// ---- Value parsers (each rejects anything but the whole string as a valid value) ----
// "7B", "70e9", "8.03B", "350M", "1.5T", "7000000000": 1e6 ..= 1e14 parameters.
[[nodiscard]] Result<std::uint64_t> parse_param_count(std::string_view s);
// "50M", "1.2B", "2e9", "500k", "1000": a count of tokens or requests, 1 ..= 1e15; `flag` names it.
[[nodiscard]] Result<std::uint64_t> parse_token_count(std::string_view s, std::string_view flag);
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
