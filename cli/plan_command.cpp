// SPDX-License-Identifier: MIT
// `gpurent plan [MODEL] [options]`: size a job, pick a card and a provider, model the bill.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/plan_build.hpp"
#include "cli/plan_json.hpp"
#include "cli/plan_options.hpp"
#include "planner/plan_report.hpp"
#include "cli/plan_text.hpp"
#include "cli/services.hpp"
#include "providers/catalog.hpp"

namespace gpurent {
namespace {

void run_plan(Services& s, const PlanArgs& args)
{
  auto opts = validate_plan_args(args);
  if (!opts) {
    s.exit_code = report_error(s, opts.error());
    return;
  }
  auto report = build_plan_report(s, *opts, provider_catalog());
  if (!report) {
    s.exit_code = report_error(s, report.error());
    return;
  }
  if (s.global.json) {
    write_plan_json(s.out, *report);  // the options streamed one at a time (docs/benchmarks.md)
    s.out << '\n';
  } else {
    s.out << render_plan_text(*report, s.color_out(), s.utf8());
  }
  if (!report->fits()) {
    const bool recipe = report->recipe && report->recipe->recipe.fits && !report->refused();
    s.exit_code = report_error(
        s, Error{Errc::refused, fmt::format("plan: {}; {}", plan_misfit_reason(*report),
                                            recipe                ? "the recipe above makes it fit"
                                            : report->missed_deadline() ? "allow more time, or more GPUs"
                                            : report->missed_targets() ? "relax --min-user-speed or --max-ttft, or "
                                                                         "shorten the requests"
                                            : report->refused()   ? "pick a card that runs it"
                                            : report->fixes.empty() ? "relax the filters"
                                                                    : "see the fixes above")});
  }
}

}  // namespace

void add_plan_sizing_options(CLI::App& sub, PlanArgs& args)
{
  sub.add_option("--task", args.task, "infer | serve | train | lora | qlora (default infer)");
  sub.add_option("--engine", args.engine, "transformers | vllm | sglang | trtllm | llama.cpp | ollama | torchtune | deepspeed | unsloth");
  sub.add_option("--weights", args.weights,
                 "fp32 bf16 fp16 fp8 int8 int4 nf4 awq gptq mxfp4 nvfp4 or a GGUF type (default: the checkpoint's own)");
  sub.add_option("--kv-cache", args.kv_cache, "auto | fp16 | bf16 | fp8 | q8_0 | q4_0 (default auto)");
  sub.add_option("--context", args.context, "tokens per sequence (default 4096, capped at the model's maximum)");
  sub.add_option("--batch", args.batch,
                 "sequences per GPU per step, or in flight (default 1; training: chosen per card)");
  sub.add_option("--micro-batch", args.micro_batch,
                 "training: sequences per GPU per step (--batch's other name; default: the fastest that fits)");
  sub.add_option("--grad-accum", args.grad_accum,
                 "training: micro-batches per optimizer step (default 1; global batch = micro-batch x this x GPUs)");
  sub.add_flag("--pack", args.pack, "training: pack sequences to the full context (TRL --packing), no padding");
  sub.add_flag("--compile", args.compile, "training: torch.compile the step (TRL --torch_compile, torchtune compile=True)");
  sub.add_option("--optimizer", args.optimizer, "adamw | adamw-8bit | sgd | adafactor (default adamw)");
  sub.add_flag("--grad-checkpointing", args.grad_checkpointing,
               "recompute activations in the backward pass (default: on for lora/qlora)");
  sub.add_flag("--no-grad-checkpointing", args.no_grad_checkpointing, "keep every activation (lora/qlora default: on)");
  sub.add_option("--lora-rank", args.lora_rank, "LoRA rank (default 16)");
  sub.add_option("--shard", args.shard, "none | ddp | fsdp | zero1 | zero2 | zero3 | tp | layer");
  sub.add_option("--gpu-util", args.gpu_util, "vLLM gpu_memory_utilization (default 0.9)");
  sub.add_option("--engine-version", args.engine_version,
                 "the engine's release, e.g. 0.10.1, llama.cpp's build b3216 (default: the current one; vLLM before 0.8 runs V0)");
  sub.add_flag("--offline", args.offline, "never fetch: no model from the Hugging Face Hub, no price catalogue refresh");
  sub.add_option("--gguf", args.gguf, "size this GGUF file: a path, an https:// URL, or a file of the Hub MODEL");
}

void add_plan_job_options(CLI::App& sub, PlanArgs& args)
{
  sub.add_option("--tokens", args.tokens, "training: tokens per epoch (50M, 1.2B): plan gives hours and the bill");
  sub.add_option("--epochs", args.epochs, "training: epochs over --tokens (default 1)");
  sub.add_option("--requests", args.requests, "inference: a batch job of N requests: plan gives hours and the bill");
  sub.add_option("--input-len", args.input_len, "prompt tokens per request (default: the context less the output)");
  sub.add_option("--output-len", args.output_len, "generated tokens per request (default 256)");
  sub.add_option("--concurrency", args.concurrency,
                 "serve: requests in flight, over replicas when one server cannot hold them (default: what the KV "
                 "pool holds at the targets)");
  sub.add_option("--min-user-speed", args.min_user_speed,
                 "serve: output tokens/s each user must see (default 10); options below it are not chosen");
  sub.add_option("--max-ttft", args.max_ttft, "serve: most seconds to the first token at that load");
  sub.add_option("--rank-by", args.rank_by,
                 "cost | time | hourly (default cost with --tokens/--requests or --task serve, else hourly)");
  sub.add_option("--deadline", args.deadline, "keep options that finish within this (6h, 90m, 2d)");
}

void add_plan_command(CLI::App& app, Services& s)
{
  auto args = std::make_shared<PlanArgs>();
  auto* sub = app.add_subcommand("plan", "size a job's GPU memory, pick card + provider, model the bill");
  sub->add_option("model", args->model, "catalogue name, Hugging Face id, checkpoint or adapter directory, .gguf or "
                                        "config.json path");
  add_plan_sizing_options(*sub, *args);
  add_plan_job_options(*sub, *args);
  sub->add_option("--gpus", args->gpus, "GPUs per server, 1-8 (default: the cheapest count that fits)");
  sub->add_option("--nodes", args->nodes,
                  "servers the job spans, 1-64 (default 1, or the fewest that fit when one server does not)");
  sub->add_option("--card", args->card, "check the job against this card (\"RTX 4090\", A100-80GB, ...)");
  sub->add_option("--provider", args->provider, "only these clouds, a comma list (runpod,nebius)");
  sub->add_flag("--rentable", args->rentable, "only clouds gpurent rents itself (lambda, runpod, vast)");
  sub->add_option("--region", args->region, "only offers in this region (gpurent offers lists them)");
  sub->add_option("--hours", args->hours, "expected run time in hours (default 1)");
  sub->add_flag("--spot", args->spot, "use spot/interruptible prices where offered");
  sub->add_option("--max-price", args->max_price, "highest USD per hour for the whole server");
  sub->add_option("--params", args->params, "parameter count (7B, 70e9, 8.03B) when no MODEL is given");
  sub->callback([&s, args] { run_plan(s, *args); });
}

}  // namespace gpurent
