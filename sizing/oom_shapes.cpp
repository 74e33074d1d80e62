// SPDX-License-Identifier: MIT
// The message shapes of every engine (docs/oom.md, "Message shapes"), as step tables.
#include "sizing/oom_shapes.hpp"

#include <initializer_list>

namespace gpurent::oom_detail {
namespace {

constexpr std::uint64_t k_max_bytes = 1ULL << 50;
constexpr std::size_t k_max_kept_processes = 256;

using Alts = std::array<std::string_view, k_max_alts>;
using Next = std::array<std::int8_t, k_max_alts>;

constexpr Next all(std::int8_t n)
{
  Next out{};
  out.fill(n);
  return out;
}

// ---- PyTorch (CUDA, HIP) -------------------------------------------------------------------

void apply_request(ParseState& s, std::size_t, const Match& m) { s.report.requested = m.fields[0].bytes; }

void apply_capacity(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  r.device = static_cast<std::uint32_t>(m.fields[0].value);
  r.total = m.fields[1].bytes;
  if (which == 2) {
    r.allocated = m.fields[2].bytes;
    r.free = m.fields[3].bytes;
  } else {
    r.free = m.fields[2].bytes;
    r.format = which == 0 ? OomFormat::pytorch_2_2 : OomFormat::pytorch_2_0;
  }
}

void apply_entry(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  const Field& f = m.fields[which == 0 ? 1 : 0];
  switch (which) {
  case 0:
    if (f.absurd) {
      return;  // a container's "Process p has 2^64 bytes": no information
    }
    if (r.other_processes.size() < k_max_kept_processes) {
      r.other_processes.push_back({m.fields[0].value, f.bytes});
    }
    r.other_processes_sum += f.bytes;
    ++r.other_process_count;
    return;
  case 1:
    if (f.absurd) {
      r.process_in_use_invalid = true;
    } else {
      r.process_in_use = f.bytes;
    }
    return;
  case 2: r.allowed = f.bytes; return;
  default: r.allocated = f.bytes; return;
  }
}

void apply_tail(ParseState& s, std::size_t which, const Match& m)
{
  if (which == 0) {
    s.report.private_pools = m.fields[0].bytes;
    s.report.reserved_unallocated = m.fields[2].bytes;
  } else {
    s.report.reserved_unallocated = m.fields[0].bytes;
  }
}

void apply_old_tail(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  if (which == 0) {
    r.allowed = m.fields[0].bytes;
  } else if (which == 1) {
    r.format = OomFormat::pytorch_1x;
    r.reserved_total = m.fields[0].bytes;
    r.reserved_unallocated = m.fields[0].bytes - r.allocated.value_or(Bytes{});
  } else {
    r.format = OomFormat::pytorch_legacy;
    r.reserved_unallocated = m.fields[0].bytes;
  }
}

void apply_sampler(ParseState& s, std::size_t which, const Match& m)
{
  if (which != 1) {
    return;
  }
  s.report.max_num_seqs = m.fields[0].value;
  s.report.context = OomContext::vllm;  // vLLM v1 re-raises its sampler warm-up failure so
}

constexpr std::array<Step, 7> k_pytorch{{
    /* 0 */ {Alts{"CUDAoutofmemory", "HIPoutofmemory"}, nullptr, all(1), k_end},
    /* 1 */ {Alts{".", "occurredwhenwarmingupsamplerwith{n}dummyrequests"}, apply_sampler, Next{2, k_end}, 2},
    /* 2 */ {Alts{"Triedtoallocate{s}"}, apply_request, all(3), k_end},
    /* 3 */
    {Alts{".GPU{i}hasatotalcapacityof{s}ofwhich{s}isfree.", ".GPU{i}hasatotalcapactyof{s}ofwhich{s}isfree.",
          "(GPU{i};{s}totalcapacity;{s}alreadyallocated;{s}free;"},
     apply_capacity, Next{4, 4, 6}, k_end},
    /* 4 */
    {Alts{"Process{i}has{z}memoryinuse.", "Includingnon-PyTorchmemory,thisprocesshas{z}memoryinuse.", "{s}allowed;",
          "Oftheallocatedmemory{s}isallocatedbyPyTorch,"},
     apply_entry, Next{4, 4, 4, 5}, k_end},
    /* 5 */
    {Alts{"with{s}allocatedinprivatepools(e.g.,{w}),and{s}isreservedbyPyTorchbutunallocated",
          "and{s}isreservedbyPyTorchbutunallocated"},
     apply_tail, all(k_end), k_end},
    /* 6 */ {Alts{"{s}allowed;", "{s}reservedintotalbyPyTorch", "{s}cached"}, apply_old_tail, Next{6, k_end, k_end}, k_end},
}};

// ---- PyTorch with the cudaMallocAsync backend -----------------------------------------------

void apply_async(ParseState& s, std::size_t, const Match& m)
{
  OomReport& r = s.report;
  r.format = OomFormat::pytorch_async;
  r.device = static_cast<std::uint32_t>(m.fields[0].value);
  r.allocated = m.fields[1].bytes;
  r.requested = m.fields[2].bytes;
  r.total = m.fields[3].bytes;
  r.free = m.fields[4].bytes;
}

void apply_async_limit(ParseState& s, std::size_t, const Match& m)
{
  // Unset, the limit prints as 2^64 bytes; set with set_per_process_memory_fraction, below the card.
  if (!m.fields[0].absurd && s.report.total && m.fields[0].bytes < *s.report.total) {
    s.report.allowed = m.fields[0].bytes;
  }
}

constexpr std::array<Step, 2> k_pytorch_async{{
    {Alts{"Allocationondevice{i}wouldexceedallowedmemory.(outofmemory)Currentlyallocated:{s}Requested:{s}Devicelimit:{s}Free("
          "accordingtoCUDA):{s}"},
     apply_async, all(1), k_end},
    {Alts{"PyTorchlimit(setbyuser-suppliedmemoryfraction):{z}"}, apply_async_limit, all(k_end), k_end},
}};

// ---- PyTorch on the CPU ----

constexpr std::array<Step, 1> k_pytorch_cpu{{
    {Alts{"notenoughmemory:youtriedtoallocate{b}bytes", "can'tallocatememory:youtriedtoallocate{b}bytes"}, apply_request, all(k_end),
     k_end},
}};

// ---- PyTorch on MPS ------------------------------------------------------------------------

void apply_mps(ParseState& s, std::size_t, const Match& m)
{
  s.report.allocated = m.fields[0].bytes;
  s.report.other_allocations = m.fields[1].bytes;
  s.report.max_allowed = m.fields[2].bytes;
}

void apply_mps_request(ParseState& s, std::size_t which, const Match& m)
{
  s.report.requested = m.fields[0].bytes;
  s.report.pool = which == 0 ? "private" : which == 1 ? "shared" : "";
}

constexpr std::array<Step, 2> k_mps{{
    {Alts{"MPSbackendoutofmemory(MPSallocated:{s},otherallocations:{s},maxallowed:{s})"}, apply_mps, all(1), k_end},
    {Alts{".Triedtoallocate{s}onprivatepool", ".Triedtoallocate{s}onsharedpool", ".Triedtoallocate{s}"}, apply_mps_request,
     all(k_end), k_end},
}};

// ---- CUDA / HIP runtime --------------------------------------------------------------------

void apply_device(ParseState& s, std::size_t, const Match& m) { s.report.device = static_cast<std::uint32_t>(m.fields[0].value); }

// llama.cpp's CUDA_CHECK prints "CUDA error: out of memory\n  current device: 0, in function ...".
constexpr std::array<Step, 1> k_runtime{{
    {Alts{"currentdevice:{i}"}, apply_device, all(k_end), k_end},
}};

// ---- vLLM ----------------------------------------------------------------------------------

void apply_vllm_len(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  r.max_model_len = m.fields[0].value;
  if (which == 0) {
    r.kv_cache_tokens = m.fields[1].value;
  } else {
    r.kv_cache_needed = m.fields[1].bytes;
    r.kv_cache_available = m.fields[2].bytes;
  }
}

void apply_vllm_estimate(ParseState& s, std::size_t, const Match& m) { s.report.kv_cache_tokens = m.fields[0].value; }

void apply_vllm_available(ParseState& s, std::size_t, const Match& m) { s.report.kv_cache_available = m.fields[0].bytes; }

constexpr Step k_vllm_estimate{Alts{".Basedontheavailablememory,theestimatedmaximummodellengthis{n}"}, apply_vllm_estimate,
                               all(k_end), k_end};

constexpr std::array<Step, 2> k_vllm_len{{
    {Alts{"maxseqlen({n})islargerthanthemaximumnumberoftokensthatcanbestoredinKVcache({n})",
          "maxseqlen({n}),({s}KVcacheisneeded,whichislargerthantheavailableKVcachememory({s})"},
     apply_vllm_len, Next{k_end, 1}, k_end},
    k_vllm_estimate,
}};

constexpr std::array<Step, 2> k_vllm_kv_needed{{
    {Alts{"KVcacheisneeded,whichislargerthantheavailableKVcachememory({s})"}, apply_vllm_available, all(1), k_end},
    k_vllm_estimate,
}};

void apply_vllm_free(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  const std::size_t o = which == 1 ? 1 : 0;
  if (which == 1) {
    r.device = static_cast<std::uint32_t>(m.fields[0].value);
  }
  const long double free = static_cast<long double>(m.fields[o].real) * static_cast<long double>(m.fields[o + 1].factor);
  if (!(free >= 0.0L) || free > static_cast<long double>(k_max_bytes)) {
    s.error = "the free memory in 'Free memory on device' is not a plausible size";
    return;
  }
  r.free = Bytes{static_cast<std::uint64_t>(free + 0.5L)};
  r.total = m.fields[o + 1].bytes;
  r.gpu_memory_utilization = m.fields[o + 2].real;
  r.requested = m.fields[o + 3].bytes;
}

constexpr std::array<Step, 1> k_vllm_free{{
    {Alts{"({d}/{s})onstartupislessthandesiredGPUmemoryutilization({d},{s})",
          "cuda:{i}({d}/{s})onstartupislessthandesiredGPUmemoryutilization({d},{s})"},
     apply_vllm_free, all(k_end), k_end},
}};

// ---- SGLang --------------------------------------------------------------------------------

void apply_sglang_current(ParseState& s, std::size_t, const Match& m) { s.report.mem_fraction_static = m.fields[0].real; }

void apply_sglang_under(ParseState& s, std::size_t which, const Match& m)
{
  if (which != 1) {
    s.report.mem_fraction_static = m.fields[0].real;
  } else {
    s.report.device = static_cast<std::uint32_t>(m.fields[0].value);
    s.report.weights = m.fields[1].bytes;
  }
}

void apply_sglang_minimum(ParseState& s, std::size_t, const Match& m) { s.report.min_mem_fraction_static = m.fields[1].real; }

constexpr std::array<Step, 1> k_sglang_increase{{
    {Alts{".Currentvalue:mem_fraction_static={d}"}, apply_sglang_current, all(k_end), k_end},
}};

constexpr std::array<Step, 2> k_sglang_weights{{
    {Alts{"under--mem-fraction-static={d}.", "under--rank-gpu-memory-mibonrank{i}:therankalreadyuses{s}",
          "under--mem-fraction-static={d}"},
     apply_sglang_under, Next{1, k_end, k_end}, k_end},
    {Alts{"Raise--mem-fraction-staticabove{d}(minimumviable=1-available/pre={d})"}, apply_sglang_minimum, all(k_end), k_end},
}};

// ---- TGI -----------------------------------------------------------------------------------

void apply_tgi(ParseState& s, std::size_t which, const Match& m)
{
  if (which == 0) {
    s.report.prefill_tokens = m.fields[0].value;
  } else {
    s.report.batch_total_tokens = m.fields[0].value;
    s.report.prefill_tokens = m.fields[1].value;
  }
}

constexpr std::array<Step, 1> k_tgi{{
    {Alts{"{n}prefilltokens", "{n}totaltokenswith{n}prefilltokens"}, apply_tgi, all(k_end), k_end},
}};

// ---- llama.cpp / Ollama --------------------------------------------------------------------

// "CUDA0", "ROCm1", "Vulkan0", "Metal", "CPU", "CUDA_Host": the device, and which memory.
void set_backend(OomReport& r, std::string_view backend)
{
  r.backend = std::string(backend);
  std::size_t digits = backend.size();
  while (digits > 0 && backend[digits - 1] >= '0' && backend[digits - 1] <= '9') {
    --digits;
  }
  if (digits < backend.size() && backend.size() - digits <= 4) {
    std::uint32_t device = 0;
    for (std::size_t i = digits; i < backend.size(); ++i) {
      device = device * 10 + static_cast<std::uint32_t>(backend[i] - '0');
    }
    r.device = device;
  }
  const std::string_view name = backend.substr(0, digits);
  if (name == "CPU" || name.ends_with("_Host")) {
    r.memory = OomMemory::host;
  } else if (name == "Metal") {
    r.memory = OomMemory::unified;
  }
  r.rocm = r.rocm || name.starts_with("ROCm") || name.starts_with("HIP");
}

void apply_llama_failed(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  switch (which) {
  case 0:
    s.role = Role::amend;
    r.stage = OomStage::compute;
    return;
  case 1:
    s.role = Role::amend;
    r.stage = OomStage::kv_cache;
    return;
  case 2:
    set_backend(r, m.fields[0].word);
    r.requested = m.fields[1].bytes;
    return;
  case 3:
  case 4: r.requested = m.fields[0].bytes; return;
  default:  // TensorFlow/XLA stream executor: "failed to allocate 17.79G (19104890880 bytes) from device"
    r.engine = OomEngine::cuda_runtime;
    r.format = OomFormat::cuda_runtime;
    r.kind = OomKind::runtime;
    r.requested = m.fields[1].bytes;
    return;
  }
}

constexpr std::array<Step, 1> k_llama_failed{{
    {Alts{"computebuffers", "bufferforkvcache", "{w}bufferofsize{b}", "bufferofsize{b}", "buffer,size={s}",
          "{s}({b}bytes)fromdevice:CUDA_ERROR_OUT_OF_MEMORY"},
     apply_llama_failed, all(k_end), k_end},
}};

void apply_llama_unable(ParseState& s, std::size_t, const Match& m)
{
  set_backend(s.report, m.fields[0].word == "backend" ? std::string_view{} : m.fields[0].word);
  s.report.stage = OomStage::weights;
}

constexpr std::array<Step, 1> k_llama_unable{{
    {Alts{"{w}buffer"}, apply_llama_unable, all(k_end), k_end},
}};

void apply_vulkan(ParseState& s, std::size_t, const Match& m)
{
  s.report.requested = m.fields[0].bytes;
  s.report.backend = "Vulkan";
}

constexpr std::array<Step, 1> k_llama_vulkan{{
    {Alts{"{b}failed"}, apply_vulkan, all(k_end), k_end},
}};

// ---- Ollama host memory --------------------------------------------------------------------

void apply_ollama_requires(ParseState& s, std::size_t, const Match& m)
{
  s.report.requested = m.fields[0].bytes;
  s.report.free = m.fields[1].bytes;
}

void apply_ollama_totals(ParseState& s, std::size_t, const Match& m)
{
  s.report.total = m.fields[0].bytes;
  s.report.swap_free = m.fields[2].bytes;
}

constexpr std::array<Step, 1> k_ollama_requires{{
    {Alts{"{s})thanisavailable({s})"}, apply_ollama_requires, all(k_end), k_end},
}};

constexpr std::array<Step, 2> k_ollama_too_large{{
    {Alts{"\"requested=\"{s}\"available=\"{s}\"", "\",\"requested\":\"{s}\",\"available\":\"{s}\"", "\"requested=\"{s}\"available={b}"},
     apply_ollama_requires, Next{1, 1, 1}, k_end},
    {Alts{"total=\"{s}\"free=\"{s}\"swap=\"{s}\"", ",\"total\":\"{s}\",\"free\":\"{s}\",\"swap\":\"{s}\""}, apply_ollama_totals,
     all(k_end), k_end},
}};

// ---- JAX / XLA -----------------------------------------------------------------------------

void apply_xla_stat(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  const Bytes b = m.count > 0 ? m.fields[0].bytes : Bytes{};
  switch (which) {
  case 2: r.xla_parameters = b; return;
  case 4: r.xla_live_out = b; return;
  case 5: r.xla_temp = b; return;
  case 7: r.xla_total = b; return;
  case 8:
  case 9: r.xla_fragmentation = b; return;
  default: return;
  }
}

constexpr std::array<Step, 2> k_xla_oom{{
    {Alts{"{s}.", "{s}"}, apply_request, all(1), k_end},
    {Alts{"BufferAssignmentOOMDebugging.", "BufferAssignmentstats:", "parameterallocation:{s}", "constantallocation:{s}",
          "maybe_live_outallocation:{s}", "preallocatedtempallocation:{s}", "preallocatedtempfragmentation:{s}({d}%)",
          "totalallocation:{s}", "totalfragmentation:{s}({d}%)", "totalfragmentation:{s}"},
     apply_xla_stat, all(1), k_end},
}};

void apply_xla_request(ParseState& s, std::size_t which, const Match& m)
{
  if (which == 2) {
    s.report.requested = m.fields[0].bytes;  // "Failed to allocate N bytes for new constant"
    return;
  }
  s.report.requested = m.fields[1].bytes;
  if (which == 0) {
    s.report.device = static_cast<std::uint32_t>(m.fields[2].value);
  }
}

constexpr std::array<Step, 1> k_xla_request{{
    {Alts{"requestfor{s}({b}B)ondeviceordinal{i}", "requestfor{s}({b}B)", "{b}bytesfornewconstant"}, apply_xla_request,
     all(k_end), k_end},
}};

void apply_tpu(ParseState& s, std::size_t, const Match& m)
{
  s.report.memory_space = std::string(m.fields[0].word);
  s.report.xla_total = m.fields[1].bytes;
  s.report.total = m.fields[2].bytes;
}

constexpr std::array<Step, 2> k_xla_tpu{{
    {Alts{"{w}.Used{s}of{s}{w}."}, apply_tpu, all(1), k_end},
    {Alts{"Exceeded{w}capacityby{s}."}, nullptr, all(k_end), k_end},
}};

// ---- TensorFlow ----------------------------------------------------------------------------

void apply_tf_shape(ParseState& s, std::size_t, const Match& m)
{
  OomReport& r = s.report;
  const std::string_view dims = m.fields[0].word;
  std::uint64_t dim = 0;
  for (const char c : dims) {
    if (c == ',') {
      r.tensor_shape.push_back(dim);
      dim = 0;
    } else {
      dim = dim * 10 + static_cast<std::uint64_t>(c - '0');
    }
  }
  if (!dims.empty()) {
    r.tensor_shape.push_back(dim);
  }
}

void apply_tf_type(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  r.dtype = std::string(m.fields[0].word);
  std::uint64_t elements = 1;
  for (const auto d : r.tensor_shape) {
    elements *= d;  // bounded by the {l} reader (at most 2^60)
  }
  const std::uint64_t size = m.fields[0].value;
  if (elements > k_max_bytes / size) {
    s.error = "the tensor shape is larger than any GPU (over 1 PiB)";
    return;
  }
  r.requested = Bytes{elements * size};
  if (which == 0) {
    r.device = static_cast<std::uint32_t>(m.fields[5].value);
    if (m.fields[4].word == "CPU" || m.fields[4].word == "cpu") {
      r.memory = OomMemory::host;
    }
  }
}

constexpr std::array<Step, 2> k_tf{{
    {Alts{"withshape[{l}]", "ofshape[{l}]"}, apply_tf_shape, all(1), k_end},
    {Alts{"andtype{t}on/job:{w}/replica:{i}/task:{i}/device:{w}:{i}", "andtype{t}"},
     apply_tf_type, all(k_end), k_end},
}};

// ---- NCCL ----------------------------------------------------------------------------------

constexpr std::array<Step, 1> k_nccl{{
    {Alts{"'outofmemory'", "{i}'outofmemory'"}, nullptr, all(k_end), k_end},
}};

void apply_nccl_size(ParseState& s, std::size_t, const Match& m)
{
  s.role = Role::amend;
  s.report.requested = m.fields[0].bytes;
}

constexpr std::array<Step, 1> k_nccl_size{{
    {Alts{"{b}bytes"}, apply_nccl_size, all(k_end), k_end},
}};

// ---- Context -------------------------------------------------------------------------------

void apply_blocks(ParseState& s, std::size_t, const Match& m) { s.report.gpu_blocks = m.fields[0].value; }
void apply_load_begin(ParseState& s, std::size_t, const Match& m) { s.report.avail_before_weights = m.fields[0].bytes; }
void apply_load_end(ParseState& s, std::size_t, const Match& m)
{
  s.report.avail_after_weights = m.fields[0].bytes;
  s.report.weights = m.fields[1].bytes;
}
void apply_ctx(ParseState& s, std::size_t, const Match& m) { s.report.context_size = m.fields[0].value; }
void apply_util(ParseState& s, std::size_t, const Match& m) { s.report.gpu_memory_utilization = m.fields[0].real; }
void apply_fraction(ParseState& s, std::size_t, const Match& m) { s.report.mem_fraction_static = m.fields[0].real; }
void apply_prefill(ParseState& s, std::size_t, const Match& m) { s.report.prefill_tokens = m.fields[0].value; }

constexpr std::array<Step, 1> k_blocks{{{Alts{"{n}"}, apply_blocks, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_load_begin{{{Alts{"{s}"}, apply_load_begin, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_load_end{{{Alts{"{s},memusage={s}"}, apply_load_end, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_ctx{{{Alts{"{n}"}, apply_ctx, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_util{{{Alts{"{d}"}, apply_util, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_fraction{{{Alts{"{d}"}, apply_fraction, all(k_end), k_end}}};
constexpr std::array<Step, 1> k_prefill{{{Alts{"{n}", "Some({n})"}, apply_prefill, all(k_end), k_end}}};

// ---- Per anchor ----------------------------------------------------------------------------

void init(OomReport& r, OomEngine engine, OomFormat format, OomKind kind, OomMemory memory = OomMemory::device)
{
  r.engine = engine;
  r.format = format;
  r.kind = kind;
  r.memory = memory;
}

// The size printed right before the anchor, e.g. "allocating 1024.00 MiB on device 0:" before
// "cudaMalloc failed", or "(24.00 GiB" before "KV cache is needed".
void look_back(Anchor anchor, std::string_view text, std::size_t at, ParseState& s)
{
  OomReport& r = s.report;
  switch (anchor) {
  case Anchor::llama_malloc: {
    const Match m = match_ending_at(text, at, "allocating", "allocating{s}ondevice{i}:", 160);
    if (m.status == Status::ok) {
      r.requested = m.fields[0].bytes;
      r.device = static_cast<std::uint32_t>(m.fields[1].value);
    } else if (!m.error.empty()) {
      s.error = m.error;
    }
    return;
  }
  case Anchor::vllm_kv_needed: {
    const Match needed = match_ending_at(text, at, "(", "({s}", 40);
    if (needed.status == Status::ok) {
      r.kv_cache_needed = needed.fields[0].bytes;
    }
    const std::size_t floor = at > 300 ? at - 300 : 0;
    const std::size_t len = text.substr(0, at).rfind("maxseqlen(");
    if (len != std::string_view::npos && len >= floor) {
      const Match m = match_pattern(text, len, "maxseqlen({n})", true);
      if (m.status == Status::ok) {
        r.max_model_len = m.fields[0].value;
      }
    }
    return;
  }
  case Anchor::cuda_driver: {
    // TensorFlow/XLA's stream executor: "failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
    const Match m = match_ending_at(text, at, "failedtoalloc", "failedtoalloc{b}byteson{w}:", 80);
    if (m.status == Status::ok) {
      r.requested = m.fields[0].bytes;
      if (m.fields[1].word == "host") {
        r.memory = OomMemory::host;
      }
    }
    return;
  }
  case Anchor::llama_layers: {
    const Match m = match_ending_at(text, at, "offloaded", "offloaded{n}/{n}", 40);
    if (m.status == Status::ok) {
      r.gpu_layers = m.fields[0].value;
      r.model_layers = m.fields[1].value;
    }
    return;
  }
  case Anchor::nccl_cuda:
  case Anchor::nccl_hip:
    // "host:pid:tid [3] include/alloc.h:178 NCCL WARN" (a line break may have taken the level word)
    if (text.substr(at > 12 ? at - 12 : 0, at > 12 ? 12 : at).find("NCCL") != std::string_view::npos) {
      const std::size_t open = text.substr(0, at).rfind('[');
      if (open != std::string_view::npos && at - open < 160) {
        const Match d = match_pattern(text, open, "[{i}]", true);
        if (d.status == Status::ok) {
          r.device = static_cast<std::uint32_t>(d.fields[0].value);
        }
      }
    }
    return;
  case Anchor::llama_failed:
    if (text.substr(at > 100 ? at - 100 : 0, at > 100 ? 100 : at).find("_cpu_") != std::string_view::npos) {
      set_backend(r, "CPU");
    }
    return;
  default: return;
  }
}

template <std::size_t N>
const Step* steps(const std::array<Step, N>& table) noexcept
{
  return table.data();
}

}  // namespace

ReportParser::ReportParser(Anchor anchor, std::string_view text, std::size_t pos, std::size_t anchor_length, std::uint64_t line)
    : m_anchor(anchor), m_start(pos), m_pos(pos)
{
  OomReport& r = m_state.report;
  r.line = line;
  m_step = 0;
  const auto after_anchor = [&] { m_pos = pos + anchor_length; };
  switch (anchor) {
  case Anchor::cuda_oom: m_steps = steps(k_pytorch); break;
  case Anchor::hip_oom:
    m_steps = steps(k_pytorch);
    r.engine = OomEngine::pytorch_rocm;
    r.rocm = true;
    break;
  case Anchor::tried:
    m_steps = steps(k_pytorch);
    m_step = 2;
    break;
  case Anchor::cuda_async: m_steps = steps(k_pytorch_async); break;
  case Anchor::cpu_allocator:
    m_steps = steps(k_pytorch_cpu);
    after_anchor();
    init(r, OomEngine::pytorch, OomFormat::pytorch_cpu, OomKind::host_memory, OomMemory::host);
    break;
  case Anchor::mps:
    m_steps = steps(k_mps);
    init(r, OomEngine::pytorch_mps, OomFormat::mps, OomKind::mps_allocator, OomMemory::unified);
    break;
  case Anchor::cuda_runtime:
  case Anchor::cuda_driver:
  case Anchor::hip_runtime:
    m_steps = steps(k_runtime);
    after_anchor();
    if (anchor == Anchor::hip_runtime) {
      init(r, OomEngine::hip_runtime, OomFormat::hip_runtime, OomKind::runtime);
      r.rocm = true;
    } else {
      init(r, OomEngine::cuda_runtime, OomFormat::cuda_runtime, OomKind::runtime);
    }
    break;
  case Anchor::vllm_len:
    m_steps = steps(k_vllm_len);
    init(r, OomEngine::vllm, OomFormat::vllm, OomKind::kv_cache_too_small);
    break;
  case Anchor::vllm_kv_needed:
    m_steps = steps(k_vllm_kv_needed);
    init(r, OomEngine::vllm, OomFormat::vllm, OomKind::kv_cache_too_small);
    break;
  case Anchor::vllm_no_kv:
    m_step = k_end;
    after_anchor();
    init(r, OomEngine::vllm, OomFormat::vllm, OomKind::no_kv_cache_memory);
    break;
  case Anchor::vllm_free:
    m_steps = steps(k_vllm_free);
    after_anchor();
    init(r, OomEngine::vllm, OomFormat::vllm, OomKind::vllm_startup_memory);
    break;
  case Anchor::sglang_increase:
  case Anchor::sglang_weights:
    m_steps = anchor == Anchor::sglang_increase ? steps(k_sglang_increase) : steps(k_sglang_weights);
    after_anchor();
    init(r, OomEngine::sglang, OomFormat::sglang, OomKind::sglang_static);
    break;
  case Anchor::tgi:
    m_steps = steps(k_tgi);
    after_anchor();
    init(r, OomEngine::tgi, OomFormat::tgi, OomKind::tgi_warmup);
    break;
  case Anchor::llama_malloc:
  case Anchor::llama_failed:
  case Anchor::llama_unable:
  case Anchor::llama_vulkan:
    m_steps = anchor == Anchor::llama_failed   ? steps(k_llama_failed)
              : anchor == Anchor::llama_unable ? steps(k_llama_unable)
              : anchor == Anchor::llama_vulkan ? steps(k_llama_vulkan)
                                                : nullptr;
    m_step = m_steps == nullptr ? k_end : 0;
    after_anchor();
    init(r, OomEngine::llama_cpp, OomFormat::llama_cpp, OomKind::device_alloc);
    break;
  case Anchor::ollama_requires:
  case Anchor::ollama_too_large:
    m_steps = anchor == Anchor::ollama_requires ? steps(k_ollama_requires) : steps(k_ollama_too_large);
    after_anchor();
    init(r, OomEngine::ollama, OomFormat::ollama, OomKind::host_memory, OomMemory::host);
    break;
  case Anchor::xla_oom:
  case Anchor::xla_request:
    m_steps = anchor == Anchor::xla_oom ? steps(k_xla_oom) : steps(k_xla_request);
    after_anchor();
    init(r, OomEngine::jax, OomFormat::xla, OomKind::xla_alloc);
    break;
  case Anchor::xla_tpu:
    m_steps = steps(k_xla_tpu);
    after_anchor();
    init(r, OomEngine::jax, OomFormat::xla_compile, OomKind::xla_compile);
    break;
  case Anchor::tf_oom:
    m_steps = steps(k_tf);
    after_anchor();
    init(r, OomEngine::tensorflow, OomFormat::tensorflow, OomKind::tf_tensor);
    break;
  case Anchor::nccl_cuda:
  case Anchor::nccl_hip:
    m_steps = steps(k_nccl);
    after_anchor();
    init(r, OomEngine::nccl, OomFormat::nccl, OomKind::nccl);
    r.rocm = anchor == Anchor::nccl_hip;
    break;
  case Anchor::nccl_size:
    m_steps = steps(k_nccl_size);
    after_anchor();
    init(r, OomEngine::nccl, OomFormat::nccl, OomKind::nccl);
    break;
  case Anchor::cublas_alloc:
    m_step = k_end;
    after_anchor();
    m_state.role = Role::near_miss;
    break;
  default:  // context
    m_state.role = Role::context;
    after_anchor();
    m_steps = anchor == Anchor::vllm_blocks         ? steps(k_blocks)
              : anchor == Anchor::sglang_load_begin ? steps(k_load_begin)
              : anchor == Anchor::sglang_load_end   ? steps(k_load_end)
              : (anchor == Anchor::llama_ctx || anchor == Anchor::ollama_kvsize) ? steps(k_ctx)
              : anchor == Anchor::vllm_util       ? steps(k_util)
              : anchor == Anchor::sglang_fraction ? steps(k_fraction)
              : anchor == Anchor::tgi_prefill     ? steps(k_prefill)
                                                  : nullptr;
    m_step = m_steps == nullptr ? k_end : 0;
    break;
  }
  look_back(anchor, text, pos, m_state);
}

bool ReportParser::recognised() const noexcept
{
  const OomReport& r = m_state.report;
  switch (m_anchor) {
  case Anchor::cuda_oom:
  case Anchor::hip_oom: return true;
  case Anchor::tried: return r.total.has_value();
  case Anchor::vllm_len: return r.max_model_len.has_value();
  case Anchor::vllm_kv_needed: return r.kv_cache_available.has_value();
  case Anchor::cuda_runtime:
  case Anchor::cuda_driver:
  case Anchor::hip_runtime:
  case Anchor::vllm_no_kv:
  case Anchor::sglang_increase:
  case Anchor::sglang_weights:
  case Anchor::llama_malloc:
  case Anchor::cublas_alloc: return true;
  case Anchor::llama_layers: return r.gpu_layers.has_value();
  default: return m_progress > 0;
  }
}

bool ReportParser::strong() const noexcept
{
  switch (m_anchor) {
  case Anchor::tried:
  case Anchor::llama_failed:
  case Anchor::llama_unable:
  case Anchor::nccl_size: return false;
  default: return m_state.role == Role::report;
  }
}

Status ReportParser::advance(std::string_view text, bool final)
{
  while (m_step != k_end) {
    const Status s = step(text, final);
    if (s == Status::eof) {
      return Status::eof;
    }
  }
  if (m_pos == m_start) {
    m_pos = m_start + 1;  // never restart the search on the same anchor
  }
  return Status::ok;
}

Status ReportParser::step(std::string_view text, bool final)
{
  const Step& st = m_steps[static_cast<std::size_t>(m_step)];
  std::size_t which = 0;
  for (const auto pattern : st.alts) {
    if (pattern.empty()) {
      break;
    }
    Match m = match_pattern(text, m_pos, pattern, final);
    if (m.status == Status::eof) {
      return Status::eof;
    }
    if (m.status == Status::ok) {
      m_pos = m.end;
      ++m_progress;
      if (st.apply != nullptr) {
        st.apply(m_state, which, m);
      }
      m_step = m_state.error.empty() ? st.next[which] : k_end;
      return Status::ok;
    }
    if (!m.error.empty()) {
      m_state.error = std::move(m.error);
      m_step = k_end;
      return Status::mismatch;
    }
    ++which;
  }
  m_step = st.on_miss;
  return Status::mismatch;
}

}  // namespace gpurent::oom_detail
