// SPDX-License-Identifier: MIT
#pragma once
// The architecture a GGUF header describes (pure): llama.cpp's hyper-parameter keys
// (<arch>.block_count, .embedding_length, .attention.head_count(_kv), .context_length, …) read
// into a ModelArch, with the exact weights of its tensors attached (ModelArch::checkpoint).
#include <span>
#include <string_view>

#include "common/result.hpp"
#include "sizing/gguf_header.hpp"
#include "sizing/model.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {

// `first` is the header of the file (or of shard 1 of a split file: it holds the metadata);
// `tensors` are the tensors of every shard. Unknown architectures are read from the same keys
// and labelled approximate; only a header without any size (no block count, no embedding
// width and no tensors to infer them from) is an Errc::invalid_input error.
[[nodiscard]] Result<ModelArch> arch_from_gguf(const GgufHeader& first, std::span<const TensorEntry> tensors,
                                               std::string_view source);

}  // namespace gpurent
