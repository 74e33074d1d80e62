// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <limits>

#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;

namespace {

ModelArch model(std::string_view name)
{
  const auto m = find_model(name);
  REQUIRE(m.has_value());
  return *m;
}

JobSpec job_of(std::string_view name, Task task, Engine engine, WeightFormat w = WeightFormat::bf16)
{
  JobSpec j;
  j.model = model(name);
  j.task = task;
  j.engine = engine;
  j.weights = w;
  return j;
}

// A tiny dense model whose numbers are easy to follow by hand.
ModelArch toy()
{
  ModelArch m;
  m.name = "toy";
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 1;
  m.head_dim = 4;
  m.intermediate = 16;
  m.vocab = 32;
  m.global_layers = 2;
  return m;
}

}  // namespace

TEST_CASE("Estimate: llama.cpp Q8_0 Llama-3.1-8B at 8k context, computed by hand", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q8_0);
  j.context = 8192;
  const MemoryEstimate e = estimate(j);
  // Weights: every 2-D tensor in Q8_0 (34 B per 32 weights), the 65 norms of 4096 in F32:
  // (8,030,261,248 - 266,240) x 34 / 32 + 266,240 x 4 = 8,532,934,656 B (the README's 7.95 GiB),
  // less token_embd, which llama.cpp keeps in host memory: 128,256 x 4,096 x 34 / 32 = 558,170,112.
  CHECK(e.weights.n == 8'532'934'656ULL - 558'170'112ULL);
  // KV: 2 (K,V) x 32 layers x 8 KV heads x 128 head_dim x 2 B (f16) x 8192 tokens = 1 GiB.
  CHECK(e.kv_cache.n == 1'073'741'824ULL);
  // Compute buffer with flash attention, the larger of two points of the graph: in attention, 4 fp32
  // hidden tensors of the 512-token ubatch (4 x 512 x 4096 x 4 = 33,554,432) + one f16 K/V view
  // over n_ctx (8192 x 1024 x 2 = 16,777,216) = 50,331,648; at the output, the fp32 logits and
  // hidden states of the ubatch: 512 x (128,256 + 4,096) x 4 = 271,056,896.
  CHECK(e.activations.n == 271'056'896ULL);
  // No training terms; one CUDA context, no allocator slack under ggml.
  CHECK(e.gradients.n == 0);
  CHECK(e.optimizer.n == 0);
  CHECK(e.adapters.n == 0);
  CHECK(e.overhead.n == k_cuda_context_bytes);
  CHECK(e.total().n == 8'532'934'656ULL - 558'170'112ULL + 1'073'741'824ULL + 271'056'896ULL + k_cuda_context_bytes);
  // Without flash attention the fp32 KQ matrix adds 512 x 32 heads x 8192 x 4 B = 512 MiB.
  j.flash_attention = false;
  CHECK(estimate(j).activations.n == 50'331'648ULL + 536'870'912ULL);
}

TEST_CASE("Estimate: transformers full fine-tune holds 16 bytes per parameter, computed by hand", "[sizing][estimate]")
{
  JobSpec j;
  j.model = toy();
  j.task = Task::train;
  j.engine = Engine::transformers;
  j.context = 4;
  j.batch = 1;
  const ParamBreakdown pb = count_params(j.model);
  // embedding 32x8 = 256, lm_head 256, attention 2 x (8x8 + 8x4 + 8x4 + 8x8) = 384,
  // MLP 2 x 3 x 8 x 16 = 768, norms (2 x 2 + 1) x 8 = 40: 1704 parameters.
  REQUIRE(pb.total == 1704);
  const MemoryEstimate e = estimate(j);
  CHECK(e.weights.n == 1704 * 4);    // fp32 master weights
  CHECK(e.gradients.n == 1704 * 4);  // fp32 gradients
  CHECK(e.optimizer.n == 1704 * 8);  // AdamW exp_avg + exp_avg_sq in fp32
  // Activations per token per layer (elements): 4h (norm/proj inputs) + q 8 + k 4 + v 4 + o 8
  // + 4 x 16 (gate, up, act, down input) = 32 + 24 + 64 = 120, x 2 layers x 4 tokens x 2 B = 1920;
  // logits: 4 tokens x 32 vocab x 8 B (fp32 logits + softmax) = 1024.
  CHECK(e.activations.n == 1920 + 1024);
  // With checkpointing: each layer keeps its input (8) + one layer recomputed (120):
  // (2 x 8 + 120) x 4 tokens x 2 B = 1088, plus the logits.
  j.grad_checkpointing = true;
  CHECK(estimate(j).activations.n == 1088 + 1024);
  // torchtune: pure bf16, 2 + 2 + 4 bytes per parameter.
  j.engine = Engine::torchtune;
  const MemoryEstimate t = estimate(j);
  CHECK(t.weights.n == 1704 * 2);
  CHECK(t.gradients.n == 1704 * 2);
  CHECK(t.optimizer.n == 1704 * 4);
  // DeepSpeed (ZeRO paper): 2 + 2 + 12 bytes.
  j.engine = Engine::deepspeed;
  const MemoryEstimate d = estimate(j);
  CHECK(d.weights.n + d.gradients.n + d.optimizer.n == 1704 * 16);
  CHECK(d.optimizer.n == 1704 * 12);
}

TEST_CASE("Estimate: optimizers change the state bytes", "[sizing][estimate]")
{
  JobSpec j;
  j.model = toy();
  j.task = Task::train;
  j.engine = Engine::transformers;
  const auto opt = [&](Optimizer o) {
    j.optimizer = o;
    return estimate(j).optimizer.n;
  };
  CHECK(opt(Optimizer::adamw) == 1704 * 8);
  CHECK(opt(Optimizer::adamw_8bit) == 1704 * 2);
  CHECK(opt(Optimizer::sgd) == 1704 * 4);
  // Adafactor: rows + cols per matrix, 2 layers x (q 16 + k 12 + v 12 + o 16 + 3 x 24) = 256,
  // plus the norm vectors kept whole (40), in fp32.
  CHECK(opt(Optimizer::adafactor) == (256 + 40) * 4);
}

TEST_CASE("Estimate: tensor parallel divides weights and KV heads, replicating them past kv_heads", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-70b", Task::serve, Engine::vllm);
  j.context = 8192;
  const MemoryEstimate one = estimate(j);
  j.gpus = 2;
  const MemoryEstimate two = estimate(j);
  CHECK(two.weights.n == (one.weights.n + 1) / 2);
  CHECK(two.kv_cache.n * 2 == one.kv_cache.n);
  CHECK(two.overhead.n == k_cuda_context_bytes + k_vllm_non_torch_multi);
  // 8 KV heads: at TP 8 each GPU keeps one head; there is no smaller share than one head.
  JobSpec q = job_of("qwen3-235b-a22b", Task::serve, Engine::vllm, WeightFormat::fp8);  // 4 KV heads
  q.gpus = 4;
  const Bytes tp4 = kv_bytes_per_token(q);
  q.gpus = 8;
  CHECK(kv_bytes_per_token(q) == tp4);
  CHECK(tp4.n == 2ULL * q.model.layers * 1 * q.model.head_dim * 2);
}

TEST_CASE("Estimate: FSDP and ZeRO stages shard what they shard", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::train, Engine::deepspeed);
  j.context = 1024;
  j.gpus = 4;
  j.shard = Shard::ddp;
  const MemoryEstimate ddp = estimate(j);
  const auto with = [&](Shard s) {
    JobSpec t = j;
    t.shard = s;
    return estimate(t);
  };
  const MemoryEstimate z1 = with(Shard::zero1);
  const MemoryEstimate z2 = with(Shard::zero2);
  const MemoryEstimate z3 = with(Shard::zero3);
  CHECK(z1.optimizer.n == (ddp.optimizer.n + 3) / 4);
  CHECK(z1.gradients == ddp.gradients);
  CHECK(z1.weights == ddp.weights);
  CHECK(z2.gradients.n == (ddp.gradients.n + 3) / 4);
  CHECK(z2.weights == ddp.weights);
  CHECK(z3.weights < ddp.weights);
  CHECK(z3.weights.n > ddp.weights.n / 4);  // plus the gathered largest layer
  CHECK(z3.activations == ddp.activations);  // activations are not sharded
  JobSpec f = job_of("llama-3.1-8b", Task::train, Engine::torchtune);
  f.gpus = 8;
  f.shard = Shard::fsdp;
  JobSpec single = f;
  single.gpus = 1;
  single.shard = Shard::none;
  CHECK(estimate(f).optimizer.n == (estimate(single).optimizer.n + 7) / 8);
  CHECK(estimate(f).gradients.n == (estimate(single).gradients.n + 7) / 8);
}

TEST_CASE("Estimate: sliding-window layers stop growing at the window", "[sizing][estimate]")
{
  JobSpec j = job_of("gemma-2-9b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  const ModelArch& m = j.model;
  REQUIRE(m.attention() == AttentionKind::sliding_hybrid);
  const std::uint64_t per_layer_token = 2ULL * m.kv_heads * m.head_dim * 2;
  j.context = 2048;  // below the window every layer holds every token
  CHECK(estimate(j).kv_cache.n == per_layer_token * m.layers * 2048);
  j.context = 32768;
  const std::uint64_t sliding = m.layers - m.global_layers;
  CHECK(estimate(j).kv_cache.n == per_layer_token * (m.global_layers * 32768ULL + sliding * m.sliding_window));
}

TEST_CASE("Estimate: MLA caches one latent per layer, aligned to 256 B under vLLM", "[sizing][estimate]")
{
  JobSpec j = job_of("deepseek-v3", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  REQUIRE(j.model.attention() == AttentionKind::mla);
  // (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 B per layer, no K/V pair, no heads.
  CHECK(kv_bytes_per_token(j).n == 61ULL * 576 * 2);
  j.engine = Engine::vllm;
  j.weights = WeightFormat::fp8;
  CHECK(kv_bytes_per_token(j).n == 61ULL * 1280);  // 1152 B rounded up to 256 B
  j.gpus = 8;  // the latent is replicated on every TP rank
  CHECK(kv_bytes_per_token(j).n == 61ULL * 1280);
}

TEST_CASE("Estimate: KV dtypes cost their element sizes", "[sizing][estimate]")
{
  JobSpec j = job_of("mistral-7b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  j.context = 32768;
  const std::uint64_t f16 = estimate(j).kv_cache.n;
  CHECK(f16 == 4096ULL * k_mib);
  j.kv_cache = KvDtype::q8_0;
  CHECK(estimate(j).kv_cache.n * 64 == f16 * 34);  // 1.0625 B per element
  j.kv_cache = KvDtype::q4_0;
  CHECK(estimate(j).kv_cache.n * 64 == f16 * 18);  // 0.5625 B
  j.kv_cache = KvDtype::fp8;
  CHECK(estimate(j).kv_cache.n * 2 == f16);
}

TEST_CASE("Estimate: real bits per weight of quantized formats", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::vllm);
  const ParamBreakdown pb = count_params(j.model);
  const std::uint64_t p = j.model.params;
  const std::uint64_t emb = pb.embedding + pb.lm_head;
  CHECK(estimate(j).weights.n == p * 2);
  j.weights = WeightFormat::fp8;  // linears 1 B, embeddings/lm_head (and norms) 2 B
  CHECK(estimate(j).weights.n == pb.linear_weights + (p - pb.linear_weights) * 2);
  j.engine = Engine::transformers;
  j.weights = WeightFormat::nf4;  // bitsandbytes: 4.5 bits
  CHECK(estimate(j).weights.n == pb.linear_weights * 45 / 80 + (p - pb.linear_weights) * 2);
  j.weights = WeightFormat::awq;  // 4 + 0.125 + 0.03125 bits
  CHECK(estimate(j).weights.n == pb.linear_weights * 41563 / 80000 + (p - pb.linear_weights) * 2);
  CHECK(emb > 0);
  // MXFP4 as stored (transformers): experts 17 B per 32 weights, the rest bf16. vLLM pads the
  // experts (tests/sizing/test_exact_formats.cpp).
  JobSpec g = job_of("gpt-oss-120b", Task::infer, Engine::transformers, WeightFormat::mxfp4);
  const ParamBreakdown gpb = count_params(g.model);
  CHECK(estimate(g).weights.n == gpb.experts * 42500 / 80000 + (g.model.params - gpb.experts) * 2);
}

TEST_CASE("Estimate: LoRA and QLoRA train adapters only", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::lora, Engine::transformers);
  j.lora_rank = 8;
  const ParamBreakdown pb = count_params(j.model);
  // r x (d_in + d_out) per linear: q 8x8192 + k 8x5120 + v 8x5120 + o 8x8192 + 3 x 8 x 18432 per layer.
  CHECK(lora_params(pb, 8) == 32ULL * 8 * (8192 + 5120 + 5120 + 8192 + 3 * 18432));
  const MemoryEstimate lora = estimate(j);
  CHECK(lora.adapters.n == lora_params(pb, 8) * 4);   // peft adapters in fp32
  CHECK(lora.gradients.n == lora_params(pb, 8) * 4);
  CHECK(lora.optimizer.n == lora_params(pb, 8) * 8);
  CHECK(lora.weights.n == j.model.params * 2);        // frozen bf16 base
  j.task = Task::qlora;
  j.weights = WeightFormat::nf4;
  const MemoryEstimate q = estimate(j);
  j.task = Task::train;
  j.weights = WeightFormat::bf16;
  const MemoryEstimate full = estimate(j);
  CHECK(q.total() < lora.total());
  CHECK(lora.total() < full.total());
}

TEST_CASE("Estimate: the vLLM KV pool fills util x usable in whole blocks", "[sizing][estimate]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::serve, Engine::vllm);
  j.context = 32768;
  const MemoryEstimate e = estimate(j);
  const Bytes usable = gib_to_bytes(79.2);
  const ServePool p = serve_pool(j, e, usable);
  CHECK(p.kv_pool_tokens % k_vllm_block_tokens == 0);
  CHECK(p.kv_pool.n == p.kv_pool_tokens * kv_bytes_per_token(j).n);
  const std::uint64_t used = e.weights.n + e.activations.n + (e.overhead.n - k_cuda_context_bytes);
  CHECK(p.kv_pool.n + used <= usable.n * 9 / 10);
  CHECK(p.kv_pool.n + used + 16 * kv_bytes_per_token(j).n > usable.n * 9 / 10);
  CHECK(p.max_concurrency == Approx(static_cast<double>(p.kv_pool.n) / static_cast<double>(kv_cache_bytes(j, 32768, 1).n)));
  // The pool does not depend on max_model_len, and a card smaller than the weights has none.
  j.context = 2048;
  CHECK(serve_pool(j, estimate(j), usable).kv_pool == p.kv_pool);
  CHECK(serve_pool(j, e, gib_to_bytes(8)).kv_pool_tokens == 0);
  // The fit limit under vLLM is util x usable (+ the context), below the 95% margin.
  CHECK(fit_limit_for(j, usable).n == usable.n * 9 / 10 + k_cuda_context_bytes);
}

TEST_CASE("Estimate: monotone in context and batch for every catalogue model", "[sizing][estimate]")
{
  for (const ModelArch& m : model_catalog()) {
    for (Task t : all_tasks()) {
      JobSpec j;
      j.model = m;
      j.task = t;
      j.engine = t == Task::serve ? Engine::vllm : Engine::transformers;
      j.weights = t == Task::qlora ? WeightFormat::nf4 : WeightFormat::bf16;
      j.context = 1024;
      const Bytes small = estimate(j).total();
      j.context = 4096;
      const Bytes longer = estimate(j).total();
      j.batch = 4;
      const Bytes wider = estimate(j).total();
      INFO(m.name << " " << to_string(t));
      CHECK(small < longer);
      CHECK(longer < wider);
    }
  }
}

TEST_CASE("Estimate: total on degenerate and huge inputs", "[sizing][estimate]")
{
  JobSpec empty;
  const MemoryEstimate e = estimate(empty);
  CHECK(e.weights.n == 0);
  CHECK(e.kv_cache.n == 0);
  CHECK(serve_pool(empty, e, gib_to_bytes(80)).kv_pool_tokens == 0);
  JobSpec huge = job_of("deepseek-v3", Task::train, Engine::transformers);
  huge.model.params = std::numeric_limits<std::uint64_t>::max() / 2;
  huge.context = std::numeric_limits<std::uint32_t>::max();
  huge.batch = std::numeric_limits<std::uint32_t>::max();
  const MemoryEstimate h = estimate(huge);  // saturates, never wraps
  CHECK(h.activations.n == std::numeric_limits<std::uint64_t>::max());
  CHECK(h.weights.n > 0);
  huge.task = Task::serve;
  huge.engine = Engine::vllm;
  CHECK(estimate(huge).kv_cache.n == std::numeric_limits<std::uint64_t>::max());
}
