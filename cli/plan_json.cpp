// SPDX-License-Identifier: MIT
#include "cli/plan_json.hpp"

#include <fmt/format.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/json_writer.hpp"
#include "common/rounding.hpp"
#include "providers/cloud_rules.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

using Json = nlohmann::ordered_json;

double gib(Bytes b) { return round2(to_gib(b)); }
double gib_signed(std::int64_t bytes)
{
  const double v = static_cast<double>(bytes) / static_cast<double>(k_gib);
  return round2(v);
}
double usd(MicroUsd m) { return to_units(m, 6); }
std::string str(std::string_view v) { return std::string(v); }

// The weights as the model's own files store them (safetensors or GGUF headers).
Json checkpoint_json(const CheckpointWeights& ck, WeightFormat job_weights)
{
  Json by_dtype = Json::object();
  for (const auto& [dtype, bytes] : ck.bytes_by_dtype) {
    by_dtype[dtype] = bytes;
  }
  const auto part = [](const WeightGroup& g) { return Json{{"params", g.params}, {"bytes", g.bytes}}; };
  return Json{{"source", ck.source},
              {"files", ck.files},
              {"format", ck.format_label},
              {"stored_as", ck.format ? Json(str(to_string(*ck.format))) : Json(nullptr)},
              {"as_stored", loads_as_stored(ck, job_weights)},
              {"bytes", ck.total_bytes()},
              {"gib", gib(Bytes{ck.total_bytes()})},
              {"file_bytes", ck.file_bytes},
              {"params", ck.total_params()},
              {"parts", Json{{"embedding", part(ck.embedding)}, {"linear", part(ck.linear)},
                             {"experts", part(ck.experts)}, {"other", part(ck.other)}}},
              {"outside_text_bytes", ck.outside_text_bytes},
              {"bytes_by_dtype", by_dtype},
              {"notes", ck.notes}};
}

Json model_json(const PlanReport& r)
{
  const ModelArch& m = r.result.job.model;
  Json j{{"name", m.name},       {"source", r.model_source},
         {"params", m.params},   {"layers", m.layers},
         {"hidden", m.hidden},   {"heads", m.heads},
         {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim},
         {"vocab", m.vocab},     {"intermediate", m.intermediate},
         {"experts", m.experts}, {"experts_active", m.experts_active},
         {"max_context", m.max_context}};
  if (m.checkpoint) {
    j["checkpoint"] = checkpoint_json(*m.checkpoint, weights_in_memory(r.result.job));
  }
  if (m.adapter) {
    j["adapter"] = Json{{"rank", m.adapter->rank},
                        {"params", m.adapter->weights.params},
                        {"bytes", m.adapter->weights.bytes},
                        {"target_modules", m.adapter->target_modules}};
  }
  for (const auto& a : m.approximate) {  // only for models read from generic keys
    j["approximate"].push_back(Json{{"part", a.part}, {"why", a.why}});
  }
  return j;
}

Json defaults_json(const std::vector<JobDefault>& defaults)
{
  Json out = Json::array();
  for (const auto& d : defaults) {
    Json value = d.value;
    if (d.kind == JobDefault::Kind::boolean) {
      value = d.value == "true";
    } else if (d.kind == JobDefault::Kind::number) {
      value = Json::parse(d.value, nullptr, false);
      if (value.is_discarded()) {
        value = d.value;
      }
    }
    out.push_back(Json{{"key", d.key}, {"value", value}, {"why", d.why}});
  }
  return out;
}

Json job_json(const JobSpec& j)
{
  Json out{{"task", str(to_string(j.task))},
              {"engine", str(to_string(j.engine))},
              {"weights", str(to_string(j.weights))},
              {"kv_cache", str(to_string(resolve_kv_dtype(j)))},
              {"context", j.context},
              {"batch", j.batch},
              {"optimizer", str(to_string(j.optimizer))},
              {"grad_checkpointing", j.grad_checkpointing},
              {"lora_rank", j.lora_rank},
              {"gpus", j.gpus},
              {"nodes", std::max<std::uint32_t>(j.nodes, 1)},
              {"shard", str(to_string(j.shard))},
              {"engine_version", engine_version_text(j.engine, j.engine_version != 0 ? j.engine_version
                                                     : j.engine == Engine::vllm    ? k_vllm_current_release
                                                     : j.engine == Engine::unsloth ? k_unsloth_current_release
                                                                                   : 0)}};
  if (j.offline_batch) {
    out["mode"] = "batch";  // cli.md plan v4: a batching engine's offline run over an input file
  }
  if (is_training(j.task)) {
    // cli.md plan v4: the micro-batch and whether plan chose it; the accumulation and packing the
    // flags gave (global batch = micro_batch x grad_accum x data-parallel GPUs).
    out["micro_batch"] = j.batch;
    out["micro_batch_chosen"] = j.micro_batch_chosen;
    out["grad_accum"] = std::max<std::uint32_t>(j.grad_accumulation, 1);
    out["pack"] = j.pack;
    out["compile"] = j.compile;
  }
  return out;
}

Json memory_json(const MemoryEstimate& m)
{
  return Json{{"weights_gib", gib(m.weights)},
              {"kv_cache_gib", gib(m.kv_cache)},
              {"activations_gib", gib(m.activations)},
              {"gradients_gib", gib(m.gradients)},
              {"optimizer_gib", gib(m.optimizer)},
              {"adapters_gib", gib(m.adapters)},
              {"overhead_gib", gib(m.overhead)},
              {"peak_allocated_gib", gib(m.peak_allocated())},
              {"total_gib", gib(m.total())}};
}

double rate(double tokens_per_s) { return round_to_places(tokens_per_s, 1); }

double hours_of(std::chrono::seconds s) { return round_to_places(static_cast<double>(s.count()) / 3600.0, 2); }

// The parts of the answer written once, by JsonWriter: the options are written straight to the
// output at every start (write_plan_json), and the document's other uses of the same parts (the
// choice, the recipe's speed, plan_to_json) read back what the writer wrote (as_json), so each
// part has one definition.

void write_string_map(JsonWriter& w, const std::map<std::string, std::string>& m)
{
  w.begin_object();
  for (const auto& [k, v] : m) {
    w.member(k, v);
  }
  w.end_object();
}

void write_strings(JsonWriter& w, const std::vector<std::string>& v)
{
  w.begin_array();
  for (const auto& s : v) {
    w.string(s);
  }
  w.end_array();
}

void write_runs(JsonWriter& w, const RunVerdict& v)
{
  w.begin_object();
  w.member("status", to_string(v.status));
  w.member("why", v.why);
  w.key("flags");
  write_string_map(w, v.flags);
  w.end_object();
}

// cli.md plan v3 `speed`: the figures that apply to the task, the binding term, the measured spread.
void write_speed(JsonWriter& w, const Speed& sp, const std::optional<std::uint64_t>& per_dollar)
{
  w.begin_object();
  if (sp.prefill_tokens_per_s) {
    w.member("prefill_tokens_per_s", rate(*sp.prefill_tokens_per_s));
  }
  if (sp.decode_tokens_per_s) {
    w.member("decode_tokens_per_s", rate(*sp.decode_tokens_per_s));
  }
  if (sp.serve_output_tokens_per_s) {
    w.member("serve_output_tokens_per_s", rate(*sp.serve_output_tokens_per_s));
  }
  if (sp.concurrency > 0) {
    w.member("concurrency", sp.concurrency);
    w.member("input_len", sp.input_len);
    w.member("output_len", sp.output_len);
  }
  if (sp.train_tokens_per_s) {
    w.member("train_tokens_per_s", rate(*sp.train_tokens_per_s));
  }
  if (per_dollar) {
    w.member("tokens_per_dollar", *per_dollar);
  }
  if (sp.network_step_s) {
    w.member("network_step_s", round_to_places(*sp.network_step_s, 3));
    w.member("compute_step_s", round_to_places(sp.compute_step_s.value_or(0.0), 3));
  }
  w.member_or_null("bound", sp.bound);
  if (sp.range_pct == k_range_unmeasured) {
    w.key("range_pct").null();  // too few measurements of the engine's own: `unknown` says so
  } else {
    w.member("range_pct", sp.range_pct);
  }
  w.member("basis", sp.basis);
  if (!sp.unknown.empty()) {
    w.key("unknown");
    write_strings(w, sp.unknown);
  }
  w.end_object();
}

// The option's speed, risk and, for a sized job, hours and bill.
void write_speed_fields(JsonWriter& w, const PlanOption& o)
{
  if (o.nodes > 1) {
    w.member("node_link", o.node_link);
  }
  w.key("speed");
  write_speed(w, o.speed, o.tokens_per_dollar);
  if (o.serve) {
    // cli.md plan v4: the workload on each replica and the service targets.
    w.key("serve").begin_object();
    w.member("replicas", o.serve->replicas);
    w.member("concurrency_per_replica", o.serve->per_replica);
    w.member("kv_pool_tokens", o.serve->kv_pool_tokens);
    w.member_or_null("per_user_tokens_per_s",
                     o.speed.per_user_tokens_per_s ? std::optional<double>(rate(*o.speed.per_user_tokens_per_s)) : std::nullopt);
    w.member_or_null("ttft_s", o.speed.ttft_s ? std::optional<double>(round_to_places(*o.speed.ttft_s, 2)) : std::nullopt);
    w.member_bool("meets_targets", o.serve->meets_targets);
    w.key("misses");
    write_strings(w, o.serve->misses);
    w.end_object();
  }
  w.member("risk", o.tight ? "tight" : "comfortable");
  if (o.hours) {
    w.member("hours", hours_of(*o.hours));
    w.member("startup_hours", hours_of(o.startup));
  }
  if (o.job_cost) {
    w.member("job_cost", usd(*o.job_cost));
  }
  if (o.late) {
    w.member_bool("late", true);
  }
}

// cli.md plan v4 "The whole market": the cloud's billing rule and where it is published.
void write_billing_rule(JsonWriter& w, const PlanOption& o)
{
  w.begin_object();
  w.member("increment_s", static_cast<std::int64_t>(o.billing_rule.increment.count()));
  w.member("minimum_s", static_cast<std::int64_t>(o.billing_rule.minimum.count()));
  w.member("source", billing_source_link(o.billing_source));
  w.end_object();
}

// Where the option is, whether gpurent rents it, and where the price comes from.
void write_market_fields(JsonWriter& w, const PlanOption& o)
{
  w.member("cloud", o.provider);
  w.member_or_null("region", o.region);
  w.member_bool("rentable", o.rentable);
  w.member("price_source", o.price_source);
  w.member_or_null("price_date", o.price_date);
  if (!o.instance_type.empty()) {
    w.member("instance_type", o.instance_type);
  }
  if (!o.upstream.empty()) {
    w.member("upstream", o.upstream);
  }
  if (o.gpu_only) {
    w.member_bool("gpu_only", true);
  }
  if (!o.rentable) {
    w.member("attach", fmt::format("gpurent attach --provider {} --card {} --gpus {} --host USER@HOST --name NAME",
                                   o.provider, o.card, o.gpus));
  }
}

void write_choice(JsonWriter& w, const PlanOption& c, bool with_speed)
{
  w.begin_object();
  w.member("provider", c.provider);
  w.member("card", c.card);
  w.member("vram_gib", gib(c.usable));
  w.member("gpus", c.gpus);
  w.member("nodes", c.nodes);
  w.member("headroom_gib", gib_signed(c.headroom));
  w.member("price_per_hour", usd(c.price_per_hour));
  w.member("currency", "USD");
  w.member("billing", c.billing);  // the label the contract names for the choice; the rule is billing_rule
  w.member("cost", usd(c.cost));
  w.key("runs");
  write_runs(w, c.runs);
  w.key("billing_rule");
  write_billing_rule(w, c);
  write_market_fields(w, c);
  if (with_speed) {
    write_speed_fields(w, c);
  }
  w.end_object();
}

void write_option(JsonWriter& w, const PlanOption& o)
{
  w.begin_object();
  w.member("provider", o.provider);
  w.member("card", o.card);
  w.member("gpus", o.gpus);
  w.member("nodes", o.nodes);
  w.member_bool("fits", o.fits);
  w.member("headroom_gib", gib_signed(o.headroom));
  w.member("price_per_hour", usd(o.price_per_hour));
  w.member("cost", usd(o.cost));
  w.key("billing");
  write_billing_rule(w, o);
  write_market_fields(w, o);
  w.key("runs");
  write_runs(w, o.runs);
  // cli.md plan v4: a row that does not fit or is refused shows no speed, hours or bill.
  if (o.fits && o.runs.status != RunStatus::refused) {
    write_speed_fields(w, o);
  } else if (o.nodes > 1) {
    w.member("node_link", o.node_link);
  }
  w.end_object();
}

// What `write` writes, as a document.
template <class Write>
Json as_json(Write&& write)
{
  std::string text;
  JsonWriter w(text);
  write(w);
  return Json::parse(text);
}

Json runs_json(const RunVerdict& v)
{
  return as_json([&](JsonWriter& w) { write_runs(w, v); });
}

Json speed_json(const Speed& sp, const std::optional<std::uint64_t>& per_dollar)
{
  return as_json([&](JsonWriter& w) { write_speed(w, sp, per_dollar); });
}

Json choice_json(const PlanOption& c, bool with_speed = false)
{
  return as_json([&](JsonWriter& w) { write_choice(w, c, with_speed); });
}

Json option_json(const PlanOption& o)
{
  return as_json([&](JsonWriter& w) { write_option(w, o); });
}

std::string_view rank_name(RankBy r)
{
  switch (r) {
  case RankBy::cost: return "cost";
  case RankBy::time: return "time";
  case RankBy::hourly: return "hourly";
  }
  return "hourly";
}

// cli.md plan v3 "The whole job": the size given, the ranking, and the choice's hours and bill.
void add_job_size(Json& job, const PlanReport& r)
{
  const JobSize& size = r.size;
  if (size.tokens) {
    job["tokens"] = *size.tokens;
    job["epochs"] = size.epochs;
  }
  if (size.requests) {
    job["requests"] = *size.requests;
  }
  job["rank_by"] = str(rank_name(r.result.ranked_by));
  if (r.deadline) {
    job["deadline_hours"] = hours_of(*r.deadline);
  }
  const auto& c = r.result.choice;
  job["hours"] = c && c->hours ? Json(hours_of(*c->hours)) : Json(nullptr);
  job["job_cost"] = c && c->job_cost ? Json(usd(*c->job_cost)) : Json(nullptr);
  if (c && c->hours) {
    job["startup"] = Json{{"hours", hours_of(c->startup)}, {"basis", r.startup_basis}};
    if (r.startup) {
      job["startup"]["download_bytes"] = static_cast<std::uint64_t>(r.startup->download_bytes);
      job["startup"]["download_source"] = r.startup->download_source;
      job["startup"]["download_bytes_per_s"] = static_cast<std::uint64_t>(k_download_bytes_per_s);
    }
  }
}

Json string_map(const std::map<std::string, std::string>& m)
{
  return as_json([&](JsonWriter& w) { write_string_map(w, m); });
}

Json recipe_json(const PlanRecipe& p)
{
  Json changes = Json::array();
  for (const auto& c : p.recipe.changes) {
    changes.push_back(Json{{"id", c.id}, {"from", c.from}, {"to", c.to}, {"saves_gib", gib(c.saves)}});
  }
  return Json{{"fits", p.recipe.fits},
              {"card", p.card},
              {"gpus", p.recipe.job.gpus},
              {"changes", changes},
              {"memory", memory_json(p.recipe.memory)},
              {"limit_gib", gib(p.recipe.limit)},
              {"job", job_json(p.recipe.job)},
              {"price_per_hour", p.price_per_hour ? Json(usd(*p.price_per_hour)) : Json(nullptr)},
              {"flags", string_map(p.recipe.flags)},
              {"launch", string_map(p.launch)},
              {"speed", speed_json(p.speed, std::nullopt)}};
}

Json fix_json(const Fix& f)
{
  return Json{{"id", f.id}, {"description", f.description}, {"saves_gib", gib(f.saves)}, {"flags", string_map(f.flags)}};
}

// The document; `options` left empty when `with_options` is false (write_plan_json streams them).
Json plan_document(const PlanReport& r, bool with_options)
{
  Json out;
  out["model"] = model_json(r);
  out["job"] = job_json(r.result.job);
  out["job"]["defaults"] = defaults_json(r.defaults);
  add_job_size(out["job"], r);
  out["memory"] = memory_json(r.result.memory);
  if (r.serve) {
    out["serve"] = Json{{"kv_pool_gib", gib(r.serve->kv_pool)},
                        {"kv_pool_tokens", r.serve->kv_pool_tokens},
                        {"max_concurrency", round2(r.serve->max_concurrency)}};
  }
  out["choice"] = r.result.choice ? choice_json(*r.result.choice, true) : Json(nullptr);
  if (!r.result.choice && r.result.card) {
    out["speed"] = speed_json(r.result.speed, std::nullopt);  // the given or closest card
  }
  if (!r.engines.empty()) {
    // Serving without --engine: each batching engine's best option for the same job; vs_choice is
    // what it delivers per dollar against the choice (planner/engine_compare.hpp).
    out["engines"] = Json::array();
    for (const auto& e : r.engines) {
      Json entry{{"engine", to_string(e.engine)}, {"chosen", e.chosen}};
      entry["option"] = e.best ? choice_json(*e.best, true) : Json(nullptr);
      if (!e.best) {
        entry["why_none"] = e.why_none;
      } else {
        entry["vs_choice"] = e.vs_choice ? Json(round2(*e.vs_choice)) : Json(nullptr);
      }
      out["engines"].push_back(std::move(entry));
    }
  }
  if (r.card_given && r.result.card) {
    // --card: how the engine runs the job on that card, even when nobody offers it or it is refused.
    out["card"] = Json{{"card", r.result.card->id}, {"compute_capability", compute_capability_text(*r.result.card)},
                       {"runs", runs_json(r.result.runs)}};
    if (r.refused()) {
      out["card"]["runs_elsewhere"] = r.runs_elsewhere ? choice_json(*r.runs_elsewhere) : Json(nullptr);
      // Another engine that runs the job natively on this card, with its launch line.
      if (const auto& h = r.runs_with) {
        out["card"]["runs_with"] = Json{{"engine", to_string(h->job.engine)}, {"weights", to_string(h->job.weights)},
                                        {"gpus", h->job.gpus}, {"memory", memory_json(h->memory)},
                                        {"runs", runs_json(h->runs)}, {"launch", string_map(h->launch)}};
      } else {
        out["card"]["runs_with"] = nullptr;
      }
    }
  }
  out["options"] = Json::array();
  for (const auto& o : r.result.options) {
    if (!with_options) {
      break;
    }
    out["options"].push_back(option_json(o));
  }
  out["fixes"] = Json::array();
  for (const auto& f : r.fixes) {
    out["fixes"].push_back(fix_json(f));
  }
  if (r.recipe) {
    out["recipe"] = recipe_json(*r.recipe);
  }
  out["launch"] = string_map(r.launch);
  return out;
}

// `value` dumped with indent 2 as it sits `depth` spaces in, appended to `out`: JSON strings hold
// no raw newline, so every line after the first moves right.
void append_nested(std::string& out, const Json& value, std::size_t depth)
{
  const std::string text = value.dump(2);
  std::size_t from = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.append(text, from, nl + 1 - from);
    out.append(depth, ' ');
    from = nl + 1;
  }
  out.append(text, from, std::string::npos);
}

}  // namespace

nlohmann::ordered_json plan_to_json(const PlanReport& r) { return plan_document(r, true); }

void write_plan_json(std::ostream& os, const PlanReport& r)
{
  const Json doc = plan_document(r, false);
  std::string chunk = "{";
  bool first = true;
  for (const auto& [key, value] : doc.items()) {
    chunk += first ? "\n  " : ",\n  ";
    chunk += Json(key).dump();
    chunk += ": ";
    first = false;
    if (key != "options" || r.result.options.empty()) {
      append_nested(chunk, value, 2);
      continue;
    }
    // One option's document at a time: the whole array is never held (plan's start-up).
    chunk += '[';
    for (std::size_t i = 0; i < r.result.options.size(); ++i) {
      chunk += i == 0 ? "\n    " : ",\n    ";
      JsonWriter w(chunk, 4);
      write_option(w, r.result.options[i]);
      os.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      chunk.clear();
    }
    chunk += "\n  ]";
  }
  chunk += first ? "}" : "\n}";
  os.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
}

}  // namespace gpurent
