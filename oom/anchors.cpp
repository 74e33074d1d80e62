// SPDX-License-Identifier: MIT
// The anchors of the OOM scanner (what starts a report, context, hints) and their one-pass finder.
#include "oom/grammar.hpp"

namespace gpurent::oom_detail {
namespace {

// ---- Anchors -------------------------------------------------------------------------------

struct AnchorText {
  std::string_view text;
  Anchor anchor;
};

constexpr std::array k_anchor_texts{
    AnchorText{"CUDAoutofmemory", Anchor::cuda_oom},
    AnchorText{"HIPoutofmemory", Anchor::hip_oom},
    AnchorText{"Triedtoallocate", Anchor::tried},
    AnchorText{"MPSbackendoutofmemory", Anchor::mps},
    AnchorText{"Allocationondevice", Anchor::cuda_async},
    AnchorText{"DefaultCPUAllocator:", Anchor::cpu_allocator},
    AnchorText{"CUDAerror:outofmemory", Anchor::cuda_runtime},
    AnchorText{"cudaErrorMemoryAllocation", Anchor::cuda_runtime},
    AnchorText{"cudaruntimeerror(2):outofmemory", Anchor::cuda_runtime},
    // A CUDA check macro's "<call>: out of memory (<file>:<line>)", as TensorRT-LLM's C++ runtime
    // prints it: "CUDA runtime error in ::cudaMallocAsync(ptr, n, mCudaStream->get()): out of memory
    // (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)".
    AnchorText{"):outofmemory(", Anchor::cuda_runtime},
    AnchorText{"HIPerror:outofmemory", Anchor::hip_runtime},
    AnchorText{"hipErrorOutOfMemory", Anchor::hip_runtime},
    AnchorText{"CUDA_ERROR_OUT_OF_MEMORY", Anchor::cuda_driver},
    AnchorText{"maxseqlen(", Anchor::vllm_len},
    AnchorText{"KVcacheisneeded,whichislargerthan", Anchor::vllm_kv_needed},
    AnchorText{"Noavailablememoryforthecacheblocks", Anchor::vllm_no_kv},
    AnchorText{"Freememoryondevice", Anchor::vllm_free},
    AnchorText{"freememoryondevice", Anchor::vllm_free},
    AnchorText{"Notenoughmemory.Pleasetrytoincrease--mem-fraction-static", Anchor::sglang_increase},
    AnchorText{"LoadedweightsleavenoGPUmemoryfortheKVcache", Anchor::sglang_weights},
    AnchorText{"Notenoughmemorytohandle", Anchor::tgi},
    AnchorText{"cudaMallocfailed:outofmemory", Anchor::llama_malloc},
    AnchorText{"hipMallocfailed:outofmemory", Anchor::llama_malloc},
    AnchorText{"failedtoallocate", Anchor::llama_failed},
    AnchorText{"unabletoallocate", Anchor::llama_unable},
    AnchorText{"Devicememoryallocationofsize", Anchor::llama_vulkan},
    AnchorText{"modelrequiresmoresystemmemory(", Anchor::ollama_requires},
    AnchorText{"modelrequesttoolargeforsystem", Anchor::ollama_too_large},
    AnchorText{"Outofmemorywhiletryingtoallocate", Anchor::xla_oom},
    AnchorText{"Failedtoallocate", Anchor::xla_request},
    AnchorText{"Ranoutofmemoryinmemoryspace", Anchor::xla_tpu},
    AnchorText{"OOMwhenallocatingtensor", Anchor::tf_oom},
    AnchorText{"oomwhenallocatingtensor", Anchor::tf_oom},
    AnchorText{"Cudafailure", Anchor::nccl_cuda},
    AnchorText{"HIPfailure", Anchor::nccl_hip},
    AnchorText{"Failedtoloadmodel:About", Anchor::unsloth_host},
    AnchorText{"ExecutorcreationfailedduetoinsufficientGPUmemory", Anchor::trtllm_executor},
    AnchorText{"Can'tallocatenewblocks", Anchor::trtllm_no_blocks},
    AnchorText{"GPUblocks:", Anchor::vllm_blocks},
    AnchorText{"Loadweightbegin.availmem=", Anchor::sglang_load_begin},
    AnchorText{"availmem=", Anchor::sglang_load_end},
    AnchorText{"layerstoGPU", Anchor::llama_layers},
    AnchorText{"n_ctx=", Anchor::llama_ctx},
    AnchorText{"KvSize:", Anchor::ollama_kvsize},
    AnchorText{"gpu_memory_utilization=", Anchor::vllm_util},
    AnchorText{"mem_fraction_static=", Anchor::sglang_fraction},
    AnchorText{"max_batch_prefill_tokens:", Anchor::tgi_prefill},
    AnchorText{"FailedtoCUDAcalloc", Anchor::nccl_size},
    AnchorText{"FailedtoCUDAmalloc", Anchor::nccl_size},
    AnchorText{"CUBLAS_STATUS_ALLOC_FAILED", Anchor::cublas_alloc},
    AnchorText{"vllm/", Anchor::hint_vllm},
    AnchorText{"vllm.", Anchor::hint_vllm},
    AnchorText{"VllmWorker", Anchor::hint_vllm},
    AnchorText{"EngineCore", Anchor::hint_vllm},
    AnchorText{"vLLM", Anchor::hint_vllm},
    AnchorText{"VLLM_", Anchor::hint_vllm},
    AnchorText{"sglang", Anchor::hint_sglang},
    AnchorText{"SGLang", Anchor::hint_sglang},
    AnchorText{"Schedulerhitanexception", Anchor::hint_sglang},
    AnchorText{"text_generation", Anchor::hint_tgi},
    AnchorText{"text-generation-", Anchor::hint_tgi},
    AnchorText{"transformers/trainer", Anchor::hint_trainer},
    AnchorText{"trainer.train(", Anchor::hint_trainer},
    AnchorText{"accelerate/", Anchor::hint_trainer},
    AnchorText{"deepspeed", Anchor::hint_trainer},
    AnchorText{"/trl/", Anchor::hint_trainer},
    AnchorText{"/peft/", Anchor::hint_trainer},
    AnchorText{"lightning/", Anchor::hint_trainer},
    AnchorText{"diffusers", Anchor::hint_diffusion},
    AnchorText{"ComfyUI", Anchor::hint_diffusion},
    AnchorText{"/comfy/", Anchor::hint_diffusion},
    AnchorText{"stable-diffusion", Anchor::hint_diffusion},
    AnchorText{"stable_diffusion", Anchor::hint_diffusion},
    AnchorText{"ollama", Anchor::hint_ollama},
    AnchorText{"Ollama", Anchor::hint_ollama},
    AnchorText{"OLLAMA", Anchor::hint_ollama},
    AnchorText{"llamarunnerprocess", Anchor::hint_ollama},
    AnchorText{"llama_model_load", Anchor::hint_llama},
    AnchorText{"llama_new_context", Anchor::hint_llama},
    AnchorText{"ggml_backend", Anchor::hint_llama},
    AnchorText{"ggml_gallocr", Anchor::hint_llama},
    AnchorText{"llama-server", Anchor::hint_llama},
    AnchorText{"llm_load_tensors", Anchor::hint_llama},
    AnchorText{"jaxlib", Anchor::hint_jax},
    AnchorText{"jax/", Anchor::hint_jax},
    AnchorText{"jax.", Anchor::hint_jax},
    AnchorText{"flax", Anchor::hint_jax},
    AnchorText{"tensorflow/python", Anchor::hint_tensorflow},
    AnchorText{"tensorflow.python", Anchor::hint_tensorflow},
    AnchorText{"keras", Anchor::hint_tensorflow},
    // Unsloth runs inside transformers and TRL: its banner, its compiled trainers and its packages'
    // paths (never a bare "unsloth/", which names its GGUF and 4-bit model repositories).
    AnchorText{"Unsloth-2xfasterfreefinetuning", Anchor::hint_unsloth},
    AnchorText{"unsloth_compiled_cache", Anchor::hint_unsloth},
    AnchorText{"unsloth_zoo", Anchor::hint_unsloth},
    AnchorText{"packages/unsloth/", Anchor::hint_unsloth},
    AnchorText{"tensorrt_llm/", Anchor::hint_trtllm},
    AnchorText{"[TRT-LLM]", Anchor::hint_trtllm},
    AnchorText{"[TensorRT-LLM]", Anchor::hint_trtllm},
    AnchorText{"trtllm-serve", Anchor::hint_trtllm},
};
constexpr std::size_t k_anchor_count = k_anchor_texts.size();

constexpr std::uint16_t key_of(std::string_view s) noexcept
{
  return static_cast<std::uint16_t>(static_cast<unsigned char>(s[0]) << 8 | static_cast<unsigned char>(s[1]));
}

// The anchors sorted by their first two bytes, and for every two-byte key the range of them.
struct AnchorIndex {
  std::array<std::uint8_t, k_anchor_count> order{};
  std::array<std::uint64_t, 1024> bits{};  // 65536 bits: some anchor starts with this key
  std::size_t longest = 0;
  bool valid = true;  // no anchor is a prefix of another, none shorter than two bytes
};

constexpr AnchorIndex make_index()
{
  AnchorIndex index;
  for (std::size_t i = 0; i < k_anchor_count; ++i) {
    index.order[i] = static_cast<std::uint8_t>(i);
  }
  for (std::size_t i = 1; i < k_anchor_count; ++i) {  // insertion sort by key
    for (std::size_t j = i; j > 0 && key_of(k_anchor_texts[index.order[j]].text) < key_of(k_anchor_texts[index.order[j - 1]].text); --j) {
      const auto t = index.order[j];
      index.order[j] = index.order[j - 1];
      index.order[j - 1] = t;
    }
  }
  for (const auto& a : k_anchor_texts) {
    const std::uint16_t key = key_of(a.text);
    index.bits[key >> 6] |= 1ULL << (key & 63);
    index.longest = a.text.size() > index.longest ? a.text.size() : index.longest;
    for (const auto& b : k_anchor_texts) {
      if (&a != &b && b.text.starts_with(a.text)) {
        index.valid = false;
      }
    }
    if (a.text.size() < 2) {
      index.valid = false;
    }
  }
  return index;
}

constexpr AnchorIndex k_index = make_index();
static_assert(k_index.valid, "an anchor is a prefix of another, or too short");

}  // namespace

AnchorHit find_anchor(std::string_view text, std::size_t from) noexcept
{
  const char* data = text.data();
  const std::size_t size = text.size();
  for (std::size_t i = from; i + 1 < size; ++i) {
    const std::uint16_t key = static_cast<std::uint16_t>(static_cast<unsigned char>(data[i]) << 8 | static_cast<unsigned char>(data[i + 1]));
    if ((k_index.bits[key >> 6] >> (key & 63) & 1ULL) == 0) {
      continue;
    }
    const std::string_view rest = text.substr(i);
    for (const auto idx : k_index.order) {
      const auto& a = k_anchor_texts[idx];
      const std::uint16_t k = key_of(a.text);
      if (k < key) {
        continue;
      }
      if (k > key) {
        break;
      }
      if (rest.starts_with(a.text)) {
        return AnchorHit{i, a.anchor, a.text.size()};
      }
    }
  }
  return AnchorHit{};
}

std::size_t longest_anchor() noexcept { return k_index.longest; }

unsigned prefix_hints(std::string_view prefix) noexcept
{
  const auto bit = [](Anchor a) { return 1U << hint_index(a); };
  unsigned out = 0;
  const auto has = [&](std::string_view word) { return prefix.find(word) != std::string_view::npos; };
  if (has("vllm") || has("EngineCore") || has("VllmWorker")) {
    out |= bit(Anchor::hint_vllm);
  }
  if (has("sglang")) {
    out |= bit(Anchor::hint_sglang);
  }
  if (has("TRT-LLM") || has("TensorRT-LLM")) {
    out |= bit(Anchor::hint_trtllm);
  }
  if (has("ollama")) {
    out |= bit(Anchor::hint_ollama);
  }
  if (has("text-generation") || has("tgi")) {
    out |= bit(Anchor::hint_tgi);
  }
  if (has("comfyui") || has("ComfyUI")) {
    out |= bit(Anchor::hint_diffusion);
  }
  return out;
}

}  // namespace gpurent::oom_detail
