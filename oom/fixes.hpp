// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM diagnosis: the fixes for the causes that hold, in order, chosen by the
// engine that raised the error. Every command carries computed values, never a placeholder.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oom/diagnose.hpp"

namespace gpurent::oom_detail {

[[nodiscard]] std::vector<OomFix> fixes_for(const OomReport& report, const OomDiagnosis& diagnosis);
// Drops the fixes that propose what the job already runs (its weight format, KV type, a context at
// or above its own: OomReport::job) and, with plan's estimate of the job, gives the rest plan's
// values and savings (or drops those plan finds nothing to save with) (oom/fixes_job.cpp).
void fit_fixes_to_job(std::vector<OomFix>& fixes, const OomReport& report, const OomDiagnosis& diagnosis);

// Fixes in order, each id once.
class FixList {
public:
  void add(std::string id, std::string description, std::string command = {});
  [[nodiscard]] bool has(std::string_view id) const;
  [[nodiscard]] std::vector<OomFix> take() { return std::move(m_fixes); }

private:
  std::vector<OomFix> m_fixes;
};

[[nodiscard]] bool holds(const OomDiagnosis& d, OomCause c);
// 0.xx rounded down / up to two decimals, and printed so ("0.85").
[[nodiscard]] double floor2(double v);
[[nodiscard]] double ceil2(double v);
[[nodiscard]] std::string fraction_text(double v);
// The process list of the card: nvidia-smi, or rocm-smi on AMD.
[[nodiscard]] std::string process_query(const OomReport& r);
// "List/stop what else holds memory", with the amount when it is known and large enough to matter.
void check_other_processes(FixList& out, const OomReport& r, const OomDiagnosis& d);
// The smallest card that holds the need (or a split over two cards when none does).
void larger_card(FixList& out, const OomDiagnosis& d);
// Halve the batch: the Trainer's flags, or in words for code we do not know.
void reduce_batch(FixList& out, const OomReport& r);

// Lowers an engine's share of the card (vLLM's --gpu-memory-utilization, SGLang's
// --mem-fraction-static; `id` is the flag) to 0.05 below the value in the log, or `fallback`.
void lower_share(FixList& out, std::string_view id, std::optional<double> now, double fallback, std::string_view why);

// The fixes of the engine around a PyTorch error (vLLM, SGLang, TGI, a diffusion pipeline) when
// the job does not fit; false when the log names no such engine.
bool engine_job_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
// The engines' own messages.
void vllm_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void sglang_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void tgi_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void trtllm_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
// TensorRT-LLM's KV cache manager out of blocks at run time ("No free blocks left").
void trtllm_blocks_fixes(FixList& out);
// What TensorRT-LLM's executor could not create, as its diagnosis and fixes read it: the KV cache
// (created last; with a tenth of the card or more still free, its own estimate asked for more than
// was there, rather than the weights leaving nothing), the model, or another component.
enum class TrtllmFailure { kv_cache_little_free, kv_cache_much_free, model, other };
[[nodiscard]] inline TrtllmFailure trtllm_failure(const OomReport& r)
{
  if (r.component == "KV cache") {
    const bool much_free = r.total && r.free && r.total->n > 0 && r.free->n * 10 >= r.total->n;
    return much_free ? TrtllmFailure::kv_cache_much_free : TrtllmFailure::kv_cache_little_free;
  }
  return r.component == "model" || r.component == "Model" ? TrtllmFailure::model : TrtllmFailure::other;
}
void llama_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void host_memory_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void xla_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void tensorflow_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);
void nccl_fixes(FixList& out, const OomReport& r, const OomDiagnosis& d);

}  // namespace gpurent::oom_detail
