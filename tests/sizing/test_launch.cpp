// SPDX-License-Identifier: MIT
// Launch lines: the flags of each engine, the repository the user named, no quantization flag for
// a checkpoint already in its format, and snippets without unused imports. That every line is
// valid shell and every Python snippet compiles is checked by tests/e2e/test_plan_launch.sh.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "sizing/checkpoint_format.hpp"
#include "planner/launch.hpp"
#include "sizing/layout.hpp"
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

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

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

TEST_CASE("Launch: vLLM on a GPU count the heads do not divide runs pipeline stages", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-70b", Task::serve, Engine::vllm);
  j.gpus = 3;
  j.shard = Shard::tp;
  const auto laid = feasible_layout(j);
  REQUIRE(laid.has_value());
  const std::string line = launch_commands(*laid, "meta-llama/Llama-3.1-70B-Instruct").at("vllm");
  CHECK(has(line, "--tensor-parallel-size 1 --pipeline-parallel-size 3"));
  CHECK_FALSE(has(line, "--tensor-parallel-size 3"));
}

TEST_CASE("Launch: a checkpoint in its own format gets no quantization flag", "[sizing][launch]")
{
  JobSpec oss = job_of("gpt-oss-120b", Task::serve, Engine::vllm, WeightFormat::mxfp4);
  CHECK(native_weights(oss));
  CHECK_FALSE(has(launch_commands(oss, "openai/gpt-oss-120b").at("vllm"), "--quantization"));
  JobSpec ds = job_of("deepseek-v3", Task::serve, Engine::vllm, WeightFormat::fp8);
  ds.gpus = 8;
  const std::string line = launch_commands(ds, "deepseek-ai/DeepSeek-V3").at("vllm");
  CHECK(has(line, "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8"));
  CHECK_FALSE(has(line, "--quantization"));
  // The same FP8 on a 16-bit checkpoint is quantized on load.
  JobSpec llama = job_of("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::fp8);
  CHECK(has(launch_commands(llama, "meta-llama/Llama-3.1-8B").at("vllm"), "--quantization fp8"));
  // A quantized checkpoint the user named is sized and launched as published.
  const ModelArch awq = for_checkpoint(*find_model("qwen2.5-72b"), "Qwen/Qwen2.5-72B-Instruct-AWQ");
  JobSpec q = job_of("qwen2.5-72b", Task::serve, Engine::vllm, WeightFormat::awq);
  q.model = awq;
  CHECK(checkpoint_format(awq) == WeightFormat::awq);
  CHECK_FALSE(has(launch_commands(q, "Qwen/Qwen2.5-72B-Instruct-AWQ").at("vllm"), "--quantization"));
}

TEST_CASE("Launch: llama.cpp and ollama read a GGUF repository from the Hub", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  j.context = 8192;
  j.batch = 4;
  j.kv_cache = KvDtype::q8_0;
  CHECK(launch_commands(j, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF").at("llama.cpp") ==
        "llama-server -hf bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M -c 32768 -np 4 -ngl 999 -fa on "
        "--cache-type-k q8_0 --cache-type-v q8_0");
  j.engine = Engine::ollama;
  const std::string o = launch_commands(j, "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF").at("ollama");
  CHECK(o.find("OLLAMA_CONTEXT_LENGTH=8192 OLLAMA_NUM_PARALLEL=4") == 0);
  CHECK(has(o, "OLLAMA_KV_CACHE_TYPE=q8_0"));
  CHECK(has(o, "ollama run hf.co/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M"));
}

TEST_CASE("Launch: ollama runs the library tag at its quantization, else imports a GGUF file", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::ollama, WeightFormat::gguf_q4_k_m);
  const std::string tag = launch_commands(j, "meta-llama/Llama-3.1-8B").at("ollama");
  CHECK(has(tag, "ollama run llama3.1:8b"));
  CHECK_FALSE(has(tag, "hf.co/meta-llama"));  // meta-llama publishes no GGUF file
  j.weights = WeightFormat::gguf_q8_0;
  const std::string local = launch_commands(j, "meta-llama/Llama-3.1-8B").at("ollama");
  CHECK(has(local, "printf 'FROM %s\\n' ./Llama-3.1-8B.Q8_0.gguf > Modelfile && ollama create llama-3.1-8b -f Modelfile"));
  CHECK(has(local, "ollama run llama-3.1-8b"));
  JobSpec oss = job_of("gpt-oss-20b", Task::infer, Engine::ollama, WeightFormat::mxfp4);
  CHECK(has(launch_commands(oss, "openai/gpt-oss-20b").at("ollama"), "ollama run gpt-oss:20b"));
}

TEST_CASE("Launch: transformers snippet imports what it uses and nothing else", "[sizing][launch]")
{
  JobSpec j = job_of("qwen2.5-7b", Task::infer, Engine::transformers);
  j.batch = 2;
  const std::string plain = launch_commands(j, "Qwen/Qwen2.5-7B-Instruct").at("transformers");
  CHECK(plain.rfind("python -c 'import torch; from transformers import AutoModelForCausalLM, AutoTokenizer; ", 0) == 0);
  CHECK(has(plain, "model_id = \"Qwen/Qwen2.5-7B-Instruct\""));
  CHECK(has(plain, "[\"Hello\"] * 2"));
  CHECK_FALSE(has(plain, "BitsAndBytesConfig"));
  CHECK_FALSE(has(plain, "#"));
  j.weights = WeightFormat::nf4;
  const std::string nf4 = launch_commands(j, "Qwen/Qwen2.5-7B-Instruct").at("transformers");
  CHECK(has(nf4, "from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig"));
  CHECK(has(nf4, "quantization_config=BitsAndBytesConfig(load_in_4bit=True"));
  JobSpec oss = job_of("gpt-oss-20b", Task::infer, Engine::transformers, WeightFormat::mxfp4);
  const std::string native = launch_commands(oss, "openai/gpt-oss-20b").at("transformers");
  CHECK_FALSE(has(native, "import torch"));  // torch_dtype="auto": torch is not used
  CHECK(has(native, "torch_dtype=\"auto\""));
}

TEST_CASE("Launch: training command lines per engine", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::qlora, Engine::transformers, WeightFormat::nf4);
  j.context = 2048;
  j.batch = 2;
  j.grad_checkpointing = true;
  j.lora_rank = 8;
  const std::string t = launch_commands(j, "meta-llama/Llama-3.1-8B").at("transformers");
  CHECK(t.rfind("trl sft --model_name_or_path meta-llama/Llama-3.1-8B --dataset_name \"${DATASET:?", 0) == 0);
  CHECK(has(t, "--per_device_train_batch_size 2 --max_length 2048"));
  CHECK(has(t, "--gradient_checkpointing"));
  CHECK(has(t, "--use_peft --lora_r 8"));
  CHECK(has(t, "--load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant"));

  j.gpus = 4;
  j.shard = Shard::fsdp;
  j.grad_checkpointing = false;
  const std::string multi = launch_commands(j, "meta-llama/Llama-3.1-8B").at("transformers");
  CHECK(multi.rfind("torchrun --nproc_per_node 4 -m trl.scripts.sft ", 0) == 0);
  CHECK(has(multi, "--gradient_checkpointing false"));
  CHECK(has(multi, "--fsdp \"full_shard auto_wrap\""));

  j.engine = Engine::torchtune;
  j.task = Task::lora;
  j.weights = WeightFormat::bf16;
  j.gpus = 2;
  j.grad_checkpointing = true;
  const std::string tt = launch_commands(j, "meta-llama/Llama-3.1-8B").at("torchtune");
  CHECK(tt.rfind("tune download meta-llama/Llama-3.1-8B --output-dir ./Llama-3.1-8B && tune run --nproc_per_node 2 "
                 "lora_finetune_distributed --config llama3_1/8B_lora ",
                 0) == 0);
  CHECK(has(tt, "tokenizer.path=./Llama-3.1-8B/original/tokenizer.model"));
  CHECK(has(tt, "enable_activation_checkpointing=True"));
  CHECK(has(tt, "model.lora_rank=8"));
  j.gpus = 1;
  j.task = Task::qlora;
  j.weights = WeightFormat::nf4;
  CHECK(torchtune_config(j) == "llama3_1/8B_qlora_single_device");

  j.engine = Engine::deepspeed;
  j.task = Task::train;
  j.weights = WeightFormat::bf16;
  j.shard = Shard::zero2;
  j.gpus = 4;
  const std::string ds = launch_commands(j, "meta-llama/Llama-3.1-8B").at("deepspeed");
  CHECK(ds.rfind("accelerate launch --num_processes 4 --use_deepspeed --zero_stage 2 -m trl.scripts.sft ", 0) == 0);
}

TEST_CASE("Launch: torchtune without a config for the model gives no line", "[sizing][launch]")
{
  JobSpec j = job_of("gemma-3-4b", Task::lora, Engine::torchtune);
  CHECK(torchtune_config(j).empty());
  CHECK(launch_commands(j, "google/gemma-3-4b-it").empty());
  JobSpec q = job_of("qwen2.5-7b", Task::qlora, Engine::torchtune, WeightFormat::nf4);
  CHECK(torchtune_config(q).empty());  // torchtune ships LoRA but no QLoRA config for Qwen2.5-7B
}

namespace {

// A GGUF file read from its header (as sizing/weights_from_headers gives it), in Q8_0.
CheckpointWeights gguf_checkpoint(std::string file, std::string hub_repo)
{
  CheckpointWeights ck;
  ck.gguf = true;
  ck.format = WeightFormat::gguf_q8_0;
  ck.format_label = "GGUF Q8_0";
  ck.linear = {8'000'000'000, 8'500'000'000};
  ck.files = {std::move(file)};
  ck.hub_repo = std::move(hub_repo);
  ck.source = "GGUF header of " + ck.files.front();
  return ck;
}

}  // namespace

TEST_CASE("Launch: llama.cpp and ollama load the GGUF file that was sized", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q8_0);
  // From a Hub repository: that repository's very file (not whichever file has the type).
  j.model.checkpoint = gguf_checkpoint("quants/Llama-3.1-8B-Q8_0.gguf", "acme/llama-gguf");
  CHECK(launch_commands(j, "acme/llama-gguf").at("llama.cpp") ==
        "llama-server -hf acme/llama-gguf --hf-file quants/Llama-3.1-8B-Q8_0.gguf -c 4096 -np 1 -ngl 999 -fa on");
  j.engine = Engine::ollama;
  CHECK(has(launch_commands(j, "acme/llama-gguf").at("ollama"), "ollama run hf.co/acme/llama-gguf:Q8_0"));
  // A local file: by the path given, else by its name; names that are not one shell word are quoted.
  j.engine = Engine::llama_cpp;
  j.model.checkpoint = gguf_checkpoint("Llama-3.1-8B-Q8_0.gguf", "");
  CHECK(has(launch_commands(j, "/data/Llama-3.1-8B-Q8_0.gguf").at("llama.cpp"),
            "llama-server -m /data/Llama-3.1-8B-Q8_0.gguf -c"));
  CHECK(has(launch_commands(j, "llama-local").at("llama.cpp"), "llama-server -m Llama-3.1-8B-Q8_0.gguf -c"));
  j.model.checkpoint = gguf_checkpoint("my model's Q8_0.gguf", "");
  CHECK(has(launch_commands(j, "llama-local").at("llama.cpp"), R"(llama-server -m 'my model'\''s Q8_0.gguf' -c)"));
  j.engine = Engine::ollama;
  j.model.checkpoint = gguf_checkpoint("Llama-3.1-8B-Q8_0.gguf", "");
  CHECK(has(launch_commands(j, "llama-local").at("ollama"),
            "printf 'FROM %s\\n' ./Llama-3.1-8B-Q8_0.gguf > Modelfile && ollama create llama-3.1-8b-q8_0 -f Modelfile"));
  // Another type than the file's is a conversion: the file is not what runs.
  j.engine = Engine::llama_cpp;
  j.weights = WeightFormat::gguf_q4_k_m;
  j.model.checkpoint = gguf_checkpoint("quants/Llama-3.1-8B-Q8_0.gguf", "acme/llama-gguf");
  CHECK(has(launch_commands(j, "acme/llama-gguf").at("llama.cpp"), "llama-server -hf acme/llama-gguf:Q4_K_M -c"));
}

TEST_CASE("Launch: vLLM serves the GGUF file that was sized, not the repository as safetensors", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::gguf_q8_0);
  j.model.checkpoint = gguf_checkpoint("quants/Llama-3.1-8B-Q8_0.gguf", "acme/llama-gguf");
  const std::string hub = launch_commands(j, "acme/llama-gguf").at("vllm");
  CHECK(has(hub, "vllm serve acme/llama-gguf:Q8_0 --tensor-parallel-size 1"));
  CHECK_FALSE(has(hub, "--quantization"));
  j.model.checkpoint = gguf_checkpoint("Llama-3.1-8B-Q8_0.gguf", "");
  CHECK(has(launch_commands(j, "/data/Llama-3.1-8B-Q8_0.gguf").at("vllm"), "vllm serve /data/Llama-3.1-8B-Q8_0.gguf --"));
  CHECK(has(launch_commands(j, "llama-local").at("vllm"), "vllm serve ./Llama-3.1-8B-Q8_0.gguf --"));
  // GGUF weights of a catalogue model: a GGUF repository's file of that type, else a local file.
  j.model.checkpoint.reset();
  CHECK(has(launch_commands(j, "bartowski/Llama-3.1-8B-GGUF").at("vllm"), "vllm serve bartowski/Llama-3.1-8B-GGUF:Q8_0 --"));
  CHECK(has(launch_commands(j, "meta-llama/Llama-3.1-8B").at("vllm"), "vllm serve ./Llama-3.1-8B.Q8_0.gguf --"));
}

TEST_CASE("Launch: a checkpoint whose headers show its format gets no quantization flag", "[sizing][launch]")
{
  // Headers read GPTQ while config.json (or the catalogue) says nothing: native, no flag.
  JobSpec j = job_of("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::gptq);
  CheckpointWeights ck;
  ck.format = WeightFormat::gptq;
  ck.format_label = "GPTQ int4 (group 128)";
  j.model.checkpoint = ck;
  CHECK(native_weights(j));
  CHECK_FALSE(has(launch_commands(j, "acme/llama-gptq").at("vllm"), "--quantization"));
  // Headers read bf16 while quantization_config claims fp8: the stored bf16 is quantized on load.
  j.model.quant_method = "fp8";
  j.model.checkpoint->format = WeightFormat::bf16;
  j.weights = WeightFormat::fp8;
  CHECK_FALSE(native_weights(j));
  CHECK(has(launch_commands(j, "acme/llama").at("vllm"), "--quantization fp8"));
}

TEST_CASE("Launch: an offline batch runs vllm run-batch over the input file, at the concurrency planned", "[sizing][launch]")
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/sizing/batch_runners.json");
  REQUIRE(in.good());
  const auto runners = nlohmann::json::parse(in);
  const std::string usage = runners["vllm_run_batch"]["usage"];  // vllm run-batch -i INPUT.jsonl -o OUTPUT.jsonl --model <model>
  JobSpec j = job_of("deepseek-v3", Task::infer, Engine::vllm, WeightFormat::fp8);
  j.gpus = 8;
  j.shard = Shard::tp;
  j.context = 4096;
  j.offline_batch = true;
  j.max_seqs = 160;
  j.large_card_defaults = true;
  const std::string line = launch_commands(j, "deepseek-ai/DeepSeek-V3").at("vllm");
  // The usage line's shape, with the files and the model filled in, then the engine arguments.
  CHECK(usage.starts_with("vllm run-batch -i "));
  CHECK(line.starts_with("vllm run-batch -i requests.jsonl -o results.jsonl --model deepseek-ai/DeepSeek-V3 "));
  CHECK(has(line, "--tensor-parallel-size 8"));
  CHECK(has(line, "--max-model-len 4096"));
  // run-batch's own defaults (128 sequences, 2048 tokens a step) are not what was planned: set.
  CHECK(has(line, "--max-num-seqs 160"));
  CHECK(has(line, "--max-num-batched-tokens 8192"));
  CHECK_FALSE(has(line, "vllm serve"));
  j.offline_batch = false;
  CHECK(launch_commands(j, "deepseek-ai/DeepSeek-V3").at("vllm").starts_with("vllm serve deepseek-ai/DeepSeek-V3 "));
}

TEST_CASE("Launch: an offline batch on SGLang runs its offline engine over the same file", "[sizing][launch]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::sglang);
  j.offline_batch = true;
  j.max_seqs = 40;
  j.context = 2048;
  const std::string line = launch_commands(j, "meta-llama/Llama-3.1-8B-Instruct", std::nullopt, 300).at("sglang");
  CHECK(line.starts_with("python -c '"));
  CHECK(has(line, "import sglang"));
  CHECK(has(line, "open(\"requests.jsonl\")"));
  CHECK(has(line, "sglang.Engine(model_path=model_id, tp_size=1, context_length=2048, max_running_requests=40)"));
  CHECK(has(line, "r[\"body\"].get(\"max_completion_tokens\", 300)"));
  CHECK(has(line, "open(\"results.jsonl\", \"w\")"));
  CHECK_FALSE(has(line, "launch_server"));
}
