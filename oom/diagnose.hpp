// SPDX-License-Identifier: MIT
#pragma once
// The arithmetic of an out-of-memory report (docs/oom.md): what the process would need, what
// others hold, which causes hold (fixed order) and the fixes in order. Pure.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.hpp"
#include "oom/parse.hpp"

namespace gpurent {

// In the order the fixes are tried; `causes` lists those that hold, primary first.
enum class OomCause {
  allocation_exceeds_card,
  other_process,
  fragmentation,
  job_too_large,
  context_exceeds_kv_cache,
  no_kv_cache_memory,
  limit_not_capacity,  // free memory was enough: something capped the process
  host_memory,         // system RAM, not GPU memory, ran out
};
[[nodiscard]] std::string_view to_string(OomCause c) noexcept;

struct OomFix {
  std::string id;
  std::string description;
  std::string command;  // empty when the fix is not one command
};

// A card the caller offers (built from the card catalogue and the providers' offers; sizing/
// does not depend on providers/). One entry per offer; `provider` empty for a card no provider
// offers.
struct OomCardOption {
  std::string card;  // Card::id
  std::string display;
  Bytes usable;      // what CUDA reports as total memory
  std::string provider;
  std::uint32_t gpus = 1;
  std::optional<MicroUsd> price_per_hour;
};

struct OomCardVerdict {
  OomCardOption card;
  Bytes limit;  // usable minus the 5% margin (from plan: fit_limit_for, also vLLM's share)
  Bytes need;
  bool fits = false;
  bool estimated = false;  // need and limit are plan's estimate of the job the log ran, not the message's numbers
  std::uint32_t gpus = 1;  // the job's GPUs (plan's estimate is per GPU)
};

// A fix of plan's (planner/fixes.hpp suggest_fixes) for the job the log ran, against the card's limit.
struct OomPlanFix {
  std::string id;           // plan's id: "reduce-context", "quantize-weights", "kv-cache-q8_0", ...
  std::string description;  // plan's words: "context 36864 tokens (was 131072)"
  std::string command;      // the flags of the engine that raised the error ("" when plan gives none)
  std::string value;        // the new value: "36864", "Q3_K_M", "q8_0"
  Bytes saves;              // per GPU, by plan's estimate
  bool fits_alone = false;
};

// The job the log ran, rebuilt from what it printed (OomReport::job) and sized by plan's estimate
// (sizing/estimate.hpp). The caller computes it: oom/ does not depend on sizing/.
struct OomJobEstimate {
  std::string model;        // the catalogue name, or what the log calls the model
  std::string job;          // "llama.cpp, Q4_K_M weights, context 131072, 1 sequence, KV cache fp16, 1 GPU"
  std::string plan_command; // the `gpurent plan` line that sizes the same job, when one does
  std::string weights_format;  // as gpurent names it ("Q4_K_M", "fp8", "bf16")
  std::string kv_cache;        // "fp16", "q8_0", "fp8"
  std::uint32_t context = 0;   // tokens per sequence
  std::uint32_t gpus = 1;
  Bytes weights, kv_cache_bytes, activations, overhead, total;  // per GPU
  std::vector<std::string> assumed;  // values the log does not print, taken as the engine's defaults
  std::vector<std::string> notes;    // e.g. "no GGUF type smaller than Q2_K"
  std::optional<OomCardVerdict> on_card;  // plan's fit on the given card
  std::vector<std::string> cards_fitting;  // ids of the cards plan fits the job on
  bool card_searched = false;              // cards_fitting was computed (empty then: none holds it)
  bool fixes_known = false;               // `fixes` were computed against a card's limit
  std::vector<OomPlanFix> fixes;          // plan's fixes, in plan's order
};

// What the caller could tell about the job in the log: plan's estimate, or why there is none.
struct OomJobInput {
  std::optional<OomJobEstimate> estimate;
  std::vector<std::string> missing;  // the figures the estimate needs that the log does not give
  std::string why_not;               // one sentence when there is no estimate ("" when there is)
};

struct OomDiagnosis {
  Bytes non_pytorch;                   // n
  bool non_pytorch_estimated = true;   // n is the 0.5 GiB CUDA-context estimate
  std::optional<Bytes> footprint;      // what this process held
  std::optional<Bytes> need;           // need_gib: A + R + n (MPS: A + O + R; TPU: the program's use)
  std::optional<Bytes> other_processes;
  std::optional<OomOtherProcess> self_process;  // the listed process that is this job, seen from a container
  std::vector<OomCause> causes;
  std::vector<OomFix> fixes;
  std::optional<std::uint64_t> fitting_max_model_len;  // vLLM: the longest context the KV memory holds
  std::optional<Bytes> card_need;      // what the suggested card must hold
  // Without plan's estimate: the model's own buffers already on the GPU when a llama.cpp KV-cache
  // or compute buffer failed (its "model buffer size" lines, or the file when every layer was
  // offloaded to one GPU), counted into card_need beside the failed buffer.
  std::optional<Bytes> resident_weights;
  std::optional<OomCardOption> card;   // smallest card with usable >= card_need / 0.95, cheapest offer
  std::optional<OomCardVerdict> on_card;  // the card given with --card
  OomJobInput job;                        // plan's estimate of the job in the log, or what it lacks
};

// usable minus a 5% margin, the same integer rule as providers' fit_limit().
[[nodiscard]] constexpr Bytes oom_fit_limit(Bytes usable) noexcept
{
  return Bytes{usable.n / 100 * 95 + usable.n % 100 * 95 / 100};
}

// A size as people read it, never rounded to nothing: "23.34 GiB", "2.00 MiB", "512 bytes".
[[nodiscard]] std::string oom_size(Bytes b);

// With `job.estimate`, the card verdict, the card named and the llama.cpp/vLLM fixes that change
// the job's format or context come from plan's estimate; without it, from the message's numbers.
[[nodiscard]] OomDiagnosis diagnose_oom(const OomReport& report, std::span<const OomCardOption> options,
                                        const std::optional<OomCardOption>& given = std::nullopt,
                                        OomJobInput job = {});

}  // namespace gpurent
