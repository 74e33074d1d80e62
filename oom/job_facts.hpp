// SPDX-License-Identifier: MIT
#pragma once
// What a log says about the job that ran out of memory, besides the error itself: the model's
// shape and file (llama.cpp's print_info / llm_load_print_meta lines, which Ollama's runner prints
// too), the context and KV settings (llama_context, llama_kv_cache), and a vLLM/SGLang server's
// configuration (the engine's config line, "non-default args", "Model loading took"). The caller
// rebuilds the job from them and sizes it with plan's estimate (docs/oom.md "The job in the
// log"). Pure; read line by line, bounded memory.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/units.hpp"

namespace gpurent {

// Every field stays empty when the log does not print it (never a default).
struct OomJobFacts {
  // llama.cpp / Ollama.
  std::string arch;        // print_info: arch = llama
  std::string model_name;  // general.name = Meta Llama 3.1 8B Instruct
  std::optional<std::uint64_t> n_layer, n_embd, n_head, n_head_kv, n_embd_head_k, n_ff, n_vocab, n_expert, n_expert_used,
      n_ctx_train, n_swa;
  std::optional<std::uint64_t> model_params;  // "model params = 8.03 B" (as printed: 2 decimals)
  std::string file_type;                      // "Q4_K - Medium", "Q8_0", "IQ4_XS - 4.25 bpw"
  std::optional<Bytes> file_size;             // "file size = 4.58 GiB (4.89 BPW)"
  std::optional<double> file_bpw;
  std::optional<std::uint64_t> n_ctx;      // llama_context: n_ctx (all sequences' cells)
  std::optional<std::uint64_t> n_seq_max;  // llama_context: n_seq_max (llama-server -np)
  std::optional<std::uint64_t> n_ubatch;
  std::string flash_attn;                  // "auto", "enabled", "disabled", "1", "0"; "enabled" after "set to enabled"
  std::string type_k, type_v;              // "f16", "q8_0" (llama_kv_cache type_k = 'f16', or "K (q8_0):")
  std::string device_name;                 // "NVIDIA L4" ("using device CUDA0 (NVIDIA L4) - 22478 MiB free")
  std::uint32_t devices = 0;               // "using device" lines: the GPUs the model is split over
  std::optional<Bytes> gpu_model_buffers;  // sum of the GPU "model buffer size" lines (the weights on the GPUs)
  // vLLM / SGLang.
  std::string model;  // model='meta-llama/Llama-3.1-8B-Instruct', 'model': '...', model_path=...
  std::optional<std::uint64_t> max_model_len;  // max_seq_len=, 'max_model_len':, context_length=
  std::optional<std::uint64_t> tensor_parallel_size;
  std::optional<std::uint64_t> pipeline_parallel_size;
  std::optional<std::uint64_t> max_num_seqs;
  std::optional<double> gpu_memory_utilization;
  std::string quantization;    // quantization=fp8 (None: "")
  std::string kv_cache_dtype;  // kv_cache_dtype=auto / fp8
  std::string dtype;           // dtype=torch.bfloat16
  std::optional<Bytes> weights_loaded;  // "Model loading took 14.99 GiB"
  std::string engine_version;           // "vLLM API server version 0.10.1.1" -> "0.10.1.1"

  // The log says anything about the job (a model, its shape, file or context).
  [[nodiscard]] bool any() const noexcept;
};

namespace oom_detail {

// Reads the facts of the run being logged; a line that starts a new run (llama.cpp's
// "llama_model_loader: loaded meta data", vLLM's "vLLM API server version" or a second engine
// start) forgets the run before it. A report takes a snapshot when it is read, so it keeps the
// facts of the run it was printed in.
class JobFactsReader {
public:
  // One line of the log (colours and log prefixes already removed).
  void on_line(std::string_view text);
  [[nodiscard]] OomJobFacts snapshot() const;

private:
  OomJobFacts m_current;
  std::uint32_t m_pending_devices = 0;  // "using device" lines before the model's metadata
  bool m_config_seen = false;           // an engine's config line was read in this run
};

}  // namespace oom_detail

// A llama.cpp file type as gpurent's --weights names it: "Q4_K - Medium" -> "Q4_K_M", "IQ4_XS -
// 4.25 bpw" -> "IQ4_XS", "MOSTLY Q4_0" -> "Q4_0", "BF16" -> "bf16"; "" when unknown.
[[nodiscard]] std::string gguf_type_name(std::string_view file_type);

}  // namespace gpurent
