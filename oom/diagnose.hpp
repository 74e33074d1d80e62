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
  Bytes limit;  // usable minus the 5% margin
  Bytes need;
  bool fits = false;
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
  std::optional<OomCardOption> card;   // smallest card with usable >= card_need / 0.95, cheapest offer
  std::optional<OomCardVerdict> on_card;  // the card given with --card
};

// usable minus a 5% margin, the same integer rule as providers' fit_limit().
[[nodiscard]] constexpr Bytes oom_fit_limit(Bytes usable) noexcept
{
  return Bytes{usable.n / 100 * 95 + usable.n % 100 * 95 / 100};
}

// A size as people read it, never rounded to nothing: "23.34 GiB", "2.00 MiB", "512 bytes".
[[nodiscard]] std::string oom_size(Bytes b);

[[nodiscard]] OomDiagnosis diagnose_oom(const OomReport& report, std::span<const OomCardOption> options,
                                        const std::optional<OomCardOption>& given = std::nullopt);

}  // namespace gpurent
