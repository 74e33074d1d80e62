// SPDX-License-Identifier: MIT
#pragma once
// The job as the engine runs it on one card: the hardware rules for the card's compute capability
// (sizing/hardware_rules.hpp) plus the card facts the memory estimate reads (vLLM's defaults for
// large cards, NCCL's NVLink SHARP buffers). Pure.
#include "providers/card.hpp"
#include "sizing/hardware_rules.hpp"

namespace gpurent {

// vLLM's OpenAI server profiles 8192 tokens and 1024 sequences on a card with 70 GiB or more
// whose name does not contain "A100" (arg_utils _set_default_args); 2048 and 256 elsewhere.
[[nodiscard]] bool vllm_large_card(const Card& c) noexcept;
// NCCL sets up NVLink SHARP on Hopper and later GPUs joined by an NVSwitch (the SXM boards: NVLink
// 4 or later without a bridge).
[[nodiscard]] bool nccl_nvls_card(const Card& c) noexcept;

[[nodiscard]] CardRun run_on(const JobSpec& job, const Card& c);

}  // namespace gpurent
