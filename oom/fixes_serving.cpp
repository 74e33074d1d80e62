// SPDX-License-Identifier: MIT
// Fixes for the serving engines: vLLM, SGLang and TGI, for their own messages and for a PyTorch
// error raised inside them (their flags, not a trainer's).
#include <fmt/format.h>

#include <algorithm>

#include "common/rounding.hpp"
#include "oom/fixes.hpp"

namespace gpurent::oom_detail {
namespace {

std::string gib(Bytes b) { return oom_size(b); }

// A share of the card that vLLM may claim: the value in use plus 0.05, at most 0.95.
double raised_utilization(const OomReport& r)
{
  return r.gpu_memory_utilization ? std::min(0.95, floor2(*r.gpu_memory_utilization + 0.05)) : 0.95;
}

void vllm_bigger(FixList& out, std::string_view why)
{
  out.add("tensor-parallel", fmt::format("{}: split the model over two GPUs, each then holds half the weights", why),
          "--tensor-parallel-size 2");
}

void vllm_context(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string n = r.max_model_len ? fmt::format("{}", *r.max_model_len) : std::string("the model's");
  if (d.fitting_max_model_len) {
    const std::string how = r.kv_cache_tokens ? std::string("vLLM's own estimate")
                                              : fmt::format("{} tokens x {} available / {} needed", n, gib(*r.kv_cache_available),
                                                            gib(*r.kv_cache_needed));
    out.add("max-model-len",
            fmt::format("The KV cache holds {} tokens ({}) but the model's context is {}: cap the context at that or less",
                        *d.fitting_max_model_len, how, n),
            fmt::format("--max-model-len {}", *d.fitting_max_model_len));
  } else if (r.max_model_len) {
    out.add("max-model-len", fmt::format("The KV cache cannot hold the model's context of {} tokens: cap the context", n),
            fmt::format("--max-model-len {}", *r.max_model_len / 2));
  }
  const double util = raised_utilization(r);
  out.add("gpu-memory-utilization",
          fmt::format("Give vLLM a larger share of the card for its KV cache ({}; the default is 0.9), if nothing else uses it",
                      r.gpu_memory_utilization ? fmt::format("{} now", fraction_text(*r.gpu_memory_utilization)) : "raise it"),
          fmt::format("--gpu-memory-utilization {}", fraction_text(util)));
  out.add("kv-cache-fp8", "Store the KV cache in 8-bit: about twice the tokens in the same memory", "--kv-cache-dtype fp8");
  vllm_bigger(out, fmt::format("Or a card, or more GPUs, whose KV pool holds {} tokens", n));
}

void vllm_no_kv(FixList& out, const OomReport& r)
{
  out.add("gpu-memory-utilization",
          fmt::format("Weights and the activation peak already use all of gpu_memory_utilization x the card{}: raise it",
                      r.gpu_blocks ? fmt::format(" (# GPU blocks: {})", *r.gpu_blocks) : std::string{}),
          fmt::format("--gpu-memory-utilization {}", fraction_text(raised_utilization(r))));
  out.add("quantize", "Serve a quantized checkpoint (AWQ, GPTQ or FP8): the weights take half or a quarter", "--quantization fp8");
  out.add("max-num-seqs", "Lower the batch vLLM profiles with: a smaller activation peak",
          "--max-num-seqs 16 --max-num-batched-tokens 4096");
  out.add("enforce-eager", "CUDA graphs take extra memory: capture none", "--enforce-eager");
  vllm_bigger(out, "Or a larger card");
}

void vllm_startup(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const Bytes total = r.total.value_or(Bytes{});
  const Bytes free = r.free.value_or(Bytes{});
  const double share = total.n > 0 ? floor2(static_cast<double>(free.n) / static_cast<double>(total.n)) - 0.01 : 0.0;
  const bool crowded = d.other_processes && d.other_processes->n * 2 >= total.n;
  if (crowded || share < 0.1) {
    check_other_processes(out, r, d);
  }
  if (share >= 0.1) {
    out.add("gpu-memory-utilization",
            fmt::format("vLLM claims {} of the card ({}) at start but only {} of {} was free: ask for at most {} (free / total, "
                        "less a margin), if the weights and a KV cache still fit in {}",
                        r.gpu_memory_utilization ? fraction_text(*r.gpu_memory_utilization) : std::string("its share"),
                        gib(r.requested.value_or(Bytes{})), gib(free), gib(total), fraction_text(share),
                        gib(Bytes{static_cast<std::uint64_t>(share * static_cast<double>(total.n))})),
            fmt::format("--gpu-memory-utilization {}", fraction_text(share)));
  }
  check_other_processes(out, r, d);
}

// A PyTorch error inside vLLM: what runs outside the pre-allocated share ran out, or the weights.
void vllm_runtime(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const bool weights = r.total && r.allocated && r.allocated->n * 10 >= r.total->n * 9;
  if (weights) {
    vllm_bigger(out, fmt::format("This process already holds {} of {}: the weights alone nearly fill the card", gib(*r.allocated),
                                 gib(*r.total)));
    out.add("quantize", "Serve a quantized checkpoint (AWQ, GPTQ or FP8): the weights take half or a quarter", "--quantization fp8");
  }
  if (r.max_num_seqs) {
    out.add("max-num-seqs",
            fmt::format("The sampler warm-up runs {} sequences at once (max_num_seqs) and ran out: halve them", *r.max_num_seqs),
            fmt::format("--max-num-seqs {}", std::max<std::uint64_t>(*r.max_num_seqs / 2, 1)));
  }
  lower_share(out, "gpu-memory-utilization", r.gpu_memory_utilization, 0.85,
              "vLLM pre-allocates gpu_memory_utilization x the card for weights and KV cache; activations, CUDA graphs and the "
              "sampler use what is left: lower it to leave them more");
  out.add("max-num-seqs", "Fewer sequences and tokens per step: a smaller activation peak",
          "--max-num-seqs 128 --max-num-batched-tokens 4096");
  out.add("enforce-eager", "CUDA graphs take extra memory: capture none", "--enforce-eager");
  if (!weights) {
    out.add("quantize", "Serve a quantized checkpoint (AWQ, GPTQ or FP8): the weights take half or a quarter",
            "--quantization fp8");
    vllm_bigger(out, "Or more GPUs");
  }
  (void)d;
}

std::optional<double> sglang_minimum(const OomReport& r)
{
  if (r.min_mem_fraction_static) {
    return r.min_mem_fraction_static;
  }
  if (r.avail_before_weights && r.avail_after_weights && r.avail_before_weights->n > 0) {
    return 1.0 - static_cast<double>(r.avail_after_weights->n) / static_cast<double>(r.avail_before_weights->n);
  }
  if (r.weights && r.avail_after_weights && r.weights->n + r.avail_after_weights->n > 0) {
    // Free before loading is about free after loading + the weights.
    return static_cast<double>(r.weights->n) / static_cast<double>(r.weights->n + r.avail_after_weights->n);
  }
  return std::nullopt;
}

void sglang_bigger(FixList& out, std::string_view why)
{
  out.add("tensor-parallel", fmt::format("{}: split the model over two GPUs, each then holds half the weights", why), "--tp 2");
  out.add("quantize", "Serve a quantized checkpoint (FP8, AWQ, GPTQ): the weights take half or a quarter", "--quantization fp8");
}

// A PyTorch error inside SGLang: the static pool (weights + KV) leaves too little for activations.
void sglang_runtime(FixList& out, const OomReport& r)
{
  lower_share(out, "mem-fraction-static", r.mem_fraction_static, 0.8,
              "SGLang keeps mem_fraction_static x the card for weights and KV cache; activations and CUDA graphs use the rest: "
              "lower it to leave them more");
  out.add("chunked-prefill", "Prefill long prompts in smaller chunks: a smaller activation peak", "--chunked-prefill-size 2048");
  out.add("cuda-graph-bs", "Capture CUDA graphs for smaller batches only: less graph memory", "--cuda-graph-max-bs 16");
  sglang_bigger(out, "Or more GPUs");
}

// trtllm-serve's defaults (tensorrt_llm/commands/serve.py: --max_batch_size 2048, --max_num_tokens
// 8192, --kv_cache_free_gpu_memory_fraction 0.9; tests/data/engine_flags/trtllm.json). The fixes
// halve --max_num_tokens (the executor's profiling run sizes the activations at it) and take an
// eighth of --max_batch_size (CUDA graphs and the sampler's buffers grow with it; 2048 requests at
// once is more than one GPU's KV cache serves).
constexpr std::uint64_t k_trtllm_max_num_tokens = 8192;
constexpr std::uint64_t k_trtllm_max_batch_size = 2048;

void trtllm_bigger(FixList& out, std::string_view why)
{
  out.add("tensor-parallel", fmt::format("{}: split the model over two GPUs, each then holds half the weights", why),
          "--tp_size 2");
  out.add("quantize",
          "Serve an FP8 checkpoint (ModelOpt's, e.g. nvidia/<model>-FP8; Ada, Hopper and Blackwell) or NVFP4 on Blackwell: "
          "the weights take half or a quarter");
}

void trtllm_activations(FixList& out)
{
  out.add("max-num-tokens",
          fmt::format("Fewer tokens per step: TensorRT-LLM measures its activations on a batch of --max_num_tokens "
                      "(default {}) before it sizes the KV cache",
                      k_trtllm_max_num_tokens),
          fmt::format("--max_num_tokens {}", k_trtllm_max_num_tokens / 2));
  out.add("max-batch-size",
          fmt::format("Fewer requests at once: CUDA graphs and the sampler's buffers grow with --max_batch_size (default {})",
                      k_trtllm_max_batch_size),
          fmt::format("--max_batch_size {}", k_trtllm_max_batch_size / 8));
}

// A PyTorch or CUDA error inside trtllm-serve after the executor started: the KV cache took
// kv_cache_free_gpu_memory_fraction of what was free, and the run needed more than the rest.
void trtllm_runtime(FixList& out)
{
  out.add("kv-cache-free-gpu-memory-fraction",
          "TensorRT-LLM gives the KV cache 0.9 of the memory free after the weights and its profiling run; a later allocation "
          "(a longer batch, a warm-up it did not profile) then finds too little: leave it more (NVIDIA's Dynamo recipes use "
          "0.85 for the same reason)",
          "--kv_cache_free_gpu_memory_fraction 0.8");
  trtllm_activations(out);
  trtllm_bigger(out, "Or more GPUs");
}

void tgi_runtime(FixList& out, const OomReport& r)
{
  const std::uint64_t prefill = r.prefill_tokens ? std::max<std::uint64_t>(*r.prefill_tokens / 2, 1) : 2048;
  out.add("max-batch-prefill-tokens",
          fmt::format("Fewer tokens per prefill batch{}: a smaller activation peak; keep --max-input-tokens at or below it",
                      r.prefill_tokens ? fmt::format(" (half of {})", *r.prefill_tokens) : std::string{}),
          fmt::format("--max-batch-prefill-tokens {}", prefill));
  out.add("quantize", "Quantize the weights at load (EETQ 8-bit needs no calibration; AWQ/GPTQ checkpoints are smaller still)",
          "--quantize eetq");
  out.add("num-shard", "Or shard the model over two GPUs", "--num-shard 2");
}

void diffusion_runtime(FixList& out)
{
  out.add("cpu-offload",
          "Keep only the active part of the pipeline on the GPU (diffusers; ComfyUI: --lowvram, and --novram as a last resort)",
          "pipe.enable_model_cpu_offload()");
  out.add("vae-tiling", "Decode the image in tiles: the VAE's peak at high resolution drops to a fraction",
          "pipe.enable_vae_tiling()");
  out.add("reduce-batch", "Fewer images per batch, or a lower resolution: activations grow with both");
  out.add("half-precision", "Load the pipeline in 16-bit", "torch_dtype=torch.float16");
}

// Unsloth's own knobs (FastLanguageModel, get_peft_model, TRL's SFTConfig), most memory first.
void unsloth_runtime(FixList& out)
{
  out.add("reduce-batch",
          "Halve the per-step batch and double gradient accumulation (SFTConfig): the same effective batch, about half "
          "the activations (Unsloth's docs: \"set it to 1, 2, or 3 to use less VRAM\")",
          "per_device_train_batch_size=1, gradient_accumulation_steps=8");
  out.add("reduce-context",
          "Shorten the sequences: FastLanguageModel.from_pretrained's max_seq_length and SFTConfig's max_length; the "
          "activations grow with the tokens of a step",
          "max_seq_length=2048");
  out.add("unsloth-checkpointing",
          "Unsloth's gradient checkpointing (FastLanguageModel.get_peft_model) keeps each layer's input in CPU RAM and "
          "recomputes the layer in backward",
          "use_gradient_checkpointing=\"unsloth\"");
  out.add("quantize", "Load the base in 4-bit (QLoRA, FastLanguageModel.from_pretrained): a quarter of the 16-bit weights",
          "load_in_4bit=True");
  out.add("8bit-optimizer", "8-bit AdamW states for the adapters (SFTConfig)", "optim=\"adamw_8bit\"");
}

}  // namespace

void lower_share(FixList& out, std::string_view id, std::optional<double> now, double fallback, std::string_view why)
{
  const double lower = now ? std::max(0.5, floor2(*now - 0.05)) : fallback;
  out.add(std::string(id),
          fmt::format("{} ({})", why, now ? fraction_text(*now) + " in the log, 0.05 less" : std::string("not in the log")),
          fmt::format("--{} {}", id, fraction_text(lower)));
}

bool engine_job_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  switch (r.context) {
  case OomContext::vllm: vllm_runtime(out, r, d); return true;
  case OomContext::sglang: sglang_runtime(out, r); return true;
  case OomContext::tgi: tgi_runtime(out, r); return true;
  case OomContext::diffusion: diffusion_runtime(out); return true;
  case OomContext::unsloth: unsloth_runtime(out); return true;
  case OomContext::tensorrt_llm: trtllm_runtime(out); return true;
  case OomContext::trainer:
  case OomContext::none: return false;
  }
  return false;
}

void vllm_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  switch (r.kind) {
  case OomKind::kv_cache_too_small: vllm_context(out, r, d); return;
  case OomKind::no_kv_cache_memory: vllm_no_kv(out, r); return;
  default: vllm_startup(out, r, d); return;
  }
}

void sglang_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const auto minimum = sglang_minimum(r);
  const std::string weights = r.weights ? fmt::format("; the weights take {}", gib(*r.weights)) : std::string{};
  if (minimum && *minimum >= 0.93) {
    sglang_bigger(out, fmt::format("The weights leave no room for a KV cache below mem_fraction_static {}{}",
                                   fraction_text(ceil2(*minimum)), weights));  // nearly the whole card
  }
  double target = 0.9;
  std::string why;
  if (minimum) {
    target = std::min(0.95, ceil2(*minimum) + 0.02);
    why = fmt::format("the weights need at least {:.4f} (1 - free after loading / free before){}; {} leaves about {:.0f}% of "
                      "the card for the KV cache",
                      *minimum, weights, fraction_text(target), (target - *minimum) * 100.0);
  } else if (r.mem_fraction_static) {
    target = std::min(0.95, floor2(*r.mem_fraction_static + 0.05));
    why = fmt::format("it is {} now{}", fraction_text(*r.mem_fraction_static), weights);
  } else {
    why = "SGLang picks about 0.8-0.88 by itself on most cards" + weights;
  }
  out.add("mem-fraction-static",
          fmt::format("The static pool (weights + KV cache) is mem_fraction_static x the card, and the weights fill it: raise it "
                      "({})",
                      why),
          fmt::format("--mem-fraction-static {}", fraction_text(target)));
  sglang_bigger(out, "Or more GPUs");
  out.add("context-length", "A shorter maximum context needs a smaller KV pool to serve one request", "--context-length 8192");
  (void)d;
}

void tgi_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (r.batch_total_tokens) {
    out.add("max-batch-total-tokens",
            fmt::format("{} tokens in flight do not fit next to the weights: halve the total", *r.batch_total_tokens),
            fmt::format("--max-batch-total-tokens {}", std::max<std::uint64_t>(*r.batch_total_tokens / 2, 1)));
  }
  const std::uint64_t prefill = r.prefill_tokens.value_or(4096);
  if (!r.batch_total_tokens || prefill >= 512) {  // with a tiny prefill batch only the total was too large
    out.add("max-batch-prefill-tokens",
            fmt::format("Warm-up runs one prefill batch of {} tokens and it did not fit: halve it (and keep --max-input-tokens, "
                        "--max-input-length before TGI 2.0, at or below it)",
                        prefill),
            fmt::format("--max-batch-prefill-tokens {}", std::max<std::uint64_t>(prefill / 2, 1)));
  }
  out.add("quantize", "Quantize the weights at load (EETQ 8-bit needs no calibration; AWQ/GPTQ checkpoints are smaller still)",
          "--quantize eetq");
  out.add("num-shard", "Or shard the model over two GPUs", "--num-shard 2");
  (void)d;
}

void trtllm_blocks_fixes(FixList& out)
{
  out.add("max-batch-size",
          fmt::format("Fewer requests at once: the KV cache ran out of blocks for the requests in flight, and each request "
                      "holds its blocks until it ends (default {})",
                      k_trtllm_max_batch_size),
          fmt::format("--max_batch_size {}", k_trtllm_max_batch_size / 8));
  out.add("kv-cache-dtype", "An FP8 KV cache holds twice the tokens in the same memory (Ada, Hopper and Blackwell)",
          "--kv_cache_dtype fp8");
  out.add("kv-cache-free-gpu-memory-fraction",
          "A larger pool: TensorRT-LLM gives the KV cache kv_cache_free_gpu_memory_fraction (default 0.9) of what is free "
          "after the weights and its profiling run",
          "--kv_cache_free_gpu_memory_fraction 0.95");
  out.add("max-seq-len", "Shorter requests: each one's blocks grow with its prompt and output up to --max_seq_len",
          "--max_seq_len 8192");
  trtllm_bigger(out, "Or more GPUs, over which the KV cache splits too");
}

void trtllm_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string free = r.free ? fmt::format(" ({} was free when it tried)", gib(*r.free)) : std::string{};
  switch (trtllm_failure(r)) {
  case TrtllmFailure::kv_cache_much_free:
    out.add("kv-cache-free-gpu-memory-fraction",
            fmt::format("TensorRT-LLM had {} of {} free and still could not create the KV cache: it sizes the cache at "
                        "kv_cache_free_gpu_memory_fraction (default 0.9) of what its profiling run left free, and that "
                        "estimate asked for more than was there; ask for half (its log's \"Estimated max memory in KV "
                        "cache\" line says what it wanted)",
                        gib(*r.free), gib(*r.total)),
            "--kv_cache_free_gpu_memory_fraction 0.45");
    trtllm_activations(out);
    break;
  case TrtllmFailure::kv_cache_little_free:
    // The KV cache is the last component: the weights and the profiling run's peak left it nothing.
    trtllm_activations(out);
    trtllm_bigger(out, "The weights and the profiling run's activations leave no room for the KV cache" + free);
    out.add("max-seq-len", "A shorter --max_seq_len: the profiling run's requests and the KV cache's smallest share shrink "
                           "with it",
            "--max_seq_len 8192");
    break;
  case TrtllmFailure::model: trtllm_bigger(out, "The weights do not fit one GPU" + free); break;
  case TrtllmFailure::other:
    trtllm_activations(out);
    trtllm_bigger(out, fmt::format("The executor could not create its {}{}", r.component.empty() ? "components" : r.component, free));
    break;
  }
  (void)d;
}

}  // namespace gpurent::oom_detail
