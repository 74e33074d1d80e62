// SPDX-License-Identifier: MIT
// Message shapes of llama.cpp, Ollama, JAX/XLA, TensorFlow and NCCL, and the context lines.
#include "oom/shapes.hpp"

namespace gpurent::oom_detail {
namespace {
constexpr std::uint64_t k_max_bytes = 1ULL << 50;

// ---- llama.cpp / Ollama --------------------------------------------------------------------

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

// ---- Unsloth Studio host memory ------------------------------------------------------------
// "Failed to load model: About 10 GB of this model does not fit in GPU memory and would run from
// system RAM. Only about 8 GB is available and 2 GB of that is kept free for the rest of the
// system, leaving about 6 GB usable." (unslothai/unsloth#9483): what would run from RAM, the RAM
// available, and what is usable of it.

void apply_unsloth_host(ParseState& s, std::size_t, const Match& m)
{
  s.report.requested = m.fields[0].bytes;
  s.report.total = m.fields[1].bytes;
  s.report.free = m.fields[3].bytes;
}

constexpr std::array<Step, 1> k_unsloth_host{{
    {Alts{"{s}ofthismodeldoesnotfitinGPUmemoryandwouldrunfromsystemRAM.Onlyabout{s}isavailableand{s}ofthatiskeptfree"
          "fortherestofthesystem,leavingabout{s}usable"},
     apply_unsloth_host, all(k_end), k_end},
}};

void apply_request(ParseState& s, std::size_t, const Match& m) { s.report.requested = m.fields[0].bytes; }

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

}  // namespace

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


const Step* other_steps(Anchor a) noexcept
{
  switch (a) {
  case Anchor::llama_failed: return k_llama_failed.data();
  case Anchor::llama_unable: return k_llama_unable.data();
  case Anchor::llama_vulkan: return k_llama_vulkan.data();
  case Anchor::ollama_requires: return k_ollama_requires.data();
  case Anchor::unsloth_host: return k_unsloth_host.data();
  case Anchor::ollama_too_large: return k_ollama_too_large.data();
  case Anchor::xla_oom: return k_xla_oom.data();
  case Anchor::xla_request: return k_xla_request.data();
  case Anchor::xla_tpu: return k_xla_tpu.data();
  case Anchor::tf_oom: return k_tf.data();
  case Anchor::nccl_cuda:
  case Anchor::nccl_hip: return k_nccl.data();
  case Anchor::nccl_size: return k_nccl_size.data();
  case Anchor::vllm_blocks: return k_blocks.data();
  case Anchor::sglang_load_begin: return k_load_begin.data();
  case Anchor::sglang_load_end: return k_load_end.data();
  case Anchor::llama_ctx:
  case Anchor::ollama_kvsize: return k_ctx.data();
  case Anchor::vllm_util: return k_util.data();
  case Anchor::sglang_fraction: return k_fraction.data();
  case Anchor::tgi_prefill: return k_prefill.data();
  default: return nullptr;
  }
}

}  // namespace gpurent::oom_detail
