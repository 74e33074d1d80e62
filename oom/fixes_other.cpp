// SPDX-License-Identifier: MIT
// Fixes for llama.cpp and Ollama, host memory, JAX/XLA, TensorFlow and NCCL.
#include <fmt/format.h>

#include <algorithm>

#include "oom/fixes.hpp"

namespace gpurent::oom_detail {
namespace {

std::string gib(Bytes b) { return oom_size(b); }

bool ollama(const OomReport& r) { return r.engine == OomEngine::ollama; }

void llama_layers(FixList& out, const OomReport& r, std::string_view what)
{
  const std::uint64_t layers = r.gpu_layers ? std::max<std::uint64_t>(*r.gpu_layers / 2, 1) : 16;
  const std::string now = r.gpu_layers ? fmt::format(" ({} of {} layers are on the GPU now: half of them)", *r.gpu_layers,
                                                     r.model_layers.value_or(*r.gpu_layers))
                                       : std::string(" (start at 16 and raise it until it no longer fits)");
  out.add("fewer-gpu-layers",
          fmt::format("Offload fewer layers: {} did not fit on the GPU; the rest of the layers run from system RAM{}", what, now),
          ollama(r) ? fmt::format("/set parameter num_gpu {}", layers) : fmt::format("-ngl {}", layers));
}

void llama_context(FixList& out, const OomReport& r)
{
  // Without the size in use: llama.cpp defaults to the model's training context (often 128k),
  // recent Ollama to 4096 or more by VRAM.
  const std::uint64_t ctx = r.context_size ? std::max<std::uint64_t>(*r.context_size / 2, 512) : ollama(r) ? 2048 : 8192;
  const std::string now = r.context_size ? fmt::format(" ({} tokens now: half)", *r.context_size) : std::string{};
  out.add("smaller-context", fmt::format("A shorter context: the KV cache and the compute buffer grow with it{}", now),
          ollama(r) ? fmt::format("OLLAMA_CONTEXT_LENGTH={} ollama serve", ctx) : fmt::format("-c {}", ctx));
}

void llama_kv_type(FixList& out, const OomReport& r)
{
  if (ollama(r)) {
    out.add("kv-cache-q8", "Quantize the KV cache to 8-bit: half its size (needs flash attention)",
            "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve");
  } else {
    out.add("kv-cache-q8",
            "Quantize the KV cache to 8-bit: half its size (the V cache needs flash attention, -fa; automatic in recent builds)",
            "--cache-type-k q8_0 --cache-type-v q8_0");
  }
}

void llama_ubatch(FixList& out, const OomReport& r)
{
  out.add("smaller-ubatch", "A smaller physical batch: the compute buffer scales with it (512 by default); flash attention "
                            "shrinks it further",
          ollama(r) ? std::string("/set parameter num_batch 256") : std::string("-ub 256"));
}

void llama_quant(FixList& out, const OomReport& r)
{
  const std::string type = gguf_type_name(r.job.file_type);
  if (type.empty()) {
    out.add("smaller-quant", "A smaller quantization of the same model: a Q4_K_M GGUF instead of Q8_0 or F16 halves the weights");
    return;
  }
  // The log names the file's type: never propose that one, nor a larger one.
  const std::string bpw = r.job.file_bpw ? fmt::format(", {:.2f} bits per weight", *r.job.file_bpw) : std::string{};
  out.add("smaller-quant", fmt::format("A smaller quantization of the same model than this file's {}{}: a GGUF type of fewer bits "
                                       "per weight (the weights shrink in proportion)",
                                       type, bpw));
}

}  // namespace

void llama_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (r.memory == OomMemory::host) {
    host_memory_fixes(out, r, d);
    return;
  }
  const std::string size = r.requested ? gib(*r.requested) : std::string("the buffer");
  switch (r.stage) {
  case OomStage::kv_cache:  // context and KV type before layers
    llama_context(out, r);
    llama_kv_type(out, r);
    llama_layers(out, r, "the KV cache of " + size);
    llama_quant(out, r);
    break;
  case OomStage::compute:
    llama_ubatch(out, r);
    llama_context(out, r);
    llama_kv_type(out, r);
    llama_layers(out, r, "the compute buffer of " + size);
    break;
  case OomStage::weights:
  case OomStage::unknown:
    if (r.memory == OomMemory::unified) {
      llama_context(out, r);
      llama_quant(out, r);
      llama_kv_type(out, r);
      break;
    }
    llama_layers(out, r, size);
    llama_quant(out, r);
    llama_context(out, r);
    llama_kv_type(out, r);
    break;
  }
  larger_card(out, d);
}

void host_memory_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string need = !r.requested                  ? std::string("more than was free")
                           : r.kind == OomKind::host_memory && (r.engine == OomEngine::ollama || r.engine == OomEngine::unsloth)
                               ? "needs " + gib(*r.requested)
                                                                                      : "could not get " + gib(*r.requested);
  const std::string have = r.free ? fmt::format(", {} available", gib(*r.free)) : std::string{};
  out.add("free-system-memory",
          fmt::format("This is system RAM, not GPU memory: the job {}{}. Close other programs or add swap, and check what is free",
                      need, have),
          "free -h");
  if (r.format == OomFormat::pytorch_cpu) {
    out.add("low-cpu-mem-usage", "Load checkpoints without a second full copy in RAM (transformers; safetensors files are mapped, "
                                 "not read)",
            "low_cpu_mem_usage=True");
    out.add("load-16-bit", "Load the weights in 16-bit: half the RAM of float32", "torch_dtype=torch.bfloat16");
    out.add("reduce-batch", "Halve the batch or the input size that the failed allocation grows with");
    out.add("swap", "On Windows, a larger page file (virtual memory) lets the allocation through, slowly");
  } else if (r.engine == OomEngine::ollama || r.engine == OomEngine::llama_cpp) {
    llama_quant(out, r);
    llama_context(out, r);
    out.add("more-gpu-layers", "With a GPU, the part that runs from RAM is what did not fit the GPU: a card with more memory "
                               "takes more layers off RAM");
  } else if (r.kind == OomKind::tf_tensor) {
    out.add("reduce-batch", "Halve the batch: the tensor that failed grows with it");
  } else if (r.engine == OomEngine::unsloth) {
    // Unsloth Studio's own words: "Use a smaller or more quantized GGUF, free memory, or set
    // UNSLOTH_ALLOW_HOST_OFFLOAD=1 to load it anyway."
    out.add("smaller-gguf", "A smaller or more quantized GGUF of the model: the part that does not fit the GPU, and would run "
                            "from system RAM, shrinks or goes");
    out.add("host-offload", "Load it anyway, the rest of the weights in system RAM: they are memory-mapped and paged in and "
                            "out, slowly, and the machine may stop responding (Unsloth Studio's own warning)",
            "UNSLOTH_ALLOW_HOST_OFFLOAD=1");
  }
  (void)d;
}

void xla_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (r.kind == OomKind::xla_compile) {
    const std::string used = r.xla_total ? gib(*r.xla_total) : std::string("more");
    const std::string cap = r.total ? gib(*r.total) : std::string("the chip's");
    if (r.memory_space != "hbm" && !r.memory_space.empty()) {
      out.add("smaller-blocks",
              fmt::format("The compiler ran out of {} (a small on-chip memory, {} of {}): shorter sequences or smaller "
                          "blocks/tiles per kernel",
                          r.memory_space, used, cap));
      return;
    }
    out.add("reduce-batch", fmt::format("The compiled program needs {} of HBM and the chip has {}: halve the batch per chip", used, cap));
    out.add("rematerialize", "Recompute activations in the backward pass instead of keeping them", "@jax.checkpoint");
    out.add("shard", "Shard parameters and optimizer state over more chips (a larger slice), e.g. with FSDP-style sharding");
    out.add("bf16", "Keep parameters and activations in bfloat16", "dtype=jnp.bfloat16");
    larger_card(out, d);
    return;
  }
  const std::string program = r.xla_total ? fmt::format(" (the program needs {} in all)", gib(*r.xla_total)) : std::string{};
  out.add("mem-fraction",
          fmt::format("JAX preallocates 75% of the GPU by default; asking {} more failed{}: let it use 95%",
                      r.requested ? gib(*r.requested) : std::string("for"), program),
          "XLA_PYTHON_CLIENT_MEM_FRACTION=.95");
  out.add("reduce-batch", "Halve the batch: the buffers of the step shrink with it");
  out.add("rematerialize", "Recompute activations in the backward pass instead of keeping them", "@jax.checkpoint");
  out.add("no-prealloc", "If another process or framework shares the GPU, allocate on demand instead of preallocating",
          "XLA_PYTHON_CLIENT_PREALLOCATE=false");
  larger_card(out, d);
}

void tensorflow_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (r.memory == OomMemory::host) {
    host_memory_fixes(out, r, d);
    return;
  }
  const std::string tensor = r.requested ? fmt::format("The tensor that failed is {}", gib(*r.requested)) : std::string("The tensor");
  if (!r.tensor_shape.empty() && r.tensor_shape.front() > 1) {
    out.add("reduce-batch",
            fmt::format("{}; its first dimension ({}) is usually the batch: halve it", tensor, r.tensor_shape.front()),
            fmt::format("batch_size={}", r.tensor_shape.front() / 2));
  } else {
    out.add("reduce-batch", tensor + ": halve the batch or the input size that makes it");
  }
  out.add("mixed-precision", "Mixed precision: 16-bit activations take half the memory",
          "tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")");
  out.add("memory-growth",
          "TensorFlow takes the whole GPU at start; if another process needs part of it, let TensorFlow grow instead",
          "for gpu in tf.config.list_physical_devices(\"GPU\"): tf.config.experimental.set_memory_growth(gpu, True)");
  out.add("async-allocator", "The CUDA async allocator fragments less than TensorFlow's BFC allocator",
          "TF_GPU_ALLOCATOR=cuda_malloc_async");
}

void nccl_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string size = r.requested ? fmt::format(" (it asked for {})", gib(*r.requested)) : std::string{};
  if (r.context == OomContext::vllm) {
    lower_share(out, "gpu-memory-utilization", r.gpu_memory_utilization, 0.85,
                "NCCL allocates its buffers outside vLLM's share: leave it room");
  } else if (r.context == OomContext::sglang) {
    lower_share(out, "mem-fraction-static", r.mem_fraction_static, 0.8,
                "NCCL allocates its buffers outside SGLang's static pool: leave it room");
  }
  out.add("free-other-processes",
          fmt::format("NCCL could not allocate its communication buffers{}: the card was already full. See what holds it", size),
          process_query(r));
  out.add("nvls-off",
          "On NVSwitch systems (H100/H200 HGX) NVLink SHARP buffers take a lot of memory per GPU: turn them off",
          "NCCL_NVLS_ENABLE=0");
  out.add("smaller-buffers", "Halve NCCL's per-channel buffers (4 MiB by default)", "NCCL_BUFFSIZE=2097152");
  out.add("init-early",
          "Create the process group (and run a first collective) before the model takes the card, so NCCL's buffers are "
          "allocated while memory is free");
  (void)d;
}

}  // namespace gpurent::oom_detail
