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

namespace {

JobSpec serve_on(const ModelArch& m, std::uint32_t gpus, WeightFormat w)
{
  JobSpec j;
  j.model = m;
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.weights = w;
  j.gpus = gpus;
  j.shard = gpus > 1 ? Shard::tp : Shard::none;
  return j;
}

}  // namespace

TEST_CASE("Layout: block-FP8 checkpoints need whole 128 x 128 blocks per rank", "[sizing][layout][fp8]")
{
  // Qwen3-30B-A3B-FP8: moe_intermediate_size 768 / 4 = 192 is not a multiple of block_n 128
  // (vLLM: "The output_size of gate's and up's weight = 192 is not divisible by weight
  // quantization block_n = 128"); 768 / 2 = 384 is.
  const ModelArch q30 = for_checkpoint(*find_model_ptr("qwen3-30b-a3b"), "Qwen/Qwen3-30B-A3B-FP8");
  REQUIRE(q30.quant_block_n == 128);
  REQUIRE(q30.quant_block_k == 128);
  CHECK(checkpoint_format(q30) == WeightFormat::fp8);
  CHECK_FALSE(tensor_parallel_ok(q30, 4, WeightFormat::fp8));
  CHECK(tensor_parallel_ok(q30, 2, WeightFormat::fp8));
  CHECK_FALSE(tensor_parallel_ok(q30, 8, WeightFormat::fp8));  // 768 / 8 = 96
  const std::string why = tensor_parallel_refusal(q30, 4, WeightFormat::fp8);
  CHECK(why.find("768 / 4 = 192") != std::string::npos);
  CHECK(why.find("block_n") != std::string::npos);
  CHECK(tensor_parallel_refusal(q30, 2, WeightFormat::fp8).empty());
  const auto four = vllm_layout(q30, 4, WeightFormat::fp8);
  REQUIRE(four);
  CHECK((four->tp == 2 && four->pp == 2));
  const auto laid = feasible_layout(serve_on(q30, 4, WeightFormat::fp8));
  REQUIRE(laid);
  CHECK(tp_degree(*laid) == 2);
  CHECK(laid->pipeline == 2);

  // Qwen3-235B-A22B-FP8: 1536 / 8 = 192 refused, 1536 / 4 = 384 runs: 8 GPUs are TP 4 x PP 2.
  const ModelArch q235 = for_checkpoint(*find_model_ptr("qwen3-235b-a22b"), "Qwen/Qwen3-235B-A22B-FP8");
  CHECK_FALSE(tensor_parallel_ok(q235, 8, WeightFormat::fp8));
  CHECK(tensor_parallel_ok(q235, 4, WeightFormat::fp8));
  const auto eight = vllm_layout(q235, 8, WeightFormat::fp8);
  REQUIRE(eight);
  CHECK((eight->tp == 4 && eight->pp == 2));

  // DeepSeek-V3 (block 128): intermediate 18432 / 8 = 2304, moe 2048 / 8 = 256, shared 2048,
  // o_proj 128 x v_head_dim 128 / 8 = 2048, kv_b 128 x 256 / 8: all whole blocks at TP 8.
  const ModelArch& ds = *find_model_ptr("deepseek-v3");
  CHECK(ds.quant_block_n == 128);
  CHECK(checkpoint_format(ds) == WeightFormat::fp8);
  CHECK(tensor_parallel_ok(ds, 8, WeightFormat::fp8));
  CHECK(tensor_parallel_ok(ds, 16, WeightFormat::fp8));       // 18432 / 16 = 1152, 2048 / 16 = 128
  // TP 32: the dense MLP's 18432 / 32 = 576 rows per rank (sglang #3345), and the experts' 64.
  CHECK_FALSE(tensor_parallel_ok(ds, 32, WeightFormat::fp8));
  CHECK(tensor_parallel_refusal(ds, 32, WeightFormat::fp8).find("18432 / 32 = 576") != std::string::npos);
  const auto ds8 = vllm_layout(ds, 8, WeightFormat::fp8);
  REQUIRE(ds8);
  CHECK((ds8->tp == 8 && ds8->pp == 1));

  // The bf16 checkpoint quantized online (--weights fp8 -> vLLM --quantization fp8, per-tensor
  // scales) has no block: TP 4 stays.
  const ModelArch& bf16 = *find_model_ptr("qwen3-30b-a3b");
  CHECK(bf16.quant_block_n == 0);
  CHECK(tensor_parallel_ok(bf16, 4, WeightFormat::fp8));
  const auto online = feasible_layout(serve_on(bf16, 4, WeightFormat::fp8));
  REQUIRE(online);
  CHECK(tp_degree(*online) == 4);
  CHECK(online->pipeline == 1);
  // The block binds the fp8 weights only: the same model sized as bf16 is judged by its heads.
  CHECK(tensor_parallel_ok(q30, 4, WeightFormat::bf16));
}

TEST_CASE("Layout: a sub-block KV head, expert or dense MLP is refused too", "[sizing][layout][fp8]")
{
  // Qwen3-8B (32 heads, 8 KV heads of 128) with a head_dim of 64: at TP 8 each rank's K slice
  // is one head of 64 columns, half a block.
  ModelArch m = *find_model_ptr("qwen3-8b");
  m.quant_block_n = 128;
  m.quant_block_k = 128;
  CHECK(tensor_parallel_ok(m, 8, WeightFormat::fp8));
  m.head_dim = 64;
  CHECK(tensor_parallel_ok(m, 4, WeightFormat::fp8));  // q 32 x 64 / 4 = 512, k 8 x 64 / 4 = 128
  CHECK_FALSE(tensor_parallel_ok(m, 8, WeightFormat::fp8));
  CHECK(tensor_parallel_refusal(m, 8, WeightFormat::fp8).find("k_proj") != std::string::npos);
  // 512-wide experts (Qwen3.6-35B-A3B-FP8 in vLLM #52915: 512 / 8 = 64, "input_size_per_partition
  // = 64 is not divisible by weight quantization block_k = 128"): TP 4 runs, TP 8 does not.
  ModelArch moe = *find_model_ptr("qwen3-30b-a3b");
  moe.quant_block_n = 128;
  moe.quant_block_k = 128;
  moe.moe_intermediate = 1024;
  CHECK(tensor_parallel_ok(moe, 8, WeightFormat::fp8));
  moe.moe_intermediate = 512;
  moe.shared_experts = 1;
  CHECK(tensor_parallel_ok(moe, 4, WeightFormat::fp8));
  CHECK_FALSE(tensor_parallel_ok(moe, 8, WeightFormat::fp8));
  // A dense MLP before the experts (DeepSeek first_k_dense_replace) is sliced too.
  moe.moe_intermediate = 1024;
  moe.dense_layers = 1;
  moe.intermediate = 6144 + 64;
  CHECK_FALSE(tensor_parallel_ok(moe, 2, WeightFormat::fp8));
  CHECK(tensor_parallel_refusal(moe, 2, WeightFormat::fp8).find("intermediate_size") != std::string::npos);
  moe.dense_layers = 0;
  CHECK(tensor_parallel_ok(moe, 2, WeightFormat::fp8));
  // Unequal blocks: block_k binds the row-parallel (input) side only.
  ModelArch wide = *find_model_ptr("qwen3-30b-a3b");
  wide.quant_block_n = 64;
  wide.quant_block_k = 256;
  CHECK_FALSE(tensor_parallel_ok(wide, 2, WeightFormat::fp8));  // down_proj input 384 % 256
  CHECK(tensor_parallel_refusal(wide, 2, WeightFormat::fp8).find("block_k") != std::string::npos);
  wide.quant_block_k = 128;
  CHECK(tensor_parallel_ok(wide, 2, WeightFormat::fp8));
}

TEST_CASE("Layout: every block-FP8 layout vLLM is given has whole blocks on every rank", "[sizing][layout][fp8][property]")
{
  // Each catalogue model as a block-FP8 checkpoint of 128 x 128 on 1 to 16 GPUs: the layout
  // chosen slices every width into whole blocks, and no larger divisor of the GPU count would.
  for (ModelArch m : model_catalog()) {
    m.quant_block_n = 128;
    m.quant_block_k = 128;
    for (std::uint32_t g = 1; g <= 16; ++g) {
      const auto laid = feasible_layout(serve_on(m, g, WeightFormat::fp8));
      INFO(m.name << " on " << g);
      REQUIRE(laid);
      const std::uint32_t tp = tp_degree(*laid);
      CHECK(tp * laid->pipeline == g);
      CHECK(tensor_parallel_ok(m, tp, WeightFormat::fp8));
      CHECK(tensor_parallel_refusal(m, tp, WeightFormat::fp8).empty());
      const std::uint64_t mlp = m.is_moe() ? m.moe_intermediate : m.intermediate;
      if (tp > 1) {
        CHECK(mlp % tp == 0);
        CHECK((mlp / tp) % 128 == 0);
      }
      for (std::uint32_t bigger = tp + 1; bigger <= g; ++bigger) {
        if (g % bigger == 0) {
          CHECK_FALSE(tensor_parallel_ok(m, bigger, WeightFormat::fp8));
          CHECK_FALSE(tensor_parallel_refusal(m, bigger, WeightFormat::fp8).empty());
        }
      }
    }
  }
}

TEST_CASE("Layout: SGLang serves over 2 to 4 servers as one tensor-parallel group", "[sizing][layout][nodes]")
{
  // docs.sglang.io: Llama 3.1 405B in BF16 on two servers (--tp 16 --nnodes 2), DeepSeek-V3 on
  // 2 x 8 H100 (FP8) and 4 x 8 A100 (BF16).
  JobSpec j;
  j.model = *find_model_ptr("deepseek-v3");
  j.task = Task::serve;
  j.engine = Engine::sglang;
  j.weights = WeightFormat::fp8;
  j.gpus = 8;
  j.shard = Shard::tp;
  // FP8 on 2 servers; BF16 on 4 (FP8's 128 x 128 blocks do not split 32 ways: 2048 / 32 = 64).
  CHECK_FALSE(layout_on(j, 8, 4, Shard::tp).has_value());
  for (std::uint32_t nodes : {2U, 4U}) {
    INFO(nodes << " servers");
    j.nodes = nodes;
    j.weights = nodes == 2 ? WeightFormat::fp8 : WeightFormat::bf16;
    const auto l = layout_on(j, j.gpus, nodes, j.shard);
    REQUIRE(l.has_value());
    CHECK(l->pipeline == 1);
    CHECK(l->nodes == nodes);
    CHECK(servers_refusal(j, nodes).empty());
  }
  // 3 x 8 = 24 ranks do not divide its 128 heads.
  CHECK_FALSE(layout_on(j, 8, 3, Shard::tp).has_value());
  j.nodes = 2;
  j.weights = WeightFormat::fp8;
  CHECK(tp_degree(*feasible_layout(j)) == 16);  // every GPU of both servers in the group
  JobSpec one = j;
  one.nodes = 1;
  // Each GPU holds a 16th of the weights, half of what one server's 8 do (up to rounding).
  const auto across = estimate(*feasible_layout(j)).weights.n;
  const auto inside = estimate(one).weights.n;
  CHECK(across * 2 <= inside + 2);
  CHECK(across * 2 + 2 >= inside);
  // A fifth server: refused, and why.
  CHECK_FALSE(layout_on(j, 8, 5, Shard::tp).has_value());
  CHECK(servers_refusal(j, 5).find("at most 4 servers") != std::string::npos);
  // Heads that do not split over every GPU (llama-3.1-405b: 128 heads, 8 KV heads; 3 x 8 = 24).
  JobSpec big = j;
  big.model = *find_model_ptr("llama-3.1-405b");
  big.weights = WeightFormat::bf16;
  CHECK(layout_on(big, 8, 2, Shard::tp).has_value());
  CHECK_FALSE(layout_on(big, 8, 3, Shard::tp).has_value());
  // SGLang's offline batch stays on one server; llama.cpp never spans servers.
  JobSpec batch = j;
  batch.task = Task::infer;
  batch.offline_batch = true;
  CHECK_FALSE(layout_on(batch, 8, 2, Shard::tp).has_value());
  CHECK(servers_refusal(batch, 2).find("offline batch") != std::string::npos);
  JobSpec llama = j;
  llama.engine = Engine::llama_cpp;
  llama.shard = Shard::layer;
  CHECK_FALSE(layout_on(llama, 8, 2, Shard::layer).has_value());
  CHECK(servers_refusal(llama, 2).find("runs on one server") != std::string::npos);
}
