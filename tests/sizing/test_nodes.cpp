// SPDX-License-Identifier: MIT
// A job across servers (JobSpec::nodes, plan --nodes): the per-GPU memory under FSDP/ZeRO-3 over
// every GPU of every server, vLLM's layout (tensor parallel inside a server, pipeline across
// servers), the layouts no engine runs across servers, and the launch lines' rendezvous.
#include <catch2/catch.hpp>

#include "sizing/estimate.hpp"
#include "planner/launch.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec full_405b(std::uint32_t gpus, std::uint32_t nodes)
{
  JobSpec j;
  j.model = *find_model_ptr("llama-3.1-405b");
  j.task = Task::train;
  j.engine = Engine::transformers;
  j.weights = WeightFormat::bf16;
  j.context = 4096;
  j.grad_checkpointing = true;
  j.gpus = gpus;
  j.nodes = nodes;
  j.shard = Shard::fsdp;
  return j;
}

double gib_of(Bytes b) { return to_gib(b); }

}  // namespace

TEST_CASE("Nodes: FSDP shards the weights, gradients and AdamW states over every GPU of every server", "[sizing][nodes]")
{
  // transformers mixed precision: 16 bytes per trained parameter (fp32 master weights 4, fp32
  // gradients 4, AdamW moments 8), FSDP divides them over gpus x nodes; each GPU also holds the
  // layer it gathers and the next one prefetched (2 x one layer's weights).
  const JobSpec one = full_405b(8, 1);
  const JobSpec twelve = full_405b(8, 12);
  CHECK(world_gpus(twelve) == 96);
  CHECK(shard_degree(twelve) == 96);
  CHECK(tp_degree(twelve) == 1);
  const MemoryEstimate e1 = estimate(one);
  const MemoryEstimate e12 = estimate(twelve);
  JobSpec whole = full_405b(1, 1);
  whole.shard = Shard::none;
  const double w = static_cast<double>(estimate(whole).weights.n);
  const double layer = w / twelve.model.layers;
  CHECK(static_cast<double>(e12.weights.n) == Approx(w / 96.0 + 2.0 * layer).epsilon(0.001));
  const double params = static_cast<double>(twelve.model.params);
  CHECK(static_cast<double>((e12.gradients + e12.optimizer).n) == Approx(12.0 * params / 96.0).epsilon(0.01));
  // The states shrink 12-fold; activations are per GPU and do not.
  CHECK(gib_of(e1.optimizer) == Approx(gib_of(e12.optimizer) * 12.0).epsilon(0.001));
  CHECK(e12.activations == e1.activations);
  // One server of 8 x 80 GB cannot hold it (6.5 TB of states over 8 GPUs); 32 servers can.
  CHECK(gib_of(e1.total()) > 700.0);
  CHECK(gib_of(e12.total()) > 75.0);
  CHECK(gib_of(estimate(full_405b(8, 32)).total()) < 75.0);
  // The same world on one server (if one had 96 GPUs) needs the same memory per GPU.
  JobSpec flat = full_405b(96, 1);
  CHECK(estimate(flat).total() == e12.total());
}

TEST_CASE("Nodes: vLLM runs tensor parallel inside a server and one pipeline stage per server", "[sizing][nodes]")
{
  JobSpec j;
  j.model = *find_model_ptr("llama-3.1-405b");
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.gpus = 8;
  j.nodes = 2;
  j.shard = Shard::tp;
  const auto laid = feasible_layout(j);
  REQUIRE(laid);
  CHECK(laid->pipeline == 2);
  CHECK(tp_degree(*laid) == 8);
  // Each GPU holds 1/16 of the weights, as vLLM's --tensor-parallel-size 8 --pipeline-parallel-size 2.
  JobSpec one = *laid;
  one.nodes = 1;
  one.gpus = 1;
  one.pipeline = 1;
  const double whole = gib_of(estimate(one).weights);
  CHECK(gib_of(estimate(*laid).weights) == Approx(whole / 16.0).epsilon(0.02));
  const std::string line = launch_commands(*laid, "meta-llama/Llama-3.1-405B-Instruct", std::nullopt).at("vllm");
  CHECK(line.find("--tensor-parallel-size 8 --pipeline-parallel-size 2") != std::string::npos);
}

TEST_CASE("Nodes: what does not span servers is refused", "[sizing][nodes]")
{
  JobSpec llama = full_405b(8, 2);
  llama.shard = Shard::tp;  // tensor parallel across servers: no engine plan knows runs it
  CHECK_FALSE(feasible_layout(llama));
  llama.shard = Shard::zero3;
  CHECK(feasible_layout(llama));
  llama.shard = Shard::ddp;
  CHECK(feasible_layout(llama));
  JobSpec gguf;
  gguf.model = *find_model_ptr("llama-3.1-8b");
  gguf.task = Task::infer;
  gguf.engine = Engine::llama_cpp;
  gguf.gpus = 1;
  gguf.nodes = 2;
  CHECK_FALSE(feasible_layout(gguf));
  // More stages than layers: 126 layers, 8 GPUs per server, 127 servers would need 127 stages.
  JobSpec serve;
  serve.model = *find_model_ptr("llama-3.1-405b");
  serve.task = Task::serve;
  serve.engine = Engine::vllm;
  serve.shard = Shard::tp;
  serve.gpus = 8;
  serve.nodes = 127;
  CHECK_FALSE(feasible_layout(serve));
}

TEST_CASE("Nodes: the trainers' launch lines join the servers (--nnodes and the rank gpurent run sets)", "[sizing][nodes]")
{
  JobSpec j = full_405b(8, 4);
  const auto lines = launch_commands(*feasible_layout(j), "meta-llama/Llama-3.1-405B", std::nullopt);
  const std::string& t = lines.at("transformers");
  // bash -c '…': each server's shell expands the rank (docs/sizing.md §11; test_launch_faults.cpp).
  CHECK(t.find("bash -c 'torchrun --nnodes 4 --node_rank \"$GPURENT_NODE_RANK\" --master_addr \"$MASTER_ADDR\"") == 0);
  CHECK(t.find("--nproc_per_node 8") != std::string::npos);
  j.engine = Engine::deepspeed;
  j.shard = Shard::zero3;
  const std::string ds = launch_commands(*feasible_layout(j), "meta-llama/Llama-3.1-405B", std::nullopt).at("deepspeed");
  CHECK(ds.find("--num_processes 32") != std::string::npos);
  CHECK(ds.find("--num_machines 4 --machine_rank \"$GPURENT_NODE_RANK\"") != std::string::npos);
  // One server: the lines are as before.
  const std::string single = launch_commands(*feasible_layout(full_405b(8, 1)), "m", std::nullopt).at("transformers");
  CHECK(single.find("--nnodes") == std::string::npos);
}
