// SPDX-License-Identifier: MIT
// Serving engines side by side (planner/engine_compare.hpp): what "delivers more per dollar" means
// and when the plan says so.
#include <catch2/catch.hpp>

#include "planner/engine_compare.hpp"

using namespace gpurent;

namespace {

PlanOption option(std::optional<std::uint64_t> per_dollar, std::optional<std::int64_t> bill_usd = std::nullopt)
{
  PlanOption o;
  o.card = "h100-sxm";
  o.card_display = "H100 SXM 80GB";
  o.provider = "runpod";
  o.gpus = 1;
  o.tokens_per_dollar = per_dollar;
  if (bill_usd) {
    o.job_cost = MicroUsd{*bill_usd * 1000000};
  }
  o.speed.range_pct = 40;
  return o;
}

EngineOption entry(Engine e, bool chosen, std::optional<PlanOption> best, std::optional<double> vs)
{
  EngineOption x;
  x.engine = e;
  x.chosen = chosen;
  x.best = std::move(best);
  x.vs_choice = vs;
  return x;
}

}  // namespace

TEST_CASE("Engines: per dollar against the choice, unsized and sized", "[planner][engines]")
{
  CHECK(delivery_ratio(option(1'500'000), option(1'000'000)).value() == Approx(1.5));
  // Sized: the choice's bill over the other's (a smaller bill delivers more).
  CHECK(delivery_ratio(option(std::nullopt, 80), option(std::nullopt, 100)).value() == Approx(1.25));
  CHECK_FALSE(delivery_ratio(option(std::nullopt), option(1'000'000)).has_value());
}

TEST_CASE("Engines: the note names an engine only when it delivers at least 1.1x", "[planner][engines]")
{
  const PlanOption mine = option(1'000'000);
  std::vector<EngineOption> engines{entry(Engine::vllm, true, mine, 1.0),
                                    entry(Engine::sglang, false, option(1'050'000), 1.05),
                                    entry(Engine::tensorrt_llm, false, option(1'080'000), 1.08)};
  CHECK_FALSE(engine_note(engines).has_value());
  engines[2] = entry(Engine::tensorrt_llm, false, option(1'600'000), 1.6);
  const auto note = engine_note(engines);
  REQUIRE(note.has_value());
  CHECK(note->find("TensorRT-LLM on 1 x H100 SXM 80GB (runpod) serves 1.6x") == 0);
  CHECK(note->find("--engine trtllm") != std::string::npos);
  CHECK(note->find("40% and 40%") != std::string::npos);  // both speeds' measured spread
  // The largest wins; an engine without an option is never named.
  engines[1] = entry(Engine::sglang, false, option(2'000'000), 2.0);
  CHECK(engine_note(engines)->find("SGLang") == 0);
  engines[1] = entry(Engine::sglang, false, std::nullopt, std::nullopt);
  CHECK(engine_note(engines)->find("TensorRT-LLM") == 0);
  // No choice: nothing to compare with.
  engines[0] = entry(Engine::vllm, true, std::nullopt, std::nullopt);
  CHECK_FALSE(engine_note(engines).has_value());
}

TEST_CASE("Engines: a sized job's note speaks of the bill", "[planner][engines]")
{
  const std::vector<EngineOption> engines{entry(Engine::vllm, true, option(std::nullopt, 100), 1.0),
                                          entry(Engine::tensorrt_llm, false, option(std::nullopt, 60), 100.0 / 60)};
  const auto note = engine_note(engines);
  REQUIRE(note.has_value());
  CHECK(note->find("runs the job for $60.00, 0.60x the choice's bill ($100.00 on vLLM)") != std::string::npos);
}
