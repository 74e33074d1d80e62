// SPDX-License-Identifier: MIT
// Unsloth's speed: its published factor over Hugging Face + FA2 (tests/data/speed/unsloth_factors.json,
// URL and quote per row) on the trainers' utilisation, never past the trainers' fitted peak
// (docs/speed.md "Unsloth").
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "planner/speed.hpp"
#include "providers/card.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec qlora(const std::string& model, Engine engine, std::uint32_t context)
{
  const ModelArch* m = find_model_ptr(model);
  REQUIRE(m != nullptr);
  JobSpec j;
  j.model = *m;
  j.task = Task::qlora;
  j.engine = engine;
  j.weights = WeightFormat::nf4;
  j.context = context;
  j.grad_checkpointing = true;
  return j;
}

}  // namespace

TEST_CASE("speed: Unsloth trains its published factor faster than the trainers, up to their peak", "[speed][unsloth]")
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/speed/unsloth_factors.json");
  REQUIRE(in.good());
  const nlohmann::json rows = nlohmann::json::parse(in).at("rows");
  REQUIRE(rows.size() == 2);
  const auto card = find_card("a100-80gb-sxm");  // the tables' 80 GB GPU
  REQUIRE(card);
  for (const auto& row : rows) {
    const std::string model = row.at("model").get<std::string>();
    const double factor = row.at("factor").get<double>();
    for (const std::uint32_t context : {256U, 512U, 2048U, 4096U, 16384U}) {
      const Speed hf = estimate_speed(qlora(model, Engine::transformers, context), *card, {});
      const Speed us = estimate_speed(qlora(model, Engine::unsloth, context), *card, {});
      REQUIRE(hf.train_tokens_per_s.has_value());
      REQUIRE(us.train_tokens_per_s.has_value());
      INFO(model << " at " << context << " tokens: " << *us.train_tokens_per_s << " vs " << *hf.train_tokens_per_s
                 << " tokens/s, utilisation " << hf.train_utilisation);
      // Compute-bound on an A100 (the offloaded layer inputs' copies are far shorter than the step).
      CHECK(us.bound == "compute");
      const double expected = std::min(factor, 1.0 / hf.train_utilisation);
      CHECK(*us.train_tokens_per_s / *hf.train_tokens_per_s == Approx(expected).epsilon(1e-9));
      CHECK(us.train_utilisation <= 1.0);
      CHECK(us.train_utilisation == Approx(std::min(1.0, hf.train_utilisation * factor)).epsilon(1e-12));
    }
  }
}
