// SPDX-License-Identifier: MIT
#pragma once
// Will the job run on a card: each (engine, weight format, KV-cache format, dense or MoE, compute
// capability) resolves to native, fallback (a slower or non-default path, with the flags it needs
// and the memory it really takes) or refused. Pure. The rules and their sources: docs/hardware.md
// (from the engines' code and issues, following each engine's current release).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sizing/job.hpp"

namespace gpurent {

enum class RunStatus { native, fallback, unknown, refused };
[[nodiscard]] std::string_view to_string(RunStatus s) noexcept;

struct RunVerdict {
  RunStatus status = RunStatus::native;
  std::string why;                            // one sentence per rule that applied, with its source
  std::map<std::string, std::string> flags;   // engine key ("vllm") -> flags the launch line carries for this
};

// The job as the engine runs it on a card of compute capability `cc` (major x 10 + minor;
// nullopt = unknown): weights held as the engine holds them there (an FP8 checkpoint under
// transformers below 8.9 is dequantized to bf16; gemma2/3 under vLLM on a card without bf16 run
// fp32), fp16 compute where the card has no bf16, and the backend switches the launch line
// needs. `runs` says whether and how.
struct CardRun {
  JobSpec job;
  RunVerdict runs;
};
[[nodiscard]] CardRun run_on_card(const JobSpec& job, std::optional<std::uint32_t> cc);

// Lower is better for the choice: native, fallback, unknown, refused.
[[nodiscard]] constexpr int run_rank(RunStatus s) noexcept { return static_cast<int>(s); }

}  // namespace gpurent
