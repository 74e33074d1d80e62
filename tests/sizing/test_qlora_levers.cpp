// SPDX-License-Identifier: MIT
// The QLoRA levers (docs/sizing.md "QLoRA levers"): 70B QLoRA on one 48 GB card, the
// best-known single-card fine-tune (tests/data/sizing/qlora_levers.json), does not fit as TRL
// runs it by default and fits at its full context once the recipe turns on 16-bit embeddings,
// paged 8-bit AdamW and activation offloading; each lever saves what its source says, and the
// recipe's launch line sets each one. Also: LoRA's adapter states sharded under FSDP/ZeRO.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>

#include "providers/card.hpp"
#include "sizing/estimate.hpp"
#include "planner/fixes.hpp"
#include "planner/launch.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"
#include "planner/recipe.hpp"

using namespace gpurent;

namespace {

nlohmann::json sources()
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/sizing/qlora_levers.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

JobSpec qlora_70b()
{
  JobSpec j;
  j.model = *find_model("llama-3.1-70b");
  j.task = Task::qlora;
  j.engine = Engine::transformers;
  j.weights = WeightFormat::nf4;
  j.grad_checkpointing = true;
  j.context = 4096;
  return j;
}

bool has_change(const Recipe& r, const std::string& id)
{
  return std::any_of(r.changes.begin(), r.changes.end(), [&](const RecipeChange& c) { return c.id == id; });
}

}  // namespace

TEST_CASE("70B QLoRA on one 48 GB card fits with the levers practitioners use, at the full context")
{
  const auto data = sources();
  const Card a6000 = *find_card("a6000");
  JobSpec job = qlora_70b();
  // As TRL runs it by default (fp32 embeddings, fp32 AdamW states, activations on the GPU): over.
  CHECK(estimate(job).total() > fit_limit_for(job, a6000.usable));
  const std::vector<std::uint32_t> counts{1};
  const Recipe r = find_recipe(job, a6000.usable, counts);
  REQUIRE(r.fits);
  CHECK(r.job.gpus == 1);
  CHECK(r.job.context == 4096);  // the levers, not a shorter context
  CHECK(r.job.task == Task::qlora);
  CHECK(has_change(r, "embeddings-16bit"));
  CHECK(has_change(r, "8bit-optimizer"));
  CHECK(has_change(r, "activation-offload"));
  CHECK_FALSE(has_change(r, "reduce-context"));
  // Every report of a 65-70B QLoRA on one 48 GB card is a card of that size: the A6000's 48 GB.
  for (const auto& report : data["reports"]) {
    CHECK(report["card_gib"].get<int>() == 48);
    CHECK(report["params_b"].get<int>() >= 65);
  }
  // The launch line of the recipe sets each lever with the flag its source names.
  const auto launch = launch_commands(r.job, "meta-llama/Llama-3.1-70B", a6000.usable).at("transformers");
  for (const auto& lever : data["levers"]) {
    if (lever["launch"].is_string()) {
      INFO(lever["id"].get<std::string>());
      CHECK(launch.find(lever["launch"].get<std::string>()) != std::string::npos);
    }
  }
  CHECK(r.flags.at("transformers").find("--dtype bfloat16") != std::string::npos);
}

TEST_CASE("each QLoRA lever saves what its mechanism holds")
{
  const JobSpec job = qlora_70b();
  const ParamBreakdown pb = count_params(job.model);
  const MemoryEstimate before = estimate(job);

  JobSpec emb = job;
  emb.embeddings_16bit = true;
  // Embeddings, lm_head and norms from 4 to 2 bytes: exactly 2 bytes each.
  CHECK(before.weights.n - estimate(emb).weights.n == (pb.embedding + pb.lm_head + pb.norms) * 2);
  CHECK(estimate(emb).activations == before.activations);

  JobSpec opt = job;
  opt.optimizer = Optimizer::adamw_8bit;
  // fp32 AdamW's 8 bytes per adapter parameter become 2.
  CHECK(estimate(opt).optimizer.n * 4 == before.optimizer.n);

  JobSpec act = job;
  act.activation_offload = true;
  const MemoryEstimate offloaded = estimate(act);
  // The 80 checkpointed layer inputs leave but 5 (TRL's forward stash): 75 x tokens x h x 2 B.
  CHECK(before.activations.n - offloaded.activations.n == 75ULL * 4096 * job.model.hidden * 2);
  CHECK(offloaded.weights == before.weights);

  // Only QLoRA has fp32 embeddings to shrink: the fix is not offered for LoRA or full training.
  const Bytes limit = Bytes{1};
  JobSpec lora = job;
  lora.task = Task::lora;
  lora.weights = WeightFormat::bf16;
  for (const Fix& f : suggest_fixes(lora, limit, {})) {
    CHECK(f.id != "embeddings-16bit");
  }
  bool offered = false;
  for (const Fix& f : suggest_fixes(job, limit, {})) {
    offered = offered || f.id == "embeddings-16bit";
  }
  CHECK(offered);
}

TEST_CASE("LoRA's adapters, gradients and optimizer states are sharded like the rest under FSDP/ZeRO")
{
  JobSpec one;
  one.model = *find_model("llama-3.1-70b");
  one.task = Task::lora;
  one.engine = Engine::transformers;
  one.weights = WeightFormat::bf16;
  one.grad_checkpointing = true;
  const MemoryEstimate single = estimate(one);
  const auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  for (const auto& [gpus, nodes] : {std::pair<std::uint32_t, std::uint32_t>{8, 1}, {8, 2}}) {
    JobSpec fsdp = one;
    fsdp.gpus = gpus;
    fsdp.nodes = nodes;
    fsdp.shard = Shard::fsdp;
    const MemoryEstimate m = estimate(fsdp);
    const std::uint64_t n = std::uint64_t{gpus} * nodes;
    INFO(gpus << " GPUs x " << nodes << " servers");
    CHECK(m.adapters.n == ceil_div(single.adapters.n, n));
    CHECK(m.gradients.n == ceil_div(single.gradients.n, n));
    CHECK(m.optimizer.n == ceil_div(single.optimizer.n, n));
  }
  JobSpec zero2 = one;
  zero2.engine = Engine::deepspeed;
  zero2.gpus = 4;
  zero2.shard = Shard::zero2;
  JobSpec ds1 = zero2;
  ds1.gpus = 1;
  ds1.shard = Shard::none;
  const MemoryEstimate z = estimate(zero2), d = estimate(ds1);
  CHECK(z.adapters == d.adapters);  // ZeRO-2 keeps the parameters whole
  CHECK(z.gradients.n == ceil_div(d.gradients.n, 4));
  CHECK(z.optimizer.n == ceil_div(d.optimizer.n, 4));
}
