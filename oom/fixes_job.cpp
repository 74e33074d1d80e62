// SPDX-License-Identifier: MIT
// The fixes measured against the job the log ran: never the format, KV type or context it already
// uses, and, when plan's estimate of the job is known, plan's own values and savings.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/text.hpp"
#include "oom/fixes.hpp"

namespace gpurent::oom_detail {
namespace {

bool gguf_engine(const OomReport& r) { return r.engine == OomEngine::llama_cpp || r.engine == OomEngine::ollama; }

// A KV type that is already quantized (llama.cpp's q8_0, q4_0, ...; vLLM's fp8 variants).
bool quantized_kv(std::string_view type)
{
  const std::string t = to_lower(type);
  return !t.empty() && t != "f16" && t != "f32" && t != "bf16" && t != "auto" && t != "fp16" && t != "bfloat16" && t != "float16";
}

// The first number after `flag` in a command ("-c 65536", "OLLAMA_CONTEXT_LENGTH=2048").
std::optional<std::uint64_t> number_after(std::string_view command, std::string_view flag)
{
  const std::size_t at = command.find(flag);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  std::size_t i = at + flag.size();
  std::size_t end = i;
  while (end < command.size() && std::isdigit(static_cast<unsigned char>(command[end])) != 0) {
    ++end;
  }
  return parse_u64(command.substr(i, end - i));
}

// The context the job ran with, per sequence where the engine says so.
std::optional<std::uint64_t> current_context(const OomReport& r)
{
  if (gguf_engine(r)) {
    return r.job.n_ctx ? r.job.n_ctx : r.context_size;
  }
  return r.job.max_model_len ? r.job.max_model_len : r.max_model_len;
}

std::optional<std::uint64_t> fix_context(const OomFix& f)
{
  for (std::string_view flag : {"-c ", "OLLAMA_CONTEXT_LENGTH=", "--max-model-len ", "--context-length "}) {
    if (auto n = number_after(f.command, flag)) {
      return n;
    }
  }
  return std::nullopt;
}

// The fix the log's own settings make pointless: a format, KV type or context the job already has.
bool already_so(const OomFix& f, const OomReport& r)
{
  const OomJobFacts& j = r.job;
  if (f.id == "kv-cache-q8") {
    return quantized_kv(j.type_k) && quantized_kv(j.type_v.empty() ? j.type_k : j.type_v);
  }
  if (f.id == "kv-cache-fp8") {
    return quantized_kv(j.kv_cache_dtype);
  }
  if (f.id == "quantize" && (r.engine == OomEngine::vllm || r.engine == OomEngine::sglang || r.context == OomContext::vllm ||
                             r.context == OomContext::sglang)) {
    return !j.quantization.empty();  // an FP8, AWQ or GPTQ job: FP8 is not smaller
  }
  if (f.id == "smaller-context" || f.id == "max-model-len" || f.id == "context-length") {
    const auto now = current_context(r);
    const auto to = fix_context(f);
    return now && to && *to >= *now;
  }
  return false;
}

// The oom fix that plan's fix `plan_id` answers for this engine.
std::string_view plan_id_for(std::string_view oom_id, const OomReport& r)
{
  if (oom_id == "smaller-context" && gguf_engine(r)) {
    return "reduce-context";
  }
  if (oom_id == "smaller-quant" || oom_id == "quantize") {
    return "quantize-weights";
  }
  if (oom_id == "kv-cache-q8") {
    return "kv-cache-q8_0";
  }
  if (oom_id == "kv-cache-fp8") {
    return "kv-cache-fp8";
  }
  if (oom_id == "fewer-sequences") {
    return "fewer-sequences";
  }
  return {};
}

std::string saving(const OomPlanFix& p)
{
  return fmt::format("saves {} per GPU by plan's estimate{}", oom_size(p.saves), p.fits_alone ? ", and fits alone" : "");
}

OomFix from_plan(const OomFix& was, const OomPlanFix& p, const OomJobEstimate& e)
{
  OomFix f = was;
  f.command = p.command;
  if (p.id == "quantize-weights") {
    f.description = fmt::format("A smaller quantization: {} instead of the {} the job runs ({})", p.value, e.weights_format, saving(p));
  } else if (p.id == "reduce-context") {
    f.description = fmt::format("A shorter context: {} ({})", p.description, saving(p));
  } else if (p.id.starts_with("kv-cache")) {
    f.description = fmt::format("Quantize the KV cache: {} ({})", p.description, saving(p));
  } else {
    f.description = fmt::format("{} ({})", p.description, saving(p));
  }
  return f;
}

}  // namespace

void fit_fixes_to_job(std::vector<OomFix>& fixes, const OomReport& r, const OomDiagnosis& d)
{
  const auto& e = d.job.estimate;
  std::vector<OomFix> out;
  for (const auto& f : fixes) {
    const std::string_view plan_id = plan_id_for(f.id, r);
    if (e && e->fixes_known && !plan_id.empty()) {
      // Plan's fix for the same change: its value is never the job's own (planner/fixes.hpp).
      const auto p = std::find_if(e->fixes.begin(), e->fixes.end(), [&](const OomPlanFix& x) { return x.id == plan_id; });
      if (p != e->fixes.end()) {
        out.push_back(from_plan(f, *p, *e));
      }
      continue;  // plan finds nothing it saves: not a fix for this job
    }
    if (!already_so(f, r)) {
      out.push_back(f);
    }
  }
  if (e && e->fixes_known) {
    // Plan's fewer-sequences for a llama.cpp server with several slots (-np): oom has no fix of its own for it.
    const auto p = std::find_if(e->fixes.begin(), e->fixes.end(), [](const OomPlanFix& x) { return x.id == "fewer-sequences"; });
    const bool have = std::any_of(out.begin(), out.end(), [](const OomFix& f) { return f.id == "fewer-sequences"; });
    if (gguf_engine(r) && p != e->fixes.end() && !have) {
      const auto card = std::find_if(out.begin(), out.end(), [](const OomFix& f) { return f.id == "larger-card" || f.id == "two-cards"; });
      out.insert(card, from_plan(OomFix{"fewer-sequences", {}, {}}, *p, *e));
    }
  }
  fixes = std::move(out);
}

}  // namespace gpurent::oom_detail
