// SPDX-License-Identifier: MIT
// Fuzz target for the small value parsers that read what people type and what headers say:
// the strict decimal and integer readers (common/text.hpp), compared with std::from_chars; the
// `plan` options (cli/plan_options.hpp: --params, --context, --hours, --max-price, --gpu-util,
// counts, the enum names and their combinations), carried on to the job and its memory
// estimate; Retry-After; stored status names; and the store's Unix times.
// Input: newline-separated values; line k is tried by every reader, and lines 0-16 also fill
// the plan options in order (the first byte's bits set the boolean flags).
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cli/plan_options.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "planner/rank.hpp"
#include "providers/provider.hpp"
#include "planner/speed.hpp"
#include "providers/state_store.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"

namespace {

bool has_inf_or_nan_letters(std::string_view s)
{
  return s.find_first_of("iInN") != std::string_view::npos;
}

void check_number_readers(std::string_view s)
{
  // parse_decimal takes exactly std::from_chars's grammar (without inf/nan) and its value.
  const auto d = gpurent::parse_decimal(s);
  if (s.size() < 128 && !has_inf_or_nan_letters(s)) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    const bool whole = p == s.data() + s.size() && (ec == std::errc{} || ec == std::errc::result_out_of_range);
    if (d.has_value() != whole) {
      std::abort();
    }
    if (d && (d->out_of_range != (ec == std::errc::result_out_of_range) ||
              (!d->out_of_range && std::memcmp(&d->value, &v, sizeof v) != 0))) {
      std::abort();
    }
  }
  if (const auto x = gpurent::parse_double(s); x && !(*x - *x == 0.0)) {
    std::abort();  // finite only
  }
  // parse_u64: the trimmed text, all digits, in range.
  const auto t = gpurent::trim(s);
  std::uint64_t u = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), u);
  const bool ok = !t.empty() && ec == std::errc{} && p == t.data() + t.size();
  const auto n = gpurent::parse_u64(s);
  if (n.has_value() != ok || (n && *n != u)) {
    std::abort();
  }
  if (const auto r = gpurent::parse_retry_after(s); r && (r->count() < 0 || r->count() > 86'400)) {
    std::abort();
  }
  if (const auto st = gpurent::parse_server_status(s); st && gpurent::to_string(*st) != s) {
    std::abort();
  }
}

void check_plan_values(std::string_view s)
{
  if (const auto v = gpurent::parse_param_count(s); v && (*v < 1'000'000 || *v > 100'000'000'000'000ULL)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_hours(s); v && (v->count() <= 0 || v->count() > 87'600LL * 3600)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_gpu_util(s); v && (*v == 0 || *v > 1000)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_usd_per_hour(s); v && (v->n <= 0 || v->n > 100'000LL * 1'000'000)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_context(s); v && (*v == 0 || *v > 16U * 1024 * 1024)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_count(s, "--batch", 1, 4096); v && (*v < 1 || *v > 4096)) {
    std::abort();
  }
  // The job's size and ranking (plan v3): counts 1 ..= 1e15, deadlines > 0 and at most 87600 h.
  if (const auto v = gpurent::parse_token_count(s, "--tokens"); v && (*v == 0 || *v > 1'000'000'000'000'000ULL)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_deadline(s); v && (v->count() <= 0 || v->count() > 87'600LL * 3600)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_rank_by(s); v && gpurent::parse_rank_by(std::string(s) + "x")) {
    std::abort();  // the whole word, never a prefix
  }
  // An engine release reads back as itself, and never as 0 ("current").
  // A llama.cpp build: 1 ..= 999999, and its text ("bN") reads back as itself.
  if (const auto v = gpurent::parse_llamacpp_build(s);
      v && (*v == 0 || *v > 999'999 ||
            gpurent::parse_llamacpp_build(gpurent::engine_version_text(gpurent::Engine::llama_cpp, *v)) != v)) {
    std::abort();
  }
  if (const auto v = gpurent::parse_engine_release(s);
      v && (*v == 0 || gpurent::parse_engine_release(gpurent::engine_release_text(*v)) != v)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const unsigned flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> lines;
  for (const auto line : gpurent::split(text, '\n')) {
    lines.emplace_back(line);
  }
  for (const auto& line : lines) {
    check_number_readers(line);
    check_plan_values(line);
  }

  // Unix times as the store keeps them, taken from the first 8 bytes.
  if (text.size() >= 8) {
    std::int64_t s = 0;
    std::memcpy(&s, text.data(), sizeof s);
    const auto t = gpurent::from_unix(s);
    const auto back = gpurent::to_unix(t);
    if (back != s && (s > -9'000'000'000LL && s < 9'000'000'000LL)) {
      std::abort();  // times the clock can hold (years -283 to 2255) come back unchanged
    }
  }

  // The plan options, as `gpurent plan` validates them, then the job and its estimate.
  lines.resize(26);
  gpurent::PlanArgs a;
  std::string* const fields[] = {&a.model,     &a.task,      &a.engine, &a.weights,  &a.kv_cache, &a.context,
                                 &a.batch,     &a.optimizer, &a.lora_rank, &a.gpus,  &a.shard,    &a.gpu_util,
                                 &a.card,      &a.provider,  &a.hours,  &a.max_price, &a.params,
                                 &a.tokens,    &a.epochs,    &a.requests, &a.input_len, &a.output_len,
                                 &a.concurrency, &a.rank_by, &a.deadline, &a.engine_version};
  for (std::size_t i = 0; i < std::size(fields); ++i) {
    *fields[i] = lines[i];
  }
  a.grad_checkpointing = (flags & 1U) != 0;
  a.spot = (flags & 2U) != 0;
  a.offline = (flags & 4U) != 0;
  const auto o = gpurent::validate_plan_args(a);
  if (!o) {
    // The documented answers: a usage error, or `unsupported` (exit 3, JSON "refused") for a
    // combination the provider does not offer (--spot with Lambda).
    if ((o.error().code != gpurent::Errc::usage && o.error().code != gpurent::Errc::unsupported) || o.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  if ((!a.provider.empty() && !gpurent::printable_ascii(a.provider)) || (!a.card.empty() && !gpurent::printable_ascii(a.card))) {
    std::abort();  // a name with control or non-ASCII bytes was read as a known one
  }
  gpurent::ModelArch model;
  if (o->params) {
    model.name = "params";
    model.params = *o->params;
  } else if (const auto* m = gpurent::find_model_ptr(o->model)) {
    model = *m;
  } else {
    return 0;  // a config.json or a Hub id: fuzz_model_config and fuzz_hf_hub read those
  }
  const auto job = gpurent::make_job(*o, model);
  if (!job) {
    if (job.error().code != gpurent::Errc::usage) {
      std::abort();
    }
    return 0;
  }
  const auto est = gpurent::estimate(*job);
  const auto total = est.total().n;
  for (const auto part : {est.weights, est.kv_cache, est.activations, est.gradients, est.optimizer, est.adapters, est.overhead}) {
    if (part.n > total) {
      std::abort();  // the total wrapped around
    }
  }
  if (est.weights.n == 0) {
    std::abort();
  }
  // Its speed on a card: every figure absent or a positive finite rate.
  const auto card = gpurent::find_card(o->request.card.value_or("h100-sxm"));
  if (card) {
    gpurent::JobSpec there = gpurent::job_for_gpus(*job, o->request.gpus.value_or(1), o->request.shard);
    const auto sp = gpurent::estimate_speed(there, *card, o->request.size.load);
    for (const auto& v : {sp.prefill_tokens_per_s, sp.decode_tokens_per_s, sp.serve_output_tokens_per_s,
                          sp.train_tokens_per_s}) {
      if (v && !(*v > 0.0 && *v < 1e15)) {
        std::abort();
      }
    }
  }
  return 0;
}
