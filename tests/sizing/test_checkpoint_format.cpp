// SPDX-License-Identifier: MIT
// The checkpoint's own format: config.json quantization_config, the catalogue's deployment facts,
// and the quantized checkpoints an id can name.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/model_config.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;

namespace {

std::string fixture(const std::string& name)
{
  std::string path = GPURENT_TEST_DATA;  // appended, not `+`: GCC 12's -Warray-bounds misreads the temporary
  path += "/models/";
  path += name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A minimal llama config with the given quantization_config.
std::string llama_with(const std::string& quant)
{
  return R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
             "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256,
             "quantization_config": )" +
         quant + "}";
}

}  // namespace

TEST_CASE("Checkpoint: quant_method maps to the weight format", "[sizing][checkpoint]")
{
  CHECK(quant_method_format("fp8", 0, true) == WeightFormat::fp8);
  CHECK(quant_method_format("fbgemm_fp8", 8, true) == WeightFormat::fp8);
  CHECK(quant_method_format("mxfp4", 4, true) == WeightFormat::mxfp4);
  CHECK(quant_method_format("gptq", 4, false) == WeightFormat::gptq);
  CHECK(quant_method_format("gptq", 8, false) == WeightFormat::int8);
  CHECK(quant_method_format("awq", 4, false) == WeightFormat::awq);
  CHECK(quant_method_format("bitsandbytes", 4, false) == WeightFormat::nf4);
  CHECK(quant_method_format("bitsandbytes", 8, false) == WeightFormat::int8);
  CHECK(quant_method_format("compressed-tensors", 8, true) == WeightFormat::fp8);
  CHECK(quant_method_format("compressed-tensors", 8, false) == WeightFormat::int8);
  CHECK(quant_method_format("compressed-tensors", 4, false) == WeightFormat::int4);
  CHECK_FALSE(quant_method_format("hqq", 4, false));
  CHECK_FALSE(quant_method_format("", 0, false));
}

TEST_CASE("Checkpoint: config.json quantization_config is read", "[sizing][checkpoint]")
{
  const auto oss = parse_model_config(fixture("gpt-oss-20b.json"), "gpt-oss-20b.json");
  REQUIRE(oss);
  CHECK(checkpoint_format(*oss) == WeightFormat::mxfp4);
  const auto ds = parse_model_config(fixture("deepseek-v3.json"), "deepseek-v3.json");
  REQUIRE(ds);
  CHECK(checkpoint_format(*ds) == WeightFormat::fp8);
  const auto plain = parse_model_config(fixture("llama-3.1-8b.json"), "llama-3.1-8b.json");
  REQUIRE(plain);
  CHECK(plain->quant_method.empty());
  CHECK(checkpoint_format(*plain) == WeightFormat::bf16);

  struct Case {
    std::string quant;
    WeightFormat want;
  };
  const std::vector<Case> cases = {
      {R"({"quant_method": "gptq", "bits": 4, "group_size": 128})", WeightFormat::gptq},
      {R"({"quant_method": "gptq", "bits": 8})", WeightFormat::int8},
      {R"({"quant_method": "awq", "bits": 4, "version": "gemm"})", WeightFormat::awq},
      {R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"})", WeightFormat::nf4},
      {R"({"quant_method": "bitsandbytes", "_load_in_8bit": true})", WeightFormat::int8},
      {R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float"}}}})",
       WeightFormat::fp8},
      {R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}}}})",
       WeightFormat::int4},
      {R"({"quant_method": "fbgemm_fp8"})", WeightFormat::fp8},
      // Not understood: sized as 16-bit, never an error.
      {R"({"quant_method": "hqq"})", WeightFormat::bf16},
      {R"({"quant_method": 7})", WeightFormat::bf16},
      {R"({"quant_method": "compressed-tensors", "config_groups": []})", WeightFormat::bf16},
      {R"("fp8")", WeightFormat::bf16},
  };
  for (const auto& c : cases) {
    INFO(c.quant);
    const auto m = parse_model_config(llama_with(c.quant), "x.json");
    REQUIRE(m);
    CHECK(checkpoint_format(*m) == c.want);
  }
}

TEST_CASE("Checkpoint: a block-quantized FP8 config gives its block", "[sizing][checkpoint][fp8]")
{
  // Qwen/Qwen3-30B-A3B-FP8 and deepseek-ai/DeepSeek-V3 publish "weight_block_size": [128, 128].
  for (const char* file : {"qwen3-30b-a3b-fp8.json", "deepseek-v3.json"}) {
    INFO(file);
    const auto m = parse_model_config(fixture(file), file);
    REQUIRE(m);
    CHECK(checkpoint_format(*m) == WeightFormat::fp8);
    CHECK(m->quant_block_n == 128);
    CHECK(m->quant_block_k == 128);
  }
  const auto bf16 = parse_model_config(fixture("qwen3-30b-a3b.json"), "qwen3-30b-a3b.json");
  REQUIRE(bf16);
  CHECK(bf16->quant_block_n == 0);

  struct Case {
    std::string quant;
    std::uint32_t n, k;
  };
  const std::vector<Case> cases = {
      {R"({"quant_method": "fp8", "weight_block_size": [128, 64]})", 128, 64},
      {R"({"quant_method": "fp8", "activation_scheme": "dynamic"})", 0, 0},  // per-tensor scales
      {R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8,
          "type": "float", "strategy": "block", "block_structure": [128, 128]}}}})",
       128, 128},
      // Per-channel compressed-tensors FP8 (FP8-dynamic) has no block.
      {R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 8,
          "type": "float", "strategy": "channel", "block_structure": null}}}})",
       0, 0},
      // Not a block: ignored, never an error.
      {R"({"quant_method": "fp8", "weight_block_size": [128]})", 0, 0},
      {R"({"quant_method": "fp8", "weight_block_size": [0, 128]})", 0, 0},
      {R"({"quant_method": "fp8", "weight_block_size": [128, -1]})", 0, 0},
      {R"({"quant_method": "fp8", "weight_block_size": [128.5, 128]})", 0, 0},
      {R"({"quant_method": "fp8", "weight_block_size": "128x128"})", 0, 0},
      {R"({"quant_method": "fp8", "weight_block_size": [99999999999, 128]})", 0, 0},
      {R"({"quant_method": "gptq", "bits": 4, "weight_block_size": [128, 128]})", 0, 0},
  };
  for (const auto& c : cases) {
    INFO(c.quant);
    const auto m = parse_model_config(llama_with(c.quant), "x.json");
    REQUIRE(m);
    CHECK(m->quant_block_n == c.n);
    CHECK(m->quant_block_k == c.k);
  }
  // The catalogue: Qwen3's -FP8 checkpoints and DeepSeek-V3/R1 carry 128 x 128; the base Qwen3
  // ids, the AWQ/GPTQ and fbgemm checkpoints none.
  CHECK(find_model_ptr("deepseek-r1")->quant_block_k == 128);
  const ModelArch& q = *find_model_ptr("qwen3-235b-a22b");
  CHECK(q.quant_block_n == 0);
  CHECK(for_checkpoint(q, "Qwen/Qwen3-235B-A22B-FP8").quant_block_n == 128);
  CHECK(for_checkpoint(q, "Qwen/Qwen3-235B-A22B").quant_block_n == 0);
  const ModelArch& l405 = *find_model_ptr("llama-3.1-405b");
  CHECK(for_checkpoint(l405, "meta-llama/Llama-3.1-405B-Instruct-FP8").quant_block_n == 0);
}

TEST_CASE("Checkpoint: the catalogue records each model's published format", "[sizing][checkpoint]")
{
  CHECK(checkpoint_format(*find_model("gpt-oss-20b")) == WeightFormat::mxfp4);
  CHECK(checkpoint_format(*find_model("gpt-oss-120b")) == WeightFormat::mxfp4);
  CHECK(checkpoint_format(*find_model("deepseek-v3")) == WeightFormat::fp8);
  CHECK(checkpoint_format(*find_model("deepseek-r1")) == WeightFormat::fp8);
  CHECK(checkpoint_format(*find_model("llama-3.1-70b")) == WeightFormat::bf16);
  for (const ModelArch& m : model_catalog()) {
    INFO(m.name);
    // The format a catalogue entry records is one gpurent sizes.
    CHECK((m.quant_method.empty() || quant_method_format(m.quant_method, m.quant_bits, m.quant_float)));
    CHECK(m.mxfp4_experts == (m.quant_method == "mxfp4"));
    for (const auto& q : m.quantized) {
      INFO(q.hf_id);
      CHECK(find_model_ptr(q.hf_id) == find_model_ptr(m.name));
      CHECK(named_hf_id(m, q.hf_id) == q.hf_id);
      const ModelArch as = for_checkpoint(m, q.hf_id);
      CHECK(quant_method_format(as.quant_method, as.quant_bits, as.quant_float));
      CHECK(checkpoint_format(as) != WeightFormat::bf16);
    }
  }
  // The id the user named, in the catalogue's spelling; a short name gives the first id.
  const ModelArch& qwen = *find_model_ptr("qwen2.5-72b");
  CHECK(named_hf_id(qwen, "qwen/qwen2.5-72b-instruct") == "Qwen/Qwen2.5-72B-Instruct");
  CHECK(named_hf_id(qwen, "https://huggingface.co/Qwen/Qwen2.5-72B-Instruct/") == "Qwen/Qwen2.5-72B-Instruct");
  CHECK(named_hf_id(qwen, "qwen2.5-72b") == "Qwen/Qwen2.5-72B");
  CHECK(checkpoint_format(for_checkpoint(qwen, "Qwen/Qwen2.5-72B-Instruct-AWQ")) == WeightFormat::awq);
  CHECK(checkpoint_format(for_checkpoint(qwen, "Qwen/Qwen2.5-72B-Instruct")) == WeightFormat::bf16);
}

TEST_CASE("Checkpoint: gpt-oss in MXFP4 is its published size", "[sizing][checkpoint]")
{
  // openai/gpt-oss-120b ships ~65 GB of safetensors (MXFP4 experts, bf16 rest); -20b ~14 GB.
  // vLLM holds the experts padded for its Marlin kernels: 65.9 / 13.7 GiB (startup_logs.json).
  JobSpec j;
  j.model = *find_model("gpt-oss-120b");
  j.task = Task::serve;
  j.engine = Engine::transformers;
  j.weights = WeightFormat::mxfp4;
  CHECK(to_gib(estimate(j).weights) == Approx(60.7).margin(1.0));
  j.engine = Engine::vllm;
  CHECK(to_gib(estimate(j).weights) == Approx(65.9).margin(0.5));
  j.model = *find_model("gpt-oss-20b");
  CHECK(to_gib(estimate(j).weights) == Approx(13.67).margin(0.1));
  j.engine = Engine::transformers;
  CHECK(to_gib(estimate(j).weights) == Approx(12.8).margin(0.5));
  j.engine = Engine::vllm;
  // DeepSeek-V3 in FP8: ~642 GB over 8 GPUs.
  j.model = *find_model("deepseek-v3");
  j.weights = WeightFormat::fp8;
  j.gpus = 8;
  j.shard = Shard::tp;
  CHECK(to_gib(estimate(j).weights) * 8 == Approx(626).margin(8));
}

TEST_CASE("Checkpoint: the format the headers show wins over quantization_config", "[sizing][checkpoint]")
{
  ModelArch m = *find_model("llama-3.1-8b");
  m.quant_method = "gptq";
  m.quant_bits = 4;
  // No headers read (catalogue ids, a config.json alone): quantization_config decides.
  CHECK(checkpoint_format(m) == WeightFormat::gptq);
  CHECK(checkpoint_format_source(m) == "config.json quantization_config: gptq");
  // Headers read: what the files store.
  CheckpointWeights ck;
  ck.format = WeightFormat::awq;
  ck.format_label = "AWQ int4 (group 128)";
  ck.source = "safetensors header of model.safetensors";
  m.checkpoint = ck;
  CHECK(checkpoint_format(m) == WeightFormat::awq);
  CHECK(checkpoint_format_source(m) == "safetensors header of model.safetensors: AWQ int4 (group 128)");
  // Headers that show no format (NVFP4: no --weights value) leave it to quantization_config.
  m.checkpoint->format.reset();
  CHECK(checkpoint_format(m) == WeightFormat::gptq);
  // A 16-bit checkpoint by its headers says where that came from; one nothing describes does not.
  m.quant_method.clear();
  m.checkpoint->format = WeightFormat::bf16;
  m.checkpoint->format_label = "bf16";
  CHECK(checkpoint_format(m) == WeightFormat::bf16);
  CHECK(checkpoint_format_source(m) == "safetensors header of model.safetensors: bf16");
  m.checkpoint.reset();
  CHECK(checkpoint_format_source(m).empty());
}
