// SPDX-License-Identifier: MIT
// Fixes for PyTorch's allocators (CUDA, ROCm, MPS), the bare runtime errors, and the dispatch.
#include "oom/fixes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/rounding.hpp"

namespace gpurent::oom_detail {
namespace {

std::string gib(Bytes b) { return oom_size(b); }

void expandable_segments(FixList& out, const OomReport& r)
{
  const std::string held = r.reserved_unallocated ? gib(*r.reserved_unallocated) : std::string("Memory");
  const std::string why = fmt::format("{} is reserved by PyTorch but unallocated: the memory is there, split into blocks too "
                                      "small for the request",
                                      held);
  if (r.format == OomFormat::pytorch_1x || r.format == OomFormat::pytorch_legacy) {
    out.add("expandable-segments",
            why + ". This PyTorch predates expandable_segments (2.1+): cap the split size instead, or upgrade",
            r.rocm ? "PYTORCH_HIP_ALLOC_CONF=max_split_size_mb:128" : "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128");
    return;
  }
  if (r.format == OomFormat::pytorch_async) {
    out.add("native-allocator",
            "This message comes from the cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync; ComfyUI turns it "
            "on unless started with --disable-cuda-malloc): PyTorch's native allocator with expandable segments often fits more",
            "PYTORCH_CUDA_ALLOC_CONF=backend:native,expandable_segments:True");
    return;
  }
  if (r.rocm) {
    out.add("expandable-segments",
            why + ". Let the allocator grow its segments (set before Python starts); PyTorch 2.9+ also reads PYTORCH_ALLOC_CONF",
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True");
    return;
  }
  const bool old = r.format == OomFormat::pytorch_2_0;
  out.add("expandable-segments",
          why + fmt::format(". Let the allocator grow its segments (set before Python starts){}",
                            old ? "" : "; PyTorch versions that ignore PYTORCH_ALLOC_CONF read the alias PYTORCH_CUDA_ALLOC_CONF"),
          old ? "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" : "PYTORCH_ALLOC_CONF=expandable_segments:True");
}

void trainer_job_fixes(FixList& out, const OomReport& r)
{
  reduce_batch(out, r);
  out.add("reduce-context",
          "Shorten the sequences (TRL's max_length; max_seq_length before TRL 0.19): truncate or bucket long inputs; "
          "activations grow with sequence length",
          "--max_length 2048");
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
}

void job_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (!engine_job_fixes(out, r, d)) {
    trainer_job_fixes(out, r);
  }
  larger_card(out, d);
}

// Free memory was enough: the allocation met a limit, not the end of the card.
void limit_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const std::string allowed = r.allowed ? fmt::format(" (the message shows it: {} allowed)", gib(*r.allowed)) : std::string{};
  out.add("check-memory-limit",
          fmt::format("Free memory was enough ({} free, {} asked): the allocation was refused by a limit, not by the card. "
                      "Check, in order: a per-process cap, torch.cuda.set_per_process_memory_fraction{}; a MIG slice "
                      "(the process sees only its slice); a container or cgroup limit; the driver (WSL2 and Windows WDDM keep "
                      "part of the card)",
                      gib(r.free.value_or(Bytes{})), gib(r.requested.value_or(Bytes{})), allowed),
          r.rocm ? "rocm-smi --showmeminfo vram"
                 : "nvidia-smi --query-gpu=name,memory.total,memory.used,memory.free,mig.mode.current --format=csv");
  if (r.allowed && r.total && r.total->n > 0 && r.requested) {
    const Bytes held = r.allocated && r.reserved_unallocated ? *r.allocated + *r.reserved_unallocated : *r.allowed;
    const double share = std::min(1.0, ceil2(to_gib(held + *r.requested) / to_gib(*r.total)) + 0.01);
    out.add("raise-memory-fraction",
            fmt::format("The cap of {} is below what this step needs ({} reserved + {} asked): raise the fraction", gib(*r.allowed),
                        gib(held), gib(*r.requested)),
            fmt::format("torch.cuda.set_per_process_memory_fraction({})", fraction_text(share)));
  }
  (void)d;
}

void pytorch_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (holds(d, OomCause::allocation_exceeds_card)) {
    out.add("shrink-allocation",
            fmt::format("The single tensor asked for ({}) is larger than the whole card ({}): reduce the batch, resolution or "
                        "sequence length that sizes it, or use a card with at least {}",
                        gib(r.requested.value_or(Bytes{})), gib(r.total.value_or(Bytes{})),
                        d.need ? gib(*d.need) : std::string("that much")));
  }
  if (holds(d, OomCause::other_process)) {
    check_other_processes(out, r, d);
  }
  if (holds(d, OomCause::fragmentation)) {
    expandable_segments(out, r);
  }
  if (holds(d, OomCause::job_too_large) || holds(d, OomCause::allocation_exceeds_card)) {
    job_fixes(out, r, d);
  }
  if (holds(d, OomCause::limit_not_capacity)) {
    limit_fixes(out, r, d);
  }
  if (d.causes.empty() && !r.free && r.context != OomContext::none && r.context != OomContext::trainer) {
    // No numbers, inside a serving engine or pipeline: its own levers first (vLLM's sampler
    // warm-up names max_num_seqs).
    engine_job_fixes(out, r, d);
  }
  if (d.causes.empty() || holds(d, OomCause::limit_not_capacity)) {
    // No cause holds (or the message gave no numbers): look, then the usual savings.
    check_other_processes(out, r, d);
    if (!engine_job_fixes(out, r, d)) {
      reduce_batch(out, r);
    }
    expandable_segments(out, r);
  }
}

void mps_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const Bytes limit = r.max_allowed.value_or(Bytes{});
  if (holds(d, OomCause::allocation_exceeds_card)) {
    out.add("shrink-allocation", fmt::format("The single allocation ({}) is larger than all MPS may use ({} max allowed): reduce "
                                             "the batch, resolution or sequence length that sizes it",
                                             gib(r.requested.value_or(Bytes{})), gib(limit)));
  }
  if (holds(d, OomCause::limit_not_capacity)) {
    out.add("free-unified-memory",
            fmt::format("Allocated + other + asked ({}) was under max allowed ({}), yet Metal refused: macOS is short of unified "
                        "memory. Close other applications and look at the memory pressure",
                        gib(d.need.value_or(Bytes{})), gib(limit)),
            "memory_pressure");
  }
  const auto empty_cache = [&] {
    out.add("empty-cache",
            fmt::format("Other allocations hold {}: memory the MPS allocator keeps cached and Metal buffers outside PyTorch. Release "
                        "the cache between steps or between models",
                        gib(*r.other_allocations)),
            "torch.mps.empty_cache()");
  };
  const bool cache_heavy = r.other_allocations && r.other_allocations->n * 10 >= limit.n;
  if (cache_heavy && r.allocated && *r.other_allocations >= *r.allocated) {
    empty_cache();  // most of the memory is not the job's own tensors
  }
  if (!engine_job_fixes(out, r, d)) {
    reduce_batch(out, r);
  }
  if (cache_heavy) {
    empty_cache();
  }
  if (d.need && limit.n > 0) {
    // max allowed = ratio x the device's recommended working set; PyTorch's default ratio is 1.7.
    const double ratio = ceil2(1.7 * to_gib(*d.need) / to_gib(limit) + 0.05);
    out.add("watermark-ratio",
            fmt::format("Raise the limit: max allowed ({}) is PYTORCH_MPS_HIGH_WATERMARK_RATIO (default 1.7) x the recommended "
                        "working set ({}); {} needs the ratio at {} (from the default; 0.0 removes the limit, and macOS may then "
                        "swap or stall)",
                        gib(limit), gib(Bytes{static_cast<std::uint64_t>(static_cast<double>(limit.n) / 1.7)}), gib(*d.need),
                        fraction_text(ratio)),
            fmt::format("PYTORCH_MPS_HIGH_WATERMARK_RATIO={}", fraction_text(ratio)));
  }
  out.add("half-precision", "Half precision: float16 weights and activations take half the memory of float32 ones",
          "with torch.autocast(device_type=\"mps\", dtype=torch.float16):");
  larger_card(out, d);
}

// "CUDA error: out of memory" and friends: CUDA's own allocator failed, outside PyTorch's cache.
void runtime_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  if (r.memory == OomMemory::host) {
    host_memory_fixes(out, r, d);  // pinned (page-locked) host memory: system RAM
    return;
  }
  const std::string what = r.requested ? fmt::format("An allocation of {} failed", gib(*r.requested))
                                       : std::string("The CUDA runtime could not allocate memory (the message gives no sizes)");
  out.add("check-gpu",
          what + ": usually the card was already full, by this process (PyTorch's cache, another model) or by others. See "
                 "which processes hold its memory",
          process_query(r));
  if (!engine_job_fixes(out, r, d)) {
    out.add("release-cache",
            "Libraries that allocate on their own (cuBLAS and cuDNN workspaces, custom kernels) cannot use memory PyTorch keeps "
            "cached: release it before the call that failed",
            "torch.cuda.empty_cache()");
    reduce_batch(out, r);
  }
  out.add("locate-failure", "Kernel errors are reported late; run once with launches synchronous to see the call that failed",
          "CUDA_LAUNCH_BLOCKING=1");
}

}  // namespace

void FixList::add(std::string id, std::string description, std::string command)
{
  if (!has(id)) {
    m_fixes.push_back({std::move(id), std::move(description), std::move(command)});
  }
}

bool FixList::has(std::string_view id) const
{
  return std::any_of(m_fixes.begin(), m_fixes.end(), [&](const OomFix& f) { return f.id == id; });
}

bool holds(const OomDiagnosis& d, OomCause c) { return std::find(d.causes.begin(), d.causes.end(), c) != d.causes.end(); }

double floor2(double v) { return static_cast<double>(static_cast<std::int64_t>(v * 100.0 + 1e-9)) / 100.0; }
double ceil2(double v) { return ceil_up(v * 100.0 - 1e-9) / 100.0; }
std::string fraction_text(double v) { return fmt::format("{:.2f}", v); }

std::string process_query(const OomReport& r)
{
  return r.rocm ? "rocm-smi --showpids --showmeminfo vram" : "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv";
}

void check_other_processes(FixList& out, const OomReport& r, const OomDiagnosis& d)
{
  const Bytes total = r.total.value_or(Bytes{});
  const bool matters = d.other_processes && d.other_processes->n >= std::max<std::uint64_t>(k_gib, total.n / 10);
  std::string self;
  if (d.self_process) {
    self = fmt::format("; the listed Process {} ({}) is this job itself, seen from a container (another PID namespace), and is "
                       "not counted",
                       d.self_process->pid, gib(d.self_process->used));
  }
  const std::string tool = r.rocm ? " (amd-smi process on newer ROCm)" : "";
  if (matters) {
    out.add("free-other-processes",
            fmt::format("Other processes hold {} on this GPU: list them and stop the leftovers (an earlier run, a notebook kernel, "
                        "a model server){}{}",
                        gib(*d.other_processes), tool, self),
            process_query(r));
  } else {
    out.add("free-other-processes",
            fmt::format("List what else uses this GPU and stop leftovers (an earlier run, a notebook kernel, a model server){}{}",
                        tool, self),
            process_query(r));
  }
  if (!r.rocm) {
    out.add("doctor",
            "On a server rented with gpurent: `gpurent status` names it, and `gpurent doctor` with that name runs the same check "
            "over SSH and flags leftover processes",
            "gpurent status");
  }
}

void larger_card(FixList& out, const OomDiagnosis& d)
{
  if (!d.card_need) {
    return;
  }
  if (const auto& e = d.job.estimate) {
    // The card is plan's: the smallest whose limit (fit_limit_for: 95% of usable, vLLM's share)
    // holds plan's estimate of the whole job.
    if (!d.card) {
      out.add("larger-card",
              fmt::format("No single card in the catalogue holds plan's estimate of this job ({} per GPU): plan sizes it on "
                          "several GPUs",
                          gib(e->total)),
              e->plan_command);
      return;
    }
    const auto& c = *d.card;
    const std::string where = c.provider.empty()
                                  ? std::string("no built-in offer")
                                  : fmt::format("{} at {}/h", c.provider, c.price_per_hour ? format_usd(*c.price_per_hour) : "?");
    out.add("larger-card",
            fmt::format("If it still does not fit: plan's estimate of this job needs {} per GPU; the smallest card it fits on "
                        "is the {} ({:.2f} GiB usable; {})",
                        gib(e->total), c.display.empty() ? c.card : c.display, to_gib(c.usable), where),
            fmt::format("gpurent offers --min-vram {:.0f}", ceil_up(to_gib(c.usable))));
    return;
  }
  const double min_gib = ceil_up(to_gib(*d.card_need) / 0.95 * 100.0) / 100.0;
  if (!d.card) {
    out.add("larger-card",
            fmt::format("No single card in the catalogue has {:.2f} GiB usable: split the job over two cards of at least {:.0f} "
                        "GiB each (FSDP/ZeRO-3 for training, tensor parallelism for inference)",
                        min_gib, ceil_up(min_gib / 2.0)),
            fmt::format("gpurent offers --min-vram {:.0f}", ceil_up(min_gib / 2.0)));
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

void reduce_batch(FixList& out, const OomReport& r)
{
  if (r.context == OomContext::trainer || r.context == OomContext::none) {
    out.add("reduce-batch",
            "Halve the per-step batch and double gradient accumulation: same effective batch, about half the activations "
            "(plain PyTorch: divide the loss by N and step every N batches)",
            "--per_device_train_batch_size 4 --gradient_accumulation_steps 2");
    return;
  }
  out.add("reduce-batch", "Halve the batch (or the image resolution, or the sequence length): activations shrink with it");
}

std::vector<OomFix> fixes_for(const OomReport& report, const OomDiagnosis& d)
{
  FixList out;
  switch (report.kind) {
  case OomKind::allocator: pytorch_fixes(out, report, d); break;
  case OomKind::mps_allocator: mps_fixes(out, report, d); break;
  case OomKind::runtime: runtime_fixes(out, report, d); break;
  case OomKind::kv_cache_too_small:
  case OomKind::no_kv_cache_memory:
  case OomKind::vllm_startup_memory: vllm_fixes(out, report, d); break;
  case OomKind::sglang_static: sglang_fixes(out, report, d); break;
  case OomKind::tgi_warmup: tgi_fixes(out, report, d); break;
  case OomKind::device_alloc: llama_fixes(out, report, d); break;
  case OomKind::host_memory: host_memory_fixes(out, report, d); break;
  case OomKind::xla_alloc:
  case OomKind::xla_compile: xla_fixes(out, report, d); break;
  case OomKind::tf_tensor: tensorflow_fixes(out, report, d); break;
  case OomKind::nccl: nccl_fixes(out, report, d); break;
  case OomKind::trtllm_component: trtllm_fixes(out, report, d); break;
  case OomKind::trtllm_kv_blocks: trtllm_blocks_fixes(out); break;
  }
  std::vector<OomFix> fixes = out.take();
  fit_fixes_to_job(fixes, report, d);
  return fixes;
}

}  // namespace gpurent::oom_detail
