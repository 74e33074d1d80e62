// SPDX-License-Identifier: MIT
// Layouts vLLM runs: tensor parallel divides the heads (and divides or is a multiple of the KV
// heads), else pipeline stages; group-quantized weights need whole groups per rank.
#include <catch2/catch.hpp>

#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

TEST_CASE("Layout: tensor parallel divides the attention heads and the KV heads", "[sizing][layout]")
{
  const ModelArch& llama70 = *find_model_ptr("llama-3.1-70b");  // 64 heads, 8 KV heads
  for (std::uint32_t tp : {1U, 2U, 4U, 8U}) {
    CHECK(tensor_parallel_ok(llama70, tp, WeightFormat::bf16));
  }
  for (std::uint32_t tp : {3U, 5U, 6U, 7U}) {
    CHECK_FALSE(tensor_parallel_ok(llama70, tp, WeightFormat::bf16));
  }
  const ModelArch& qwen7 = *find_model_ptr("qwen2.5-7b");  // 28 heads, 4 KV heads
  CHECK(tensor_parallel_ok(qwen7, 4, WeightFormat::bf16));
  CHECK_FALSE(tensor_parallel_ok(qwen7, 8, WeightFormat::bf16));  // 28 % 8
  CHECK(tensor_parallel_ok(qwen7, 7, WeightFormat::bf16) == false);  // 7 neither divides nor is a multiple of 4
  const ModelArch& gemma1 = *find_model_ptr("gemma-3-1b");  // 4 heads, 1 KV head: replicated
  CHECK(tensor_parallel_ok(gemma1, 4, WeightFormat::bf16));
  const ModelArch& ds = *find_model_ptr("deepseek-v3");  // MLA: 128 heads, one latent
  CHECK(tensor_parallel_ok(ds, 8, WeightFormat::fp8));
  // AWQ: o_proj and down_proj slices must be whole groups of 128 (Qwen2.5-72B: 29568 / 8 = 3696).
  const ModelArch& qwen72 = *find_model_ptr("qwen2.5-72b");
  CHECK(tensor_parallel_ok(qwen72, 8, WeightFormat::bf16));
  CHECK_FALSE(tensor_parallel_ok(qwen72, 2, WeightFormat::awq));
  // Qwen's published AWQ checkpoint pads the MLP to 29696 = 232 x 128 for exactly this reason.
  const ModelArch awq = for_checkpoint(qwen72, "Qwen/Qwen2.5-72B-Instruct-AWQ");
  CHECK(awq.intermediate == 29696);
  for (std::uint32_t tp : {2U, 4U, 8U}) {
    CHECK(tensor_parallel_ok(awq, tp, WeightFormat::awq));
  }
}

TEST_CASE("Layout: a GPU count the heads do not divide becomes pipeline stages", "[sizing][layout]")
{
  const ModelArch& llama70 = *find_model_ptr("llama-3.1-70b");
  const auto three = vllm_layout(llama70, 3, WeightFormat::bf16);
  REQUIRE(three);
  CHECK((three->tp == 1 && three->pp == 3));
  const auto six = vllm_layout(llama70, 6, WeightFormat::bf16);
  REQUIRE(six);
  CHECK((six->tp == 2 && six->pp == 3));
  const auto eight = vllm_layout(llama70, 8, WeightFormat::bf16);
  REQUIRE(eight);
  CHECK((eight->tp == 8 && eight->pp == 1));
  // The estimate follows the layout: each stage holds a third of the layers.
  JobSpec j;
  j.model = llama70;
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.gpus = 3;
  j.shard = Shard::tp;
  const auto laid = feasible_layout(j);
  REQUIRE(laid);
  CHECK(laid->pipeline == 3);
  CHECK(tp_degree(*laid) == 1);
  JobSpec one = j;
  one.gpus = 1;
  CHECK(to_gib(estimate(*laid).weights) == Approx(to_gib(estimate(one).weights) / 3).margin(0.01));
}

TEST_CASE("Layout: every catalogue model on 1 to 8 GPUs gets a layout vLLM runs", "[sizing][layout][property]")
{
  for (const ModelArch& m : model_catalog()) {
    for (std::uint32_t g = 1; g <= 8; ++g) {
      JobSpec j;
      j.model = m;
      j.task = Task::serve;
      j.engine = Engine::vllm;
      j.gpus = g;
      j.shard = g > 1 ? Shard::tp : Shard::none;
      const auto laid = feasible_layout(j);
      INFO(m.name << " on " << g);
      REQUIRE(laid);  // pipeline parallelism always works with at most one layer per stage
      const std::uint32_t tp = tp_degree(*laid);
      CHECK(tp * laid->pipeline == g);
      CHECK(tensor_parallel_ok(m, tp, WeightFormat::bf16));
      CHECK(laid->pipeline <= m.layers);
      // The largest feasible degree is used: no larger divisor of g would do.
      for (std::uint32_t bigger = tp + 1; bigger <= g; ++bigger) {
        if (g % bigger == 0) {
          CHECK_FALSE(tensor_parallel_ok(m, bigger, WeightFormat::bf16));
        }
      }
    }
  }
  // More GPUs than layers cannot be used by a layer split.
  JobSpec tiny;
  tiny.model.layers = 2;
  tiny.model.heads = 3;
  tiny.model.kv_heads = 3;
  tiny.task = Task::infer;
  tiny.engine = Engine::llama_cpp;
  tiny.gpus = 4;
  CHECK_FALSE(feasible_layout(tiny));
  tiny.engine = Engine::vllm;
  tiny.shard = Shard::tp;
  CHECK_FALSE(feasible_layout(tiny));  // 4 does not divide 3 heads and 4 stages > 2 layers
}
