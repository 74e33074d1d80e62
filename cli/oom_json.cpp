// SPDX-License-Identifier: MIT
// `gpurent oom --json`: the keys of spec/oom.md; keys the message does not give are omitted.
#include <nlohmann/json.hpp>

#include "cli/oom_view.hpp"
#include "common/rounding.hpp"

#include <string>
#include <vector>

namespace gpurent {
namespace {

// JSON sizes: GiB rounded to 6 decimals (1 byte ~ 1e-9 GiB, the messages print 2 decimals).
double gib6(Bytes b) { return round_to_places(to_gib(b), 6); }

void put(nlohmann::json& j, const char* key, const std::optional<Bytes>& b)
{
  if (b) {
    j[key] = gib6(*b);
  }
}

template <class T>
void put_value(nlohmann::json& j, const char* key, const std::optional<T>& v)
{
  if (v) {
    j[key] = *v;
  }
}

void put_text(nlohmann::json& j, const char* key, const std::string& s)
{
  if (!s.empty()) {
    j[key] = s;
  }
}

std::vector<std::string> strings(const std::vector<std::string>& v) { return v; }

// The job the log describes and plan's estimate of it (docs/oom.md "The job in the log").
void job_json(nlohmann::json& j, const OomReport& r, const OomDiagnosis& d)
{
  const OomJobFacts& f = r.job;
  if (!f.any() && !d.job.estimate && d.job.missing.empty()) {
    return;
  }
  nlohmann::json job = nlohmann::json::object();
  if (const auto& e = d.job.estimate) {
    job["model"] = e->model;
    job["job"] = e->job;
    put_text(job, "plan_command", e->plan_command);
    job["weights_format"] = e->weights_format;
    job["kv_cache"] = e->kv_cache;
    job["context"] = e->context;
    job["gpus"] = e->gpus;
    job["estimate"] = {{"weights_gib", gib6(e->weights)},       {"kv_cache_gib", gib6(e->kv_cache_bytes)},
                       {"activations_gib", gib6(e->activations)}, {"overhead_gib", gib6(e->overhead)},
                       {"total_gib", gib6(e->total)}};
    job["assumed"] = strings(e->assumed);
    job["notes"] = strings(e->notes);
  }
  if (!d.job.missing.empty()) {
    job["missing"] = strings(d.job.missing);
  }
  put_text(job, "no_estimate", d.job.why_not);
  nlohmann::json log = nlohmann::json::object();
  put_text(log, "model", f.model.empty() ? f.model_name : f.model);
  put_text(log, "file_type", f.file_type);
  put(log, "file_size_gib", f.file_size);
  put_value(log, "n_layer", f.n_layer);
  put_value(log, "n_ctx", f.n_ctx);
  put_value(log, "n_seq_max", f.n_seq_max);
  put_text(log, "type_k", f.type_k);
  put_text(log, "flash_attn", f.flash_attn);
  put(log, "gpu_model_buffers_gib", f.gpu_model_buffers);
  put_value(log, "max_model_len", f.max_model_len);
  put_value(log, "tensor_parallel_size", f.tensor_parallel_size);
  put_text(log, "quantization", f.quantization);
  put_text(log, "kv_cache_dtype", f.kv_cache_dtype);
  put(log, "weights_loaded_gib", f.weights_loaded);
  put_text(log, "device", f.device_name);
  if (!log.empty()) {
    job["from_log"] = std::move(log);
  }
  j["job"] = std::move(job);
}

// Keys beyond the contract: where the report was, and the parts of the arithmetic.
void extras(nlohmann::json& j, const OomReport& r, const OomDiagnosis& d)
{
  j["line"] = r.line;
  j["memory"] = to_string(r.memory);
  if (r.rocm) {
    j["rocm"] = true;
  }
  if (r.context != OomContext::none) {
    j["raised_in"] = to_string(r.context);
  }
  if (r.kind == OomKind::allocator) {
    j["non_pytorch_gib"] = gib6(d.non_pytorch);
    j["non_pytorch_estimated"] = d.non_pytorch_estimated;
    put(j, "footprint_gib", d.footprint);
  }
  if (r.process_in_use_invalid) {
    j["process_in_use_invalid"] = true;
  }
  put(j, "private_pools_gib", r.private_pools);
  put(j, "allowed_gib", r.allowed);
  put(j, "other_allocations_gib", r.other_allocations);
  put(j, "max_allowed_gib", r.max_allowed);
  put_text(j, "pool", r.pool);
  put_text(j, "component", r.component);
  put(j, "kv_cache_needed_gib", r.kv_cache_needed);
  put(j, "kv_cache_available_gib", r.kv_cache_available);
  put_value(j, "fitting_max_model_len", d.fitting_max_model_len);
  put_value(j, "gpu_blocks", r.gpu_blocks);
  put_value(j, "gpu_memory_utilization", r.gpu_memory_utilization);
  put_value(j, "max_num_seqs", r.max_num_seqs);
  put_value(j, "mem_fraction_static", r.mem_fraction_static);
  put_value(j, "min_mem_fraction_static", r.min_mem_fraction_static);
  put(j, "weights_gib", r.weights);
  put(j, "avail_before_weights_gib", r.avail_before_weights);
  put(j, "avail_after_weights_gib", r.avail_after_weights);
  put_value(j, "prefill_tokens", r.prefill_tokens);
  put_value(j, "batch_total_tokens", r.batch_total_tokens);
  put_text(j, "backend", r.backend);
  if (r.stage != OomStage::unknown) {
    j["stage"] = to_string(r.stage);
  }
  put_value(j, "gpu_layers", r.gpu_layers);
  put_value(j, "model_layers", r.model_layers);
  put_value(j, "context_size", r.context_size);
  put(j, "swap_free_gib", r.swap_free);
  put(j, "xla_parameters_gib", r.xla_parameters);
  put(j, "xla_live_out_gib", r.xla_live_out);
  put(j, "xla_temp_gib", r.xla_temp);
  put(j, "xla_total_gib", r.xla_total);
  put(j, "xla_fragmentation_gib", r.xla_fragmentation);
  put_text(j, "memory_space", r.memory_space);
  if (!r.tensor_shape.empty()) {
    j["tensor_shape"] = r.tensor_shape;
  }
  put_text(j, "dtype", r.dtype);
  if (!r.other_processes.empty()) {
    j["other_processes"] = nlohmann::json::array();
    for (const auto& p : r.other_processes) {
      j["other_processes"].push_back({{"pid", p.pid}, {"used_gib", gib6(p.used)}});
    }
  }
  if (d.self_process) {
    j["self_process"] = {{"pid", d.self_process->pid}, {"used_gib", gib6(d.self_process->used)}};
  }
  if (d.on_card) {
    j["on_card"] = {{"card", d.on_card->card.card},        {"usable_gib", gib6(d.on_card->card.usable)},
                    {"limit_gib", gib6(d.on_card->limit)}, {"need_gib", gib6(d.on_card->need)},
                    {"fits", d.on_card->fits},             {"basis", d.on_card->estimated ? "plan_estimate" : "message"},
                    {"gpus", d.on_card->gpus}};
    if (d.resident_weights && !d.on_card->estimated) {
      j["on_card"]["resident_weights_gib"] = gib6(*d.resident_weights);  // counted into need_gib
      if (d.on_card->fits) {
        j["on_card"]["fits"] = nullptr;  // a lower bound under the limit says nothing either way
      }
    }
  }
  job_json(j, r, d);
}

}  // namespace

nlohmann::json oom_json(const OomReport& r, const OomDiagnosis& d)
{
  nlohmann::json j;
  j["engine"] = to_string(r.engine);
  if (r.format != OomFormat::unknown) {
    j["format"] = to_string(r.format);
  }
  put_value(j, "device", r.device);
  // vLLM v1: the KV cache needed is the request, the KV memory available what was free.
  const bool kv = r.kind == OomKind::kv_cache_too_small;
  put(j, "requested_gib", kv && !r.requested ? r.kv_cache_needed : r.requested);
  put(j, "total_gib", r.total);
  put(j, "free_gib", kv && !r.free ? r.kv_cache_available : r.free);
  put(j, "process_in_use_gib", r.process_in_use);
  put(j, "allocated_gib", r.allocated);
  put(j, "reserved_unallocated_gib", r.reserved_unallocated);
  put(j, "other_processes_gib", d.other_processes);
  put_value(j, "max_model_len", r.max_model_len);
  put_value(j, "kv_cache_tokens", r.kv_cache_tokens);
  put(j, "need_gib", d.need);
  j["causes"] = nlohmann::json::array();
  for (const auto c : d.causes) {
    j["causes"].push_back(to_string(c));
  }
  j["fixes"] = nlohmann::json::array();
  for (const auto& f : d.fixes) {
    nlohmann::json fix{{"id", f.id}, {"description", f.description}};
    if (!f.command.empty()) {
      fix["command"] = f.command;
    }
    j["fixes"].push_back(std::move(fix));
  }
  if (d.card) {
    nlohmann::json card{{"card", d.card->card}, {"vram_gib", round2(to_gib(d.card->usable))}, {"gpus", d.card->gpus}};
    if (!d.card->provider.empty()) {
      card["provider"] = d.card->provider;
    }
    if (d.card->price_per_hour) {
      card["price_per_hour"] = to_units(*d.card->price_per_hour, 6);
      card["currency"] = "USD";
    }
    j["card"] = std::move(card);
  }
  extras(j, r, d);
  return j;
}

}  // namespace gpurent
