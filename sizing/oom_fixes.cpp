// SPDX-License-Identifier: MIT
#include "sizing/oom_fixes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/rounding.hpp"

namespace gpurent::oom_detail {
namespace {

std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", to_gib(b)); }

class FixList {
public:
  void add(std::string id, std::string description, std::string command = {})
  {
    const bool seen = std::any_of(m_fixes.begin(), m_fixes.end(), [&](const OomFix& f) { return f.id == id; });
    if (!seen) {
      m_fixes.push_back({std::move(id), std::move(description), std::move(command)});
    }
  }
  [[nodiscard]] std::vector<OomFix> take() { return std::move(m_fixes); }

private:
  std::vector<OomFix> m_fixes;
};

bool holds(const OomDiagnosis& d, OomCause c) { return std::find(d.causes.begin(), d.causes.end(), c) != d.causes.end(); }

void free_others(FixList& out, const OomDiagnosis& d)
{
  const std::string held = d.other_processes ? gib(*d.other_processes) : std::string("memory");
  out.add("free-other-processes",
          fmt::format("Other processes hold {} on this GPU: list them and stop the leftovers (an earlier run, a notebook "
                      "kernel, a model server){}",
                      held,
                      d.other_may_be_self ? "; in a container the one listed may be this process itself, seen under another PID"
                                          : ""),
          "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv");
  out.add("doctor", "On a server rented with gpurent, the same check over SSH, with leftover processes flagged",
          "gpurent doctor NAME");
}

void expandable_segments(FixList& out, const OomReport& r)
{
  const std::string held = r.reserved_unallocated ? gib(*r.reserved_unallocated) : std::string("Memory");
  if (r.format == OomFormat::pytorch_1x || r.format == OomFormat::pytorch_legacy) {
    out.add("expandable-segments",
            fmt::format("{} is reserved by PyTorch but unallocated: the memory is there, split into blocks too small for the "
                        "request. This PyTorch predates expandable_segments (2.1+): cap the split size instead, or upgrade",
                        held),
            "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128");
    return;
  }
  const bool old = r.format == OomFormat::pytorch_2_0;
  out.add("expandable-segments",
          fmt::format("{} is reserved by PyTorch but unallocated: the memory is there, split into blocks too small for the "
                      "request. Let the allocator grow its segments (set before Python starts){}",
                      held, old ? "" : "; PyTorch versions that ignore PYTORCH_ALLOC_CONF read the alias PYTORCH_CUDA_ALLOC_CONF"),
          old ? "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" : "PYTORCH_ALLOC_CONF=expandable_segments:True");
}

void larger_card(FixList& out, const OomDiagnosis& d)
{
  if (!d.card_need) {
    return;
  }
  const double min_gib = ceil_up(to_gib(*d.card_need) / 0.95 * 100.0) / 100.0;
  if (!d.card) {
    out.add("larger-card",
            fmt::format("No single card in the catalogue has {:.2f} GiB usable: split the job across GPUs (FSDP/ZeRO-3 for "
                        "training, tensor parallelism for inference)",
                        min_gib),
            "gpurent plan MODEL --gpus 2");
    return;
  }
  const auto& c = *d.card;
  std::string where = c.provider.empty() ? std::string("no built-in offer")
                                         : fmt::format("{} at {}/h", c.provider, c.price_per_hour ? format_usd(*c.price_per_hour) : "?");
  out.add("larger-card",
          fmt::format("If it still does not fit: the smallest card with at least {:.2f} GiB usable ({} / 0.95) is the {} "
                      "({:.2f} GiB usable; {})",
                      min_gib, gib(*d.card_need), c.display.empty() ? c.card : c.display, to_gib(c.usable), where),
          fmt::format("gpurent offers --min-vram {:.0f}", ceil_up(min_gib)));
}

void job_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  out.add("reduce-batch",
          "Halve the per-step batch and double gradient accumulation: same effective batch, about half the activations "
          "(plain PyTorch: divide the loss by N and step every N batches)",
          "--per_device_train_batch_size 4 --gradient_accumulation_steps 2");
  out.add("reduce-context",
          "Shorten the sequences (max_length / max_seq_length): truncate or bucket long inputs; activations grow with "
          "sequence length",
          "--max_seq_length 2048");
  out.add("mixed-precision", "Mixed precision: 16-bit activations take half the memory of 32-bit ones (Trainer: --bf16)",
          "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):");
  out.add("gradient-checkpointing",
          "Activation checkpointing recomputes activations in the backward pass instead of keeping them (Trainer: "
          "--gradient_checkpointing)",
          "model.gradient_checkpointing_enable()");
  out.add("quantize", "Load the weights in 4-bit and train a LoRA adapter (QLoRA) instead of every weight",
          "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")");
  out.add("inference-mode", "For evaluation or inference, keep no autograd state", "with torch.inference_mode():");
  out.add("offload", "Offload what does not fit to CPU memory (slower: it crosses PCIe)",
          "device_map=\"auto\", max_memory={0: \"20GiB\", \"cpu\": \"64GiB\"}");
  (void)r;
  larger_card(out, d);
}

void vllm_context(FixList& out, const OomReport& r)
{
  const std::string k = r.kv_cache_tokens ? std::to_string(*r.kv_cache_tokens) : std::string("K");
  const std::string n = r.max_model_len ? std::to_string(*r.max_model_len) : std::string("N");
  out.add("max-model-len", fmt::format("The KV cache holds {} tokens but the model's context is {}: cap the context", k, n),
          fmt::format("--max-model-len {}", k));
  out.add("gpu-memory-utilization", "Give vLLM a larger share of the card for its KV cache (default 0.9), if nothing else uses it",
          "--gpu-memory-utilization 0.95");
  out.add("kv-cache-fp8", "Store the KV cache in 8-bit: about twice the tokens in the same memory", "--kv-cache-dtype fp8");
  out.add("tensor-parallel", fmt::format("Or a card, or more GPUs, whose KV pool holds {} tokens", n), "--tensor-parallel-size 2");
}

void vllm_no_kv(FixList& out, const OomReport& r)
{
  out.add("gpu-memory-utilization",
          fmt::format("Weights and the activation peak already use all of gpu_memory_utilization x the card{}: raise it",
                      r.gpu_blocks ? fmt::format(" (# GPU blocks: {})", *r.gpu_blocks) : std::string{}),
          "--gpu-memory-utilization 0.95");
  out.add("quantize", "Serve a quantized checkpoint (AWQ, GPTQ or FP8): the weights take half or a quarter",
          "--quantization fp8");
  out.add("max-num-seqs", "Lower the batch vLLM profiles with: a smaller activation peak",
          "--max-num-seqs 16 --max-num-batched-tokens 4096");
  out.add("enforce-eager", "CUDA graphs take extra memory: capture none", "--enforce-eager");
  out.add("tensor-parallel", "Or a larger card, or split the model over more GPUs", "--tensor-parallel-size 2");
}

void llama_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string size = r.requested ? gib(*r.requested) : std::string("the buffer");
  out.add("fewer-gpu-layers",
          fmt::format("Offload fewer layers: {} did not fit on the GPU; keep some layers in system RAM (Ollama: num_gpu)", size),
          "-ngl 20");
  out.add("smaller-quant", "A smaller quantization: a Q4_K_M GGUF instead of Q8_0 or F16", "");
  out.add("smaller-context", "A shorter context: the KV cache grows with it (Ollama: OLLAMA_CONTEXT_LENGTH=8192)", "-c 8192");
  out.add("kv-cache-q8",
          "Quantize the KV cache to 8-bit (the V cache needs flash attention; Ollama: OLLAMA_KV_CACHE_TYPE=q8_0 with "
          "OLLAMA_FLASH_ATTENTION=1)",
          "--cache-type-k q8_0 --cache-type-v q8_0 -fa");
  larger_card(out, d);
}

}  // namespace

std::vector<OomFix> fixes_for(const OomReport& report, const OomDiagnosis& d)
{
  FixList out;
  switch (report.kind) {
  case OomKind::kv_cache_too_small: vllm_context(out, report); return out.take();
  case OomKind::no_kv_cache_memory: vllm_no_kv(out, report); return out.take();
  case OomKind::device_alloc: llama_fixes(out, report, d); return out.take();
  case OomKind::allocator: break;
  }
  if (holds(d, OomCause::allocation_exceeds_card)) {
    out.add("shrink-allocation",
            fmt::format("The single tensor asked for ({}) is larger than the whole card ({}): reduce the batch, resolution or "
                        "sequence length that sizes it, or use a card with at least {}",
                        gib(report.requested.value_or(Bytes{})), gib(report.total.value_or(Bytes{})),
                        d.need ? gib(*d.need) : std::string("that much")),
            "");
  }
  if (holds(d, OomCause::other_process)) {
    free_others(out, d);
  }
  if (holds(d, OomCause::fragmentation)) {
    expandable_segments(out, report);
  }
  if (holds(d, OomCause::job_too_large) || holds(d, OomCause::allocation_exceeds_card)) {
    job_fixes(out, report, d);
  }
  if (d.causes.empty()) {
    // Free memory looked sufficient: a concurrent allocation, the driver or a platform limit.
    free_others(out, d);
    expandable_segments(out, report);
    out.add("reduce-batch", "Halve the per-step batch and double gradient accumulation",
            "--per_device_train_batch_size 4 --gradient_accumulation_steps 2");
  }
  return out.take();
}

}  // namespace gpurent::oom_detail
