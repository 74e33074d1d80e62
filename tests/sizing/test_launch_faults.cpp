// SPDX-License-Identifier: MIT
// Launch lines that start (issue 40): each case is a line that did not start before, checked for
// what the engine or the shell needs (docs/sizing.md "Launch lines").
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "planner/rank.hpp"
#include "sizing/estimate.hpp"
#include "sizing/hardware_rules.hpp"
#include "planner/launch.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"
#include "sync/remote_listing.hpp"

using namespace gpurent;

namespace {

JobSpec job(const char* model, Task task, Engine engine, WeightFormat w, std::uint32_t gpus, std::uint32_t nodes = 1)
{
  JobSpec j;
  j.model = find_model(model).value();
  j.task = task;
  j.engine = engine;
  j.weights = w;
  j.context = 4096;
  j.grad_checkpointing = is_training(task);
  j.gpus = gpus;
  j.nodes = nodes;
  j.shard = default_shard(task, engine, gpus * nodes);
  const auto laid = feasible_layout(j);
  REQUIRE(laid);
  return *laid;
}

std::string line_of(const JobSpec& j)
{
  const auto lines = launch_commands(j, j.model.hf_ids.front());
  REQUIRE(lines.size() == 1);
  return lines.begin()->second;
}

// Runs `script` with bash in a fresh folder; returns its stdout.
std::string run_bash(const std::filesystem::path& dir, const std::string& script, const std::string& env)
{
  const auto file = dir / "script.sh";
  std::ofstream(file) << script << "\n";
  const std::string cmd = "cd '" + dir.string() + "' && env " + env + " bash '" + file.string() + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n = 0; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) {
    out.append(buf, n);
  }
  REQUIRE(::pclose(p) == 0);
  return out;
}

struct Scratch {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("gpurent-launch-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  Scratch() { std::filesystem::create_directories(dir / "bin"); }
  ~Scratch() { std::filesystem::remove_all(dir); }
};

// What a server of a group runs when the user pastes `line` after `gpurent run GROUP --`: the
// laptop's shell splits and expands the words (no GPURENT_NODE_RANK there), gpurent passes them
// on quoted (command_line_text), the server's shell runs them with the group's environment. The
// launchers are stubs that print their arguments, one per line.
std::vector<std::string> args_on_node(const std::string& line, const std::string& rank)
{
  Scratch s;
  for (const char* tool : {"torchrun", "accelerate", "tune", "pip", "trl"}) {
    const auto stub = s.dir / "bin" / tool;
    std::ofstream(stub) << "#!/bin/sh\nprintf '%s\\n' \"$(basename \"$0\")\" \"$@\"\n";
    std::filesystem::permissions(stub, std::filesystem::perms::owner_all);
  }
  const std::string local = run_bash(s.dir, "printf '%s\\0' " + line,
                                     "-u GPURENT_NODE_RANK -u MASTER_ADDR -u MASTER_PORT DATASET=org/data");
  std::vector<std::string> words;
  for (std::size_t start = 0, nul; (nul = local.find('\0', start)) != std::string::npos; start = nul + 1) {
    words.push_back(local.substr(start, nul - start));
  }
  REQUIRE(!words.empty());
  const std::string on_node =
      run_bash(s.dir, command_line_text(words),
               "GPURENT_NODE_RANK=" + rank + " MASTER_ADDR=10.1.2.3 MASTER_PORT=29511 DATASET=org/data PATH=\"" +
                   (s.dir / "bin").string() + ":$PATH\"");
  std::vector<std::string> args;
  for (std::size_t start = 0, nl; (nl = on_node.find('\n', start)) != std::string::npos; start = nl + 1) {
    args.push_back(on_node.substr(start, nl - start));
  }
  return args;
}

// The value after `flag` in `args`, or "(absent)".
std::string value_after(const std::vector<std::string>& args, const std::string& flag)
{
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) {
      return args[i + 1];
    }
  }
  return "(absent)";
}

}  // namespace

TEST_CASE("Launch: FSDP and ZeRO-3 QLoRA store the 4-bit weights in the compute dtype", "[sizing][launch]")
{
  // bitsandbytes "FSDP-QLoRA": FSDP shards only float tensors of one dtype per unit.
  const JobSpec fsdp = job("llama-3.1-70b", Task::qlora, Engine::transformers, WeightFormat::nf4, 2);
  REQUIRE(fsdp.shard == Shard::fsdp);
  const std::string line = line_of(fsdp);
  INFO(line);
  CHECK(line.find("--fsdp") != std::string::npos);
  CHECK(line.find(" --dtype bfloat16 --bnb_4bit_quant_storage bfloat16") != std::string::npos);

  const JobSpec zero3 = job("llama-3.1-70b", Task::qlora, Engine::deepspeed, WeightFormat::nf4, 4);
  CHECK(line_of(zero3).find("--bnb_4bit_quant_storage bfloat16") != std::string::npos);

  JobSpec t4 = run_on_card(fsdp, 75).job;  // no bf16: fp16 mixed precision, storage in fp16
  CHECK(t4.fp16_compute);
  CHECK(line_of(t4).find(" --dtype float16 --bnb_4bit_quant_storage float16") != std::string::npos);

  // One GPU without FSDP keeps bitsandbytes' own uint8 storage (nothing to shard).
  const JobSpec one = job("llama-3.1-8b", Task::qlora, Engine::transformers, WeightFormat::nf4, 1);
  CHECK(line_of(one).find("bnb_4bit_quant_storage") == std::string::npos);
}

TEST_CASE("Launch: a group's line reads each server's rank on that server", "[sizing][launch]")
{
  const JobSpec fsdp = job("llama-3.1-8b", Task::lora, Engine::transformers, WeightFormat::bf16, 2, 2);
  const auto torchrun = args_on_node(line_of(fsdp), "1");
  REQUIRE(!torchrun.empty());
  CHECK(torchrun.front() == "torchrun");
  CHECK(value_after(torchrun, "--node_rank") == "1");
  CHECK(value_after(torchrun, "--master_addr") == "10.1.2.3");
  CHECK(value_after(torchrun, "--master_port") == "29511");
  CHECK(value_after(torchrun, "--dataset_name") == "org/data");
  CHECK(value_after(torchrun, "--fsdp") == "full_shard auto_wrap");

  const JobSpec zero3 = job("llama-3.1-8b", Task::train, Engine::deepspeed, WeightFormat::bf16, 2, 2);
  const auto accelerate = args_on_node(line_of(zero3), "1");
  CHECK(value_after(accelerate, "--machine_rank") == "1");
  CHECK(value_after(accelerate, "--main_process_ip") == "10.1.2.3");
  // Each server starts its own processes: accelerate's default DeepSpeed launcher (pdsh) would
  // log in to the others from the first.
  CHECK(value_after(accelerate, "--deepspeed_multinode_launcher") == "standard");

  const JobSpec tune = job("llama-3.1-8b", Task::lora, Engine::torchtune, WeightFormat::bf16, 2, 2);
  const auto tt = args_on_node(line_of(tune), "1");
  CHECK(value_after(tt, "--node_rank") == "1");
  CHECK(value_after(tt, "--master_addr") == "10.1.2.3");

  // A line for one server is pasted as it is: no bash -c around it.
  CHECK(line_of(job("llama-3.1-8b", Task::lora, Engine::transformers, WeightFormat::bf16, 2)).starts_with("torchrun "));
}

TEST_CASE("Launch: quantized weights on a card without bf16 compute in float16", "[sizing][launch]")
{
  // README/docs/hardware.md: a T4 gets --dtype float16; FP8 runs weight-only there (Marlin), its
  // activations in the checkpoint's 16-bit dtype.
  for (const Engine e : {Engine::vllm, Engine::sglang}) {
    for (const WeightFormat w : {WeightFormat::fp8, WeightFormat::nf4, WeightFormat::awq}) {
      const JobSpec asked = job("llama-3.1-8b", Task::serve, e, w, 1);
      const CardRun t4 = run_on_card(asked, 75);
      if (t4.runs.status == RunStatus::refused) {
        continue;  // SGLang's FP8 needs CC 8.0
      }
      INFO(to_string(e) << " " << to_string(w));
      const std::string line = line_of(t4.job);
      CHECK(line.find(" --dtype float16") != std::string::npos);
      CHECK(t4.runs.flags.at(std::string(to_string(e))).find("--dtype float16") != std::string::npos);
      // An A100 has bf16: no dtype flag.
      CHECK(line_of(run_on_card(asked, 80).job).find("--dtype") == std::string::npos);
    }
  }
  // transformers with bitsandbytes on a T4: the snippet loads float16 around the 4-bit weights.
  const CardRun tf = run_on_card(job("llama-3.1-8b", Task::infer, Engine::transformers, WeightFormat::nf4, 1), 75);
  CHECK(line_of(tf.job).find("torch_dtype=torch.float16") != std::string::npos);
}

TEST_CASE("Launch: llama.cpp, ollama and transformers split a model by layer, not by tensor", "[sizing][launch]")
{
  for (const Engine e : {Engine::llama_cpp, Engine::ollama, Engine::transformers}) {
    CHECK(default_shard(Task::infer, e, 2) == Shard::layer);
  }
  CHECK(default_shard(Task::serve, Engine::vllm, 2) == Shard::tp);
  CHECK(default_shard(Task::serve, Engine::sglang, 2) == Shard::tp);
  const JobSpec two = job("llama-3.1-70b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m, 2);
  CHECK(to_string(two.shard) == "layer");
  CHECK(tp_degree(two) == 1);
  CHECK(line_of(two).find("--split-mode layer") != std::string::npos);
  // Each GPU holds half of the layers: the same weights per GPU as one GPU's over two.
  const JobSpec one = job("llama-3.1-70b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m, 1);
  const double ratio = static_cast<double>(estimate(two).weights.n) / static_cast<double>(estimate(one).weights.n);
  CHECK(ratio == Approx(0.5).margin(0.02));
}
