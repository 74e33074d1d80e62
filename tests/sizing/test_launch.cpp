// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "sizing/launch.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec job_of(std::string_view name, Task task, Engine engine, WeightFormat w = WeightFormat::bf16)
{
  JobSpec j;
  const auto m = find_model(name);
  REQUIRE(m.has_value());
  j.model = *m;
  j.task = task;
  j.engine = engine;
  j.weights = w;
  return j;
}

}  // namespace

TEST_CASE("Launch: vLLM serve with the sized flags", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-70b", Task::serve, Engine::vllm, WeightFormat::fp8);
  j.gpus = 2;
  j.context = 16384;
  j.batch = 8;
  j.kv_cache = KvDtype::fp8;
  const auto cmds = launch_commands(j, "meta-llama/Llama-3.1-70B-Instruct");
  REQUIRE(cmds.size() == 1);
  CHECK(cmds.at("vllm") ==
        "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2 --max-model-len 16384 "
        "--max-num-seqs 8 --gpu-memory-utilization 0.90 --kv-cache-dtype fp8 --quantization fp8");
}

TEST_CASE("Launch: llama.cpp server gives every slot the full context", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  j.context = 8192;
  j.batch = 4;
  j.kv_cache = KvDtype::q8_0;
  CHECK(launch_commands(j, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF").at("llama.cpp") ==
        "llama-server -m Meta-Llama-3.1-8B-Instruct-GGUF.Q4_K_M.gguf -c 32768 -np 4 -ngl 999 -fa on "
        "--cache-type-k q8_0 --cache-type-v q8_0");
  j.engine = Engine::ollama;
  const std::string o = launch_commands(j, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF").at("ollama");
  CHECK(o.find("OLLAMA_CONTEXT_LENGTH=8192 OLLAMA_NUM_PARALLEL=4") == 0);
  CHECK(o.find("OLLAMA_KV_CACHE_TYPE=q8_0") != std::string::npos);
  CHECK(o.find("hf.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M") != std::string::npos);
}

TEST_CASE("Launch: training command lines per engine", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::qlora, Engine::transformers, WeightFormat::nf4);
  j.context = 2048;
  j.batch = 2;
  j.grad_checkpointing = true;
  j.lora_rank = 8;
  const std::string t = launch_commands(j, "meta-llama/Llama-3.1-8B").at("transformers");
  CHECK(t.rfind("torchrun --nproc_per_node 1 train.py --model_name_or_path meta-llama/Llama-3.1-8B", 0) == 0);
  CHECK(t.find("--per_device_train_batch_size 2 --max_seq_length 2048") != std::string::npos);
  CHECK(t.find("--gradient_checkpointing") != std::string::npos);
  CHECK(t.find("--use_peft --lora_r 8") != std::string::npos);
  CHECK(t.find("--load_in_4bit") != std::string::npos);

  j.engine = Engine::torchtune;
  j.task = Task::lora;
  j.gpus = 2;
  const std::string tt = launch_commands(j, "meta-llama/Llama-3.1-8B").at("torchtune");
  CHECK(tt.rfind("tune run --nproc_per_node 2 lora_finetune_distributed", 0) == 0);
  CHECK(tt.find("enable_activation_checkpointing=True") != std::string::npos);
  CHECK(tt.find("model.lora_rank=8") != std::string::npos);

  j.engine = Engine::deepspeed;
  j.task = Task::train;
  j.shard = Shard::zero2;
  j.gpus = 4;
  const std::string ds = launch_commands(j, "meta-llama/Llama-3.1-8B").at("deepspeed");
  CHECK(ds.rfind("deepspeed --num_gpus 4 train.py", 0) == 0);
  CHECK(ds.find("zero_optimization.stage=2") != std::string::npos);
}
