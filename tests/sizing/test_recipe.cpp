// SPDX-License-Identifier: MIT
// The recipe search over the whole catalogue: a recipe that fits really fits, keeps the task's
// family, the card and the allowed GPU counts, adds up its savings, and uses no change it could
// drop; a job that fits needs no recipe.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"
#include "planner/recipe.hpp"

using namespace gpurent;

namespace {

struct Kind {
  Task task;
  Engine engine;
  WeightFormat weights;
};

const std::vector<Kind> k_kinds = {
    {Task::infer, Engine::transformers, WeightFormat::bf16}, {Task::serve, Engine::vllm, WeightFormat::bf16},
    {Task::infer, Engine::llama_cpp, WeightFormat::gguf_f16}, {Task::train, Engine::transformers, WeightFormat::bf16},
    {Task::lora, Engine::transformers, WeightFormat::bf16},  {Task::qlora, Engine::torchtune, WeightFormat::nf4},
};

bool fits(const JobSpec& j, Bytes usable) { return estimate(j).total() <= fit_limit_for(j, usable); }

void check_recipe(const JobSpec& asked, Bytes usable, const std::vector<std::uint32_t>& counts)
{
  const Recipe r = find_recipe(asked, usable, counts);
  INFO(asked.model.name << " " << to_string(asked.task) << " " << to_string(asked.engine) << " on "
                        << to_gib(usable) << " GiB x " << counts.size() << " counts");
  if (fits(asked, usable)) {
    CHECK(r.fits);
    CHECK(r.changes.empty());
    CHECK(r.points == 0);
    return;
  }
  CHECK(r.memory.total() == estimate(r.job).total());
  CHECK(r.limit == fit_limit_for(r.job, usable));
  CHECK(r.fits == (r.memory.total() <= r.limit));
  CHECK(is_training(r.job.task) == is_training(asked.task));
  if (asked.task == Task::lora) {
    CHECK((r.job.task == Task::lora || r.job.task == Task::qlora));  // never full fine-tuning
  } else if (asked.task != Task::train) {
    CHECK(r.job.task == asked.task);  // QLoRA stays QLoRA, inference stays inference
  }
  CHECK(r.job.context <= asked.context);
  CHECK(r.job.batch <= asked.batch);
  CHECK(feasible_layout(r.job).has_value());
  CHECK((r.job.gpus == asked.gpus || std::find(counts.begin(), counts.end(), r.job.gpus) != counts.end()));
  Bytes saved{};
  for (const auto& c : r.changes) {
    CHECK_FALSE(c.id.empty());
    CHECK(c.from != c.to);
    saved = saved + c.saves;
  }
  CHECK(saved == estimate(asked).total() - r.memory.total());
  if (!r.fits) {
    return;
  }
  CHECK_FALSE(r.changes.empty());
  // Least invasive: with only discrete changes, none of them can be dropped.
  const bool continuous = r.job.batch != asked.batch || r.job.context != asked.context || r.job.offload_bytes > 0;
  if (continuous) {
    return;
  }
  const auto still_fits = [&](JobSpec j) {
    const auto laid = feasible_layout(j);
    return laid && fits(*laid, usable);
  };
  if (r.job.kv_cache != asked.kv_cache) {
    JobSpec j = r.job;
    j.kv_cache = asked.kv_cache;
    CHECK_FALSE(still_fits(j));
  }
  if (r.job.optimizer != asked.optimizer) {
    JobSpec j = r.job;
    j.optimizer = asked.optimizer;
    CHECK_FALSE(still_fits(j));
  }
  if (r.job.grad_checkpointing != asked.grad_checkpointing && r.job.task != Task::qlora) {
    JobSpec j = r.job;
    j.grad_checkpointing = asked.grad_checkpointing;
    CHECK_FALSE(still_fits(j));
  }
  if (r.job.offload_optimizer) {
    JobSpec j = r.job;
    j.offload_optimizer = false;
    CHECK_FALSE(still_fits(j));
  }
}

}  // namespace

TEST_CASE("Recipe: every catalogue model, task and card", "[sizing][recipe][property]")
{
  const std::vector<double> cards = {14.56, 23.65, 79.25};
  const std::vector<std::uint32_t> one{1};
  const std::vector<std::uint32_t> any{1, 2, 3, 4, 5, 6, 7, 8};
  for (const ModelArch& m : model_catalog()) {
    for (const Kind& k : k_kinds) {
      JobSpec j;
      j.model = m;
      j.task = k.task;
      j.engine = k.engine;
      j.weights = k.weights;
      j.context = std::min<std::uint32_t>(4096, m.max_context);
      j.batch = k.task == Task::serve ? 8 : 2;
      j.grad_checkpointing = false;
      for (const double gib : cards) {
        check_recipe(j, gib_to_bytes(gib), one);
      }
      check_recipe(j, gib_to_bytes(23.65), any);
    }
  }
}

TEST_CASE("Recipe: the least invasive combination, in points", "[sizing][recipe]")
{
  JobSpec j;
  j.model = *find_model("gemma-2-27b");
  j.task = Task::lora;
  j.engine = Engine::transformers;
  j.context = 4096;
  const Recipe r = find_recipe(j, gib_to_bytes(23.65), std::vector<std::uint32_t>{1});
  REQUIRE(r.fits);
  REQUIRE_FALSE(r.changes.empty());
  CHECK(r.changes.front().id == "qlora");
  CHECK(r.job.task == Task::qlora);
  CHECK(r.job.weights == WeightFormat::nf4);
  CHECK(r.job.grad_checkpointing);
  REQUIRE(r.flags.count("transformers") == 1);
  CHECK(r.flags.at("transformers").find("--load_in_4bit") != std::string::npos);

  // Full fine-tuning of an 8B on 24 GB: LoRA with checkpointing (5 points) before QLoRA (7).
  JobSpec t;
  t.model = *find_model("llama-3.1-8b");
  t.task = Task::train;
  t.engine = Engine::transformers;
  t.context = 4096;
  const Recipe lora = find_recipe(t, gib_to_bytes(23.65), std::vector<std::uint32_t>{1});
  REQUIRE(lora.fits);
  CHECK(lora.job.task == Task::lora);
  CHECK(lora.job.grad_checkpointing);
  CHECK(lora.points == 5);

  // Batch 8 of a LoRA on an 80 GB card: checkpointing first; accumulation only when needed.
  JobSpec b = t;
  b.task = Task::lora;
  b.batch = 8;
  const Recipe acc = find_recipe(b, gib_to_bytes(23.65), std::vector<std::uint32_t>{1});
  REQUIRE(acc.fits);
  if (acc.job.batch < 8) {
    CHECK(acc.job.grad_accumulation * acc.job.batch >= 8);  // the same effective batch
  }

  // More GPUs when they are allowed and cheaper in points than quantizing.
  JobSpec s;
  s.model = *find_model("llama-3.1-70b");
  s.task = Task::serve;
  s.engine = Engine::vllm;
  s.context = 4096;
  const Recipe tp = find_recipe(s, gib_to_bytes(79.19), std::vector<std::uint32_t>{1, 2, 4, 8});
  REQUIRE(tp.fits);
  CHECK(tp.job.gpus == 2);
  CHECK(tp.job.weights == WeightFormat::bf16);

  // Nothing fits: the nearest, not fitting.
  JobSpec huge = t;
  huge.model = *find_model("llama-3.1-405b");
  const Recipe none = find_recipe(huge, gib_to_bytes(14.56), std::vector<std::uint32_t>{1});
  CHECK_FALSE(none.fits);
  CHECK(none.memory.total() > none.limit);
}

TEST_CASE("Recipe: vLLM's --gpu-memory-utilization is a lever, raised to 0.95 before anything slower", "[sizing][recipe]")
{
  // Llama 3.1 8B in bf16 on one card just too small for vLLM's default 0.90 share.
  JobSpec j;
  j.model = *find_model("llama-3.1-8b");
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.context = 4096;
  const Bytes usable = gib_to_bytes(17.6);  // 16.57 GiB needed: over 0.90 x 17.6 + 0.5, under 0.95 x 17.6
  const Recipe r = find_recipe(j, usable, std::vector<std::uint32_t>{1});
  REQUIRE(r.fits);
  CHECK(r.job.offload_bytes == 0);
  CHECK(std::any_of(r.changes.begin(), r.changes.end(), [](const RecipeChange& c) { return c.id == "gpu-util"; }));
  CHECK(r.job.gpu_util_permille == 950);
  CHECK(r.flags.at("vllm").find("--gpu-memory-utilization 0.95") != std::string::npos);
  // The user's own --gpu-util is theirs: never raised.
  JobSpec given = j;
  given.gpu_util_given = true;
  const Recipe g = find_recipe(given, usable, std::vector<std::uint32_t>{1});
  CHECK(g.job.gpu_util_permille == 900);
}

TEST_CASE("Recipe: weights offloaded to the CPU only when nothing without offload fits, and then as few as possible", "[sizing][recipe]")
{
  // 70B served on 2 x 22 GiB: FP8 plus many GiB offloaded fits, NF4 plus 1 GiB too; the second moves less.
  JobSpec j;
  j.model = *find_model("llama-3.1-70b");
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.context = 4096;
  j.gpus = 2;
  j.shard = Shard::tp;
  const Recipe r = find_recipe(j, gib_to_bytes(22.0), std::vector<std::uint32_t>{2});
  REQUIRE(r.fits);
  CHECK(r.job.offload_bytes > 0);
  CHECK(r.job.offload_bytes <= 4 * k_gib);
  CHECK(r.job.weights == WeightFormat::nf4);
  // With four cards allowed, the job fits without offload: that wins despite more points.
  const Recipe four = find_recipe(j, gib_to_bytes(22.0), std::vector<std::uint32_t>{2, 4});
  REQUIRE(four.fits);
  CHECK(four.job.offload_bytes == 0);
}
