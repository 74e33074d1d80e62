// SPDX-License-Identifier: MIT
#pragma once
// What a checkpoint's own files say about its weights: exact bytes and parameters by the parts
// the estimate treats differently, read from safetensors or GGUF headers (sizing/weights_from_headers).
// Carried on ModelArch (ModelArch::checkpoint); estimate_weights uses it when present.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpurent {

enum class WeightFormat;

// Parameters (logical weights: a packed int32 holding eight 4-bit weights counts 8) and the
// bytes the files store for them, quantization scales, zero points and indices included.
struct WeightGroup {
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
  bool operator==(const WeightGroup&) const = default;
};

// A LoRA adapter stored beside (or instead of) the weights: adapter_model.safetensors.
struct AdapterWeights {
  std::uint32_t rank = 0;     // r of adapter_config.json
  WeightGroup weights;        // every lora_A/lora_B (and other trained) tensor of the file
  std::vector<std::string> target_modules;
  bool operator==(const AdapterWeights&) const = default;
};

struct CheckpointWeights {
  WeightGroup embedding;  // token embedding and lm_head (output), position embeddings
  WeightGroup linear;     // decoder linear layers: attention, dense MLP, shared experts
  WeightGroup experts;    // routed experts (what MoE offload moves)
  WeightGroup other;      // norms, biases, routers, and everything outside the text decoder
  std::uint64_t outside_text_bytes = 0;  // of `other`: vision/audio towers and projectors
  // Of `embedding`, a GGUF file's token_embd tensor, which llama.cpp keeps in host memory (its
  // get_rows runs on the CPU; "CPU_Mapped model buffer size"), unless an output layer shares it.
  std::uint64_t input_embedding_bytes = 0;
  bool output_tensor = false;  // the GGUF file has its own output.weight
  std::uint64_t outside_text_params = 0;
  // The storage format, when the tensors show one (bf16, gptq, awq, fp8, mxfp4, nf4, int8, a
  // GGUF file type, ...), and how to name it ("GPTQ int4 (g128)", "GGUF Q4_K_M: Q4_K, Q6_K, F32").
  std::optional<WeightFormat> format;
  std::string format_label;
  bool gguf = false;                   // read from a GGUF header (the file is what llama.cpp loads)
  std::string source;                  // "safetensors headers of 4 files", "GGUF header of x.gguf"
  std::vector<std::string> files;      // the files read (repo-relative or local paths)
  std::string hub_repo;                // the Hub repository `files` belong to ("" for local files and URLs)
  std::uint64_t file_bytes = 0;        // sum of the files' sizes (headers and padding included)
  std::vector<std::pair<std::string, std::uint64_t>> bytes_by_dtype;  // "BF16" -> bytes, sorted by dtype
  std::vector<std::string> notes;      // what the reader assumed (e.g. a guessed bit width)

  [[nodiscard]] std::uint64_t total_bytes() const noexcept
  {
    return embedding.bytes + linear.bytes + experts.bytes + other.bytes;
  }
  [[nodiscard]] std::uint64_t total_params() const noexcept
  {
    return embedding.params + linear.params + experts.params + other.params;
  }
  bool operator==(const CheckpointWeights&) const = default;
};

}  // namespace gpurent
