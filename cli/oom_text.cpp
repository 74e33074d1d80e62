// SPDX-License-Identifier: MIT
// `gpurent oom` text view: what ran out, the numbers, the causes checked, the fixes in order.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "cli/oom_view.hpp"

namespace gpurent {
namespace {

std::string size(Bytes b) { return oom_size(b); }

// Word-wraps `text` at 80 columns with `indent` spaces on every line after the first.
std::string wrap(std::string_view text, std::size_t indent, std::size_t first_used = 0)
{
  std::string out;
  std::size_t col = first_used;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t sp = text.find(' ', i);
    const std::string_view word = text.substr(i, sp == std::string_view::npos ? std::string_view::npos : sp - i);
    if (col > indent && col + 1 + word.size() > 80) {
      out += '\n' + std::string(indent, ' ');
      col = indent;
    } else if (col > first_used && !(col == indent && out.ends_with(' '))) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    i = sp == std::string_view::npos ? text.size() : sp + 1;
  }
  return out;
}

class Rows {
public:
  explicit Rows(std::ostream& o) : m_o(o) {}
  void size_row(std::string_view label, const std::optional<Bytes>& v, const std::string& note = {})
  {
    if (v) {
      m_o << fmt::format("  {:<20}{:>12}  {}\n", label, size(*v), note);
    }
  }
  template <class T>
  void value_row(std::string_view label, const std::optional<T>& v, std::string_view unit = {})
  {
    if (v) {
      m_o << fmt::format("  {:<20}{:>12}  {}\n", label, fmt::format("{}", *v), unit);
    }
  }

private:
  std::ostream& m_o;
};

bool holds(const OomDiagnosis& d, OomCause c) { return std::find(d.causes.begin(), d.causes.end(), c) != d.causes.end(); }

std::string inside(const OomReport& r)
{
  return r.context == OomContext::none || r.context == OomContext::trainer ? std::string{}
                                                                             : fmt::format(" inside {}", to_string(r.context));
}

std::string headline(const OomReport& r)
{
  const std::string on = r.device ? fmt::format(" on GPU {}", *r.device) : std::string{};
  switch (r.kind) {
  case OomKind::allocator:
    return fmt::format("PyTorch{} ran out of GPU memory{}{}", r.rocm ? " (ROCm)" : "", on, inside(r));
  case OomKind::mps_allocator: return "PyTorch on Apple MPS reached its memory limit" + inside(r);
  case OomKind::runtime:
    return fmt::format("The {} runtime could not allocate GPU memory{}{}", r.rocm ? "HIP (ROCm)" : "CUDA", on, inside(r));
  case OomKind::kv_cache_too_small: return "vLLM: the KV cache cannot hold one request of the model's full context";
  case OomKind::no_kv_cache_memory: return "vLLM: no memory left for the KV cache";
  case OomKind::vllm_startup_memory: return "vLLM: not enough free GPU memory at start-up" + on;
  case OomKind::sglang_static: return "SGLang: the weights leave no room for the KV cache" + on;
  case OomKind::tgi_warmup: return "TGI: warm-up could not run one prefill batch";
  case OomKind::device_alloc:
    return fmt::format("{} could not allocate a {} buffer{}", r.engine == OomEngine::ollama ? "Ollama (llama.cpp)" : "llama.cpp",
                       r.memory == OomMemory::host ? "system RAM" : r.memory == OomMemory::unified ? "unified-memory" : "GPU", on);
  case OomKind::host_memory:
    return r.engine == OomEngine::ollama    ? "Ollama: the model needs more system RAM than is available"
           : r.engine == OomEngine::unsloth ? "Unsloth Studio: the part of the model the GPU cannot hold needs more system RAM "
                                              "than is usable"
                                            : "PyTorch ran out of system RAM (an allocation on the CPU)" + inside(r);
  case OomKind::xla_alloc: return fmt::format("{} (XLA) ran out of GPU memory{}", r.engine == OomEngine::tensorflow ? "TensorFlow" : "JAX", on);
  case OomKind::xla_compile: return fmt::format("XLA: the compiled program does not fit the TPU's {}", r.memory_space);
  case OomKind::tf_tensor:
    return fmt::format("TensorFlow ran out of {} allocating one tensor{}", r.memory == OomMemory::host ? "system RAM" : "GPU memory", on);
  case OomKind::nccl: return "NCCL could not allocate GPU memory for its buffers" + on;
  case OomKind::trtllm_component:
    return fmt::format("TensorRT-LLM could not create its {}{}", r.component.empty() ? "executor" : r.component, on);
  case OomKind::trtllm_kv_blocks: return "TensorRT-LLM: its KV cache has no free block left for the requests in flight" + on;
  }
  return "Out of memory";
}

void pytorch_rows(std::ostream& o, const OomReport& r, const OomDiagnosis& d)
{
  Rows rows(o);
  rows.size_row("asked for", r.requested, "one allocation");
  rows.size_row("card total", r.total, r.free ? fmt::format("{} free at the time", size(*r.free)) : "");
  rows.size_row("allowed", r.allowed, "cap set by set_per_process_memory_fraction");
  std::string parts;
  if (r.allocated && r.reserved_unallocated) {
    parts = fmt::format("{} alloc + {} unused + {} {}", size(*r.allocated), size(*r.reserved_unallocated), size(d.non_pytorch),
                        d.non_pytorch_estimated ? "ctx (est.)" : "non-PyTorch");
  } else if (r.allocated) {
    parts = fmt::format("{} alloc + {} ctx (est.)", size(*r.allocated), size(d.non_pytorch));
  }
  rows.size_row("this process", d.footprint, parts);
  if (d.self_process) {
    o << "  "
      << wrap(fmt::format("(Process {} is this job seen from a container: it holds {}, about all the card had in use)",
                          d.self_process->pid, size(d.self_process->used)),
              3, 2)
      << '\n';
  }
  rows.size_row("other processes", d.other_processes,
                r.other_process_count > (d.self_process ? 1U : 0U) ? fmt::format("{} listed in the message", r.other_process_count)
                                                                    : "card total - free - this process");
  rows.size_row("needed", d.need, "allocated + asked + non-PyTorch");
  if (r.process_in_use_invalid) {
    o << "  (\"this process has\" was impossible, as containers print it: ignored)\n";
  }
}

void pytorch_verdicts(std::ostream& o, const OomReport& r, const OomDiagnosis& d)
{
  if (!r.total) {
    return;  // nothing to check the causes against
  }
  const auto line = [&](OomCause c, const std::string& why) {
    o << "  " << (holds(d, c) ? "yes" : "no ") << "  " << wrap(fmt::format("{}: {}", to_string(c), why), 7, 7) << '\n';
  };
  o << "\nCauses (checked in this order):\n";
  if (r.requested && r.total) {
    line(OomCause::allocation_exceeds_card, fmt::format("the one request ({}) against the whole card ({})", size(*r.requested), size(*r.total)));
  }
  if (d.other_processes) {
    const Bytes bar{std::max<std::uint64_t>(k_gib, r.total.value_or(Bytes{}).n / 10)};
    line(OomCause::other_process,
         fmt::format("others hold {}; it counts from {} (1 GiB or 10% of the card)", size(*d.other_processes), size(bar)));
  }
  if (r.reserved_unallocated && r.requested && r.total && r.free) {
    line(OomCause::fragmentation, fmt::format("{} reserved but unallocated, against the {} asked and 5% of the card ({}), with "
                                              "less free ({}) than asked",
                                              size(*r.reserved_unallocated), size(*r.requested), size(Bytes{r.total->n / 20}), size(*r.free)));
  }
  if (d.need && r.total) {
    const Bytes left = *r.total - d.other_processes.value_or(Bytes{});
    line(OomCause::job_too_large, fmt::format("needs {}, against 95% of the {} left to it ({})", size(*d.need), size(left), size(oom_fit_limit(left))));
  }
  if (r.free && r.requested) {
    line(OomCause::limit_not_capacity, fmt::format("{} free against {} asked, and no other cause", size(*r.free), size(*r.requested)));
  }
}

void engine_rows(std::ostream& o, const OomReport& r, const OomDiagnosis& d)
{
  Rows rows(o);
  switch (r.kind) {
  case OomKind::mps_allocator:
    rows.size_row("asked for", r.requested, r.pool.empty() ? "" : r.pool + " pool");
    rows.size_row("MPS allocated", r.allocated, "by PyTorch's MPS allocator");
    rows.size_row("other allocations", r.other_allocations, "cached, and Metal buffers outside PyTorch");
    rows.size_row("needed", d.need, "allocated + other + asked");
    rows.size_row("max allowed", r.max_allowed, "PYTORCH_MPS_HIGH_WATERMARK_RATIO's limit (not a card)");
    return;
  case OomKind::runtime: rows.size_row("asked for", r.requested, "one allocation"); return;
  case OomKind::kv_cache_too_small:
    rows.value_row("model's max seq len", r.max_model_len, "tokens");
    rows.value_row(r.kv_cache_needed ? "vLLM's estimate" : "KV cache holds", r.kv_cache_tokens, "tokens");
    rows.size_row("KV cache needed", r.kv_cache_needed);
    rows.size_row("KV memory available", r.kv_cache_available);
    if (!r.kv_cache_tokens) {
      rows.value_row("longest that fits", d.fitting_max_model_len, "tokens (needed : available)");
    }
    return;
  case OomKind::no_kv_cache_memory: rows.value_row("# GPU blocks", r.gpu_blocks); return;
  case OomKind::vllm_startup_memory:
    rows.size_row("card total", r.total, r.free ? fmt::format("{} free at start", size(*r.free)) : "");
    rows.size_row("vLLM wanted", r.requested,
                  r.gpu_memory_utilization ? fmt::format("gpu_memory_utilization {}", *r.gpu_memory_utilization) : "");
    rows.size_row("used by others", d.other_processes, "card total - free");
    return;
  case OomKind::sglang_static:
    rows.value_row("mem_fraction_static", r.mem_fraction_static, "now");
    rows.value_row("minimum viable", r.min_mem_fraction_static, "(1 - available after loading / before)");
    rows.size_row("weights", r.weights, "after loading");
    rows.size_row("free before loading", r.avail_before_weights);
    rows.size_row("free after loading", r.avail_after_weights);
    return;
  case OomKind::tgi_warmup:
    rows.value_row("prefill tokens", r.prefill_tokens, "in the warm-up batch");
    rows.value_row("batch total tokens", r.batch_total_tokens);
    return;
  case OomKind::device_alloc:
    rows.size_row("buffer", r.requested, r.backend.empty() ? "" : "on " + r.backend);
    if (r.stage != OomStage::unknown) {
      o << fmt::format("  {:<20}{:>12}\n", "for", to_string(r.stage));
    }
    rows.value_row("layers on the GPU", r.gpu_layers, r.model_layers ? fmt::format("of {}", *r.model_layers) : "");
    rows.value_row("context", r.context_size, "tokens");
    return;
  case OomKind::host_memory:
    if (r.engine == OomEngine::unsloth) {
      rows.size_row("from system RAM", r.requested, "what the GPU cannot hold");
      rows.size_row("RAM available", r.total);
      rows.size_row("usable", r.free, "the rest kept for the system");
      return;
    }
    rows.size_row(r.engine == OomEngine::ollama ? "system RAM needed" : "asked for", r.requested);
    rows.size_row("available", r.free, r.swap_free ? fmt::format("incl. {} free swap", size(*r.swap_free)) : "");
    rows.size_row("total RAM", r.total);
    return;
  case OomKind::xla_alloc:
  case OomKind::xla_compile:
    rows.size_row("asked for", r.requested, "one allocation");
    rows.size_row(r.kind == OomKind::xla_compile ? "program uses" : "program total", r.xla_total);
    rows.size_row("capacity", r.total, r.memory_space);
    rows.size_row("parameters", r.xla_parameters);
    rows.size_row("temporaries", r.xla_temp);
    rows.size_row("live out", r.xla_live_out);
    rows.size_row("fragmentation", r.xla_fragmentation);
    return;
  case OomKind::tf_tensor: {
    std::string shape;
    for (const auto dim : r.tensor_shape) {
      shape += (shape.empty() ? "" : ",") + std::to_string(dim);
    }
    rows.size_row("tensor", r.requested, fmt::format("shape [{}] x {}", shape, r.dtype));
    return;
  }
  case OomKind::nccl: rows.size_row("asked for", r.requested, "NCCL buffer"); return;
  case OomKind::trtllm_component:
    rows.size_row("card total", r.total);
    rows.size_row("free before it", r.free, r.component.empty() ? "" : "when the " + r.component + " was created");
    return;
  case OomKind::trtllm_kv_blocks: return;  // the message gives no sizes
  case OomKind::allocator: return;
  }
}

// The job the log ran, as plan sizes it: the figures, what was assumed, what the log lacks.
void job_text(std::ostream& o, const OomDiagnosis& d)
{
  const OomJobInput& in = d.job;
  if (const auto& e = in.estimate) {
    o << '\n' << wrap(fmt::format("The job in the log: {} ({}).", e->model, e->job), 0) << '\n';
    Rows rows(o);
    rows.size_row("weights", e->weights, "per GPU, plan's estimate");
    rows.size_row("KV cache", e->kv_cache_bytes, fmt::format("{} tokens x {}", e->context, e->kv_cache));
    rows.size_row("compute/activations", e->activations, "compute buffer or activation peak");
    rows.size_row("overhead", e->overhead, "CUDA context, engine buffers");
    rows.size_row("total", e->total, "what the card must hold");
    for (const auto& a : e->assumed) {
      o << "  " << wrap("assumed: " + a, 4, 2) << '\n';
    }
    for (const auto& n : e->notes) {
      o << "  " << wrap("note: " + n, 4, 2) << '\n';
    }
    if (!e->plan_command.empty()) {
      o << "  the same job in plan:\n     $ " << e->plan_command << '\n';
    }
    return;
  }
  if (!in.missing.empty()) {
    std::string list;
    for (const auto& m : in.missing) {
      list += (list.empty() ? "" : ", ") + m;
    }
    o << '\n'
      << wrap(fmt::format("No estimate of the whole job: the log does not give {}. The sizes above are the message's own.", list), 0)
      << '\n';
  } else if (!in.why_not.empty() && d.on_card) {
    o << '\n' << wrap(fmt::format("No estimate of the whole job: {}.", in.why_not), 0) << '\n';
  }
}

}  // namespace

void oom_text(std::ostream& o, const OomReport& r, const OomDiagnosis& d, bool color)
{
  const std::string b = color ? "\x1b[1m" : "";
  const std::string e = color ? "\x1b[0m" : "";
  const std::string format = r.format == OomFormat::unknown ? std::string("message without numbers") : std::string(to_string(r.format));
  o << b << headline(r) << e << " (" << format << ", line " << r.line << ")\n";
  if (r.kind == OomKind::allocator) {
    std::ostringstream rows;
    pytorch_rows(rows, r, d);
    if (!rows.str().empty()) {
      o << '\n' << rows.str();
    }
    if (!r.total) {
      o << '\n' << wrap("The message gives no card sizes to check the causes against.", 0) << '\n';
    } else if (d.causes.empty()) {
      o << '\n'
        << wrap("No cause holds: free memory looked sufficient. Suspect a concurrent allocation, a limit outside PyTorch (MIG "
                "slice, WSL2, set_per_process_memory_fraction) or a truncated message.",
                0)
        << '\n';
    }
    pytorch_verdicts(o, r, d);
  } else {
    std::ostringstream rows;
    engine_rows(rows, r, d);
    if (!rows.str().empty()) {
      o << '\n' << rows.str();
    }
    if (!d.causes.empty()) {
      std::string causes;
      for (const auto c : d.causes) {
        causes += (causes.empty() ? "" : ", ") + std::string(to_string(c));
      }
      o << "\n  Cause: " << causes << '\n';
    }
  }
  o << "\nFixes, in order:\n";
  for (std::size_t i = 0; i < d.fixes.size(); ++i) {
    const auto& f = d.fixes[i];
    const std::string num = fmt::format("  {}. ", i + 1);
    o << num << wrap(f.description, 5, num.size()) << '\n';
    if (!f.command.empty()) {
      o << "     $ " << f.command << '\n';
    }
  }
  job_text(o, d);
  if (d.on_card) {
    const auto& v = *d.on_card;
    const std::string card = v.card.display.empty() ? v.card.card : v.card.display;
    const std::string verdict = v.fits ? "it fits" : "it does NOT fit";
    if (v.estimated) {
      o << '\n'
        << wrap(fmt::format("On the {}: {} usable, a limit of {} per GPU (plan's: 95% of usable{}); plan's estimate of this "
                            "job needs {} per GPU on {} GPU{}: {}.",
                            card, size(v.card.usable), size(v.limit),
                            d.job.estimate && d.job.estimate->job.starts_with("vllm") ? ", and vLLM's gpu_memory_utilization" : "",
                            size(v.need), v.gpus, v.gpus == 1 ? "" : "s", verdict),
                0)
        << '\n';
    } else {
      o << '\n'
        << wrap(d.resident_weights
                    ? fmt::format("On the {}: {} usable, {} after the 5% margin; this job needs at least {} (the failed "
                                  "buffer and the {} of weights already on the GPU): {}.",
                                  card, size(v.card.usable), size(v.limit), size(v.need), size(*d.resident_weights),
                                  v.fits ? "it may fit, but the compute buffer and the CUDA context come on top" : verdict)
                    : fmt::format("On the {}: {} usable, {} after the 5% margin; this job needs {} (the message's own "
                                  "numbers): {}.",
                                  card, size(v.card.usable), size(v.limit), size(v.need), verdict),
                0)
        << '\n';
    }
  }
}

}  // namespace gpurent
