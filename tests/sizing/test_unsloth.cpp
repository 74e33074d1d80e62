// SPDX-License-Identifier: MIT
// Unsloth's memory against its own published tables (tests/data/sizing/unsloth_tables.json, URL and
// quote per row; docs/sizing.md "Unsloth"): the longest context each card holds, and the minimum
// VRAM per method; and what the engine changes in the estimate (offloaded checkpoints, no logits).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

nlohmann::json tables()
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/sizing/unsloth_tables.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

JobSpec unsloth_job(const std::string& model, Task task, std::uint32_t context)
{
  const auto m = find_model(model);
  REQUIRE(m.has_value());
  JobSpec j;
  j.model = *m;
  j.task = task;
  j.engine = Engine::unsloth;
  j.weights = task == Task::qlora ? WeightFormat::nf4 : WeightFormat::bf16;
  j.context = context;
  j.grad_checkpointing = true;  // use_gradient_checkpointing="unsloth", its default
  return j;
}

double gib(Bytes b) { return static_cast<double>(b.n) / static_cast<double>(k_gib); }

}  // namespace

TEST_CASE("unsloth: the longest context of each card in Unsloth's table is what the card holds", "[unsloth]")
{
  // At the published longest context the job fills the card: the estimate is within 10% of the
  // card's memory (the table's "GB" read as the card's GiB; 80 GB A100s report 79.2 GiB).
  const nlohmann::json rows = tables().at("context_rows");
  REQUIRE(rows.size() == 9);
  for (const auto& row : rows) {
    JobSpec j = unsloth_job(row.at("model").get<std::string>(), Task::qlora, row.at("context").get<std::uint32_t>());
    j.lora_rank = 32;
    j.batch = 1;
    j.optimizer = Optimizer::adamw_8bit;
    const double total = gib(estimate(j).total());
    const double card = row.at("card_gb").get<double>();
    INFO(row.at("id").get<std::string>() << ": estimate " << total << " GiB at " << j.context << " tokens, card " << card);
    CHECK(std::abs(total / card - 1.0) <= 0.10);
  }
}

TEST_CASE("unsloth: each GiB of card holds the context Unsloth's table adds per GiB", "[unsloth]")
{
  // The slope between the table's smallest and largest card per model: tokens per GiB, within 5%.
  const nlohmann::json rows = tables().at("context_rows");
  for (const std::string model : {"llama-3.1-8b", "llama-3.3-70b"}) {
    const nlohmann::json* lo = nullptr;
    const nlohmann::json* hi = nullptr;
    for (const auto& row : rows) {
      if (row.at("model") != model) {
        continue;
      }
      lo = lo == nullptr || row.at("card_gb") < lo->at("card_gb") ? &row : lo;
      hi = hi == nullptr || row.at("card_gb") > hi->at("card_gb") ? &row : hi;
    }
    REQUIRE(lo != nullptr);
    REQUIRE(hi != lo);
    const double published = (hi->at("context").get<double>() - lo->at("context").get<double>()) /
                             (hi->at("card_gb").get<double>() - lo->at("card_gb").get<double>());
    JobSpec a = unsloth_job(model, Task::qlora, 10000);
    JobSpec b = unsloth_job(model, Task::qlora, 20000);
    const double per_gib = 10000.0 / (gib(estimate(b).total()) - gib(estimate(a).total()));
    INFO(model << ": " << per_gib << " tokens per GiB, Unsloth's table " << published);
    CHECK(std::abs(per_gib / published - 1.0) <= 0.05);
  }
}

TEST_CASE("unsloth: its minimum VRAM per method is near the estimate at its notebooks' context", "[unsloth]")
{
  // "the absolute minimum" with no context stated: the notebooks' max_seq_length = 2048, rank 16,
  // adamw_8bit. The table is not a measurement at one setting: its 8B LoRA row leaves 6 GB over a
  // 16 GB base, its 8B QLoRA row (6 GB) is below what its own context table needs at 2,972 tokens
  // (8 GB). So a band: the estimate within 25% of each row.
  const nlohmann::json rows = tables().at("minimum_rows");
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    const Task task = row.at("task") == "qlora" ? Task::qlora : Task::lora;
    JobSpec j = unsloth_job(row.at("model").get<std::string>(), task, 2048);
    j.optimizer = Optimizer::adamw_8bit;
    const double total_gb = static_cast<double>(estimate(j).total().n) / 1e9;
    const double min_gb = row.at("min_gb").get<double>();
    INFO(row.at("id").get<std::string>() << ": estimate " << total_gb << " GB, table " << min_gb << " GB");
    CHECK(std::abs(total_gb / min_gb - 1.0) <= 0.25);
  }
}

TEST_CASE("unsloth: offloaded checkpoints and fused cross-entropy keep activations to one layer", "[unsloth]")
{
  JobSpec u = unsloth_job("llama-3.1-8b", Task::qlora, 8192);
  JobSpec t = u;
  t.engine = Engine::transformers;
  const MemoryEstimate eu = estimate(u);
  const MemoryEstimate et = estimate(t);
  // transformers keeps every layer's input and the fp32 logits: several times more.
  CHECK(eu.activations.n * 4 < et.activations.n);
  // Unsloth loads the unquantized parameters in 16 bits (dtype=None: bf16), TRL in fp32.
  CHECK(eu.weights.n < et.weights.n);
  // The activations grow with the tokens and no longer with the layers' count.
  JobSpec longer = u;
  longer.context = 16384;
  CHECK(estimate(longer).activations.n == 2 * eu.activations.n);
  // Without checkpointing every layer keeps its activations (no offload).
  JobSpec kept = u;
  kept.grad_checkpointing = false;
  CHECK(estimate(kept).activations.n > 10 * eu.activations.n);
}

TEST_CASE("unsloth: calendar releases parse", "[unsloth]")
{
  CHECK(parse_engine_release("2026.8.19") == k_unsloth_current_release);
  CHECK(parse_engine_release("2025.3.7") == k_unsloth_first_multi_gpu);
  CHECK(engine_release_text(engine_release(2024, 11, 9)) == "2024.11.9");
  CHECK_FALSE(parse_engine_release("1999.1.1").has_value());  // not a year gpurent reads as a release
  CHECK_FALSE(parse_engine_release("4294.1.1").has_value());  // would not pack into 32 bits
  CHECK_FALSE(parse_engine_release("20261.1").has_value());
}
