// SPDX-License-Identifier: MIT
#pragma once
// Internal to sizing/weights_*.cpp (not a public interface): which part of a model a tensor
// belongs to, from its name and rank, for safetensors and GGUF names alike.
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sizing/checkpoint.hpp"

namespace gpurent::tensor_parts {

using U = std::uint64_t;

enum class Part { embedding, linear, experts, other };

[[nodiscard]] std::vector<std::string_view> segments_of(std::string_view name);
[[nodiscard]] bool has_segment(const std::vector<std::string_view>& seg, std::initializer_list<std::string_view> names);
// Vision/audio towers and projectors of multimodal checkpoints (any naming seen on the Hub).
[[nodiscard]] bool outside_text(const std::vector<std::string_view>& seg);
// Quantization metadata stored beside a weight (scales, zero points, indices, bitsandbytes
// state): bytes without parameters. `names` indexes every tensor of the checkpoint.
[[nodiscard]] bool is_aux(const std::vector<std::string_view>& seg,
                          const std::unordered_map<std::string_view, std::size_t>& names, std::string_view name);
// The part of a tensor (aux tensors count as matrices: they belong to their weight's part).
[[nodiscard]] Part part_of(const std::vector<std::string_view>& seg, std::size_t rank, bool aux);
[[nodiscard]] U elements(const std::vector<U>& shape);  // saturating
[[nodiscard]] U sat_add(U a, U b);
[[nodiscard]] U sat_mul(U a, U b);
[[nodiscard]] WeightGroup& group(CheckpointWeights& w, Part p);

}  // namespace gpurent::tensor_parts
