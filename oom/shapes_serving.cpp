// SPDX-License-Identifier: MIT
// Message shapes of the serving engines: vLLM, SGLang, TGI, TensorRT-LLM.
#include <optional>
#include <string>
#include <string_view>

#include "oom/shapes.hpp"

namespace gpurent::oom_detail {
namespace {
constexpr std::uint64_t k_max_bytes = 1ULL << 50;

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

// A decimal number printed apart from its unit (`factor` bytes each), as bytes; an absurd one sets
// `what` as the parse error.
std::optional<Bytes> scaled_size(ParseState& s, double number, std::uint64_t factor, std::string_view what)
{
  const long double bytes = static_cast<long double>(number) * static_cast<long double>(factor);
  if (!(bytes >= 0.0L) || bytes > static_cast<long double>(k_max_bytes)) {
    s.error = std::string(what) + " is not a plausible size";
    return std::nullopt;
  }
  return Bytes{static_cast<std::uint64_t>(bytes + 0.5L)};
}

void apply_vllm_free(ParseState& s, std::size_t which, const Match& m)
{
  OomReport& r = s.report;
  const std::size_t o = which == 1 ? 1 : 0;
  if (which == 1) {
    r.device = static_cast<std::uint32_t>(m.fields[0].value);
  }
  const auto free = scaled_size(s, m.fields[o].real, m.fields[o + 1].factor, "the free memory in 'Free memory on device'");
  if (!free) {
    return;
  }
  r.free = free;
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

// ---- TensorRT-LLM --------------------------------------------------------------------------
// The PyTorch backend's executor (trtllm-serve, the LLM API) when it cannot create a component:
// "Executor creation failed due to insufficient GPU memory.\n\nThe following component could not
// be created: KV cache\nTotal GPU memory (GiB): 276.50\nFree GPU memory before component creation
// attempt (GiB): 200.47" (mlcommons/inference#2501; NVIDIA/TensorRT-LLM#5872).

void apply_trtllm_component(ParseState& s, std::size_t, const Match& m)
{
  OomReport& r = s.report;
  // The message's words with their spaces gone (the scanner's text): "KVcache" is "KV cache".
  r.component = m.fields[0].word == "KVcache" ? std::string("KV cache") : std::string(m.fields[0].word);
  r.total = scaled_size(s, m.fields[1].real, k_gib, "a GPU memory figure in TensorRT-LLM's report");
  r.free = scaled_size(s, m.fields[2].real, k_gib, "a GPU memory figure in TensorRT-LLM's report");
}

constexpr std::array<Step, 1> k_trtllm_executor{{
    {Alts{".Thefollowingcomponentcouldnotbecreated:{w}TotalGPUmemory(GiB):{d}"
          "FreeGPUmemorybeforecomponentcreationattempt(GiB):{d}"},
     apply_trtllm_component, all(k_end), k_end},
}};

}  // namespace

const Step* serving_steps(Anchor a) noexcept
{
  switch (a) {
  case Anchor::vllm_len: return k_vllm_len.data();
  case Anchor::vllm_kv_needed: return k_vllm_kv_needed.data();
  case Anchor::vllm_free: return k_vllm_free.data();
  case Anchor::sglang_increase: return k_sglang_increase.data();
  case Anchor::sglang_weights: return k_sglang_weights.data();
  case Anchor::tgi: return k_tgi.data();
  case Anchor::trtllm_executor: return k_trtllm_executor.data();
  default: return nullptr;
  }
}

}  // namespace gpurent::oom_detail
