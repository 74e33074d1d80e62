// SPDX-License-Identifier: MIT
#pragma once
// Internal: one function per fix (planner/fixes_*.cpp). Each returns nullopt when the fix does not
// apply to the job's task/engine.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "planner/fixes.hpp"

namespace gpurent::fixes_detail {

[[nodiscard]] Bytes total_of(const JobSpec& j) noexcept;
[[nodiscard]] bool fits(const JobSpec& j, Bytes limit) noexcept;
[[nodiscard]] std::string gib(Bytes b);
[[nodiscard]] bool is_inference(const JobSpec& j) noexcept;
[[nodiscard]] std::uint32_t largest_fitting(std::uint32_t lo, std::uint32_t hi,
                                            const std::function<bool(std::uint32_t)>& ok);
[[nodiscard]] Fix make_fix(const JobSpec& job, const JobSpec& modified, Bytes limit, std::string id,
                           std::string description);

[[nodiscard]] std::optional<Fix> fix_reduce_batch(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_reduce_context(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_mixed_precision(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_grad_checkpointing(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_quantize_weights(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_8bit_optimizer(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_embeddings_16bit(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_activation_offload(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_lora(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_qlora(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_kv_cache(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_fewer_sequences(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_cpu_offload(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_moe_expert_offload(const JobSpec& job, Bytes limit);
[[nodiscard]] std::optional<Fix> fix_more_gpus(const JobSpec& job, Bytes limit, std::span<const std::uint32_t> counts);
// The shard mode a job uses once it has more than one GPU, and the flags that run it there.
[[nodiscard]] Shard multi_gpu_shard(const JobSpec& job) noexcept;
void multi_gpu_flags(Fix& f, const JobSpec& m);

}  // namespace gpurent::fixes_detail
