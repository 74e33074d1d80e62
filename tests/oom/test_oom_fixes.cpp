// SPDX-License-Identifier: MIT
// The v2 rule fixes (spec/oom.md, "v2") and the fixes chosen by the engine that raised the error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "oom/diagnose.hpp"

namespace gpurent {
namespace {

std::vector<std::string> cause_names(const OomDiagnosis& d)
{
  std::vector<std::string> out;
  for (const auto c : d.causes) {
    out.emplace_back(to_string(c));
  }
  return out;
}

OomDiagnosis diagnose_text(const std::string& text)
{
  const auto report = parse_oom(text);
  REQUIRE(report.has_value());
  return diagnose_oom(*report, {});
}

bool has_fix(const OomDiagnosis& d, const std::string& id)
{
  return std::any_of(d.fixes.begin(), d.fixes.end(), [&](const OomFix& f) { return f.id == id; });
}

}  // namespace

TEST_CASE("diagnose_oom: the v2 rule fixes", "[sizing][oom_diagnose]")
{
  SECTION("the job in a container: the one process holding T - F is this job")
  {
    const auto d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                                 "79.25 GiB of which 10.00 MiB is free. Process 36891 has 79.23 GiB memory in use. Of the allocated "
                                 "memory 76.00 GiB is allocated by PyTorch, and 2.50 GiB is reserved by PyTorch but unallocated.");
    REQUIRE(d.self_process.has_value());
    CHECK(d.self_process->pid == 36891);
    CHECK(*d.footprint == gib_to_bytes(79.23));
    CHECK_FALSE(d.non_pytorch_estimated);
    CHECK(std::abs(to_gib(d.non_pytorch) - 0.73) < 1e-6);  // 79.23 - 76.00 - 2.50
    CHECK(d.other_processes->n < k_gib);
    CHECK(cause_names(d) == std::vector<std::string>{"job_too_large"});
    CHECK(d.fixes[0].id != "free-other-processes");
  }
  SECTION("two processes, one of them this job: only the other one counts")
  {
    const auto d = diagnose_text("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 80.00 GiB of which 0 "
                                 "bytes is free. Process 11 has 60.00 GiB memory in use. Process 12 has 20.00 GiB memory in use. Of "
                                 "the allocated memory 58.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
                                 "unallocated.");
    CHECK_FALSE(d.self_process.has_value());  // neither holds 99% of T - F
    CHECK(*d.other_processes == Bytes{80 * k_gib});
  }
  SECTION("a 2 MiB request with 203 GiB free is a limit, printed in MiB")
  {
    const auto d = diagnose_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity "
                                 "of 279.37 GiB of which 203.42 GiB is free. Including non-PyTorch memory, this process has 75.10 GiB "
                                 "memory in use. Of the allocated memory 70.02 GiB is allocated by PyTorch, and 4.56 GiB is reserved "
                                 "by PyTorch but unallocated.");
    CHECK(cause_names(d) == std::vector<std::string>{"limit_not_capacity"});  // not fragmentation: F >= R
    CHECK(d.fixes[0].id == "check-memory-limit");
    CHECK_THAT(d.fixes[0].description, Catch::Contains("2.00 MiB asked") && Catch::Contains("203.42 GiB free"));
  }
  SECTION("with a per-process cap, the fraction that holds the step")
  {
    const auto d = diagnose_text("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 12.82 GiB already "
                                 "allocated; 1.00 GiB free; 13.59 GiB allowed; 13.73 GiB reserved in total by PyTorch)");
    REQUIRE(has_fix(d, "raise-memory-fraction"));
    const auto it = std::find_if(d.fixes.begin(), d.fixes.end(), [](const OomFix& f) { return f.id == "raise-memory-fraction"; });
    CHECK(it->command == "torch.cuda.set_per_process_memory_fraction(0.95)");  // (13.73 + 0.02) / 14.76 -> 0.94, + 0.01
  }
}

TEST_CASE("diagnose_oom: fixes come from the engine that raised the error", "[sizing][oom_diagnose]")
{
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB. GPU 0 has a total capacity of 7.75 GiB of which 1.00 "
      "GiB is free. Including non-PyTorch memory, this process has 6.70 GiB memory in use. Of the allocated memory 6.00 GiB is "
      "allocated by PyTorch, and 18.97 MiB is reserved by PyTorch but unallocated.";
  const auto commands = [](const OomDiagnosis& d) {
    std::string all;
    for (const auto& f : d.fixes) {
      all += f.command + "\n";
    }
    return all;
  };
  SECTION("a trainer: the Trainer's flags")
  {
    const auto d = diagnose_text("  File \"/usr/lib/python3/site-packages/transformers/trainer.py\", line 1859, in train\n" + oom);
    CHECK_THAT(commands(d), Catch::Contains("--per_device_train_batch_size"));
  }
  SECTION("vLLM: vLLM's flags, never the Trainer's")
  {
    const auto d = diagnose_text("  File \"/usr/lib/python3/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 1700\n" + oom);
    CHECK_THAT(commands(d), Catch::Contains("--gpu-memory-utilization 0.85") && Catch::Contains("--max-num-seqs"));
    CHECK_THAT(commands(d), !Catch::Contains("--per_device_train_batch_size"));
  }
  SECTION("vLLM's setting in the log makes the value")
  {
    const auto d = diagnose_text("Memory profiling results: total_gpu_memory=7.75GiB gpu_memory_utilization=0.92\n(EngineCore_DP0 "
                                 "pid=10) " + oom);
    CHECK_THAT(commands(d), Catch::Contains("--gpu-memory-utilization 0.87"));
  }
  SECTION("SGLang and TGI")
  {
    const auto sglang = diagnose_text("[2025-03-29 18:18:34 TP0] Scheduler hit an exception: Traceback (most recent call last):\n" + oom);
    CHECK_THAT(commands(sglang), Catch::Contains("--mem-fraction-static") && !Catch::Contains("--per_device"));
    const auto tgi = diagnose_text("2024-04-19T11:06:25.868590Z ERROR text_generation_launcher: Method Warmup encountered an error.\n" + oom);
    CHECK_THAT(commands(tgi), Catch::Contains("--max-batch-prefill-tokens") && !Catch::Contains("--per_device"));
  }
  SECTION("a diffusion pipeline")
  {
    const auto d = diagnose_text("  File \"/opt/ComfyUI/comfy/model_management.py\", line 50\n" + oom);
    CHECK_THAT(commands(d), Catch::Contains("enable_model_cpu_offload") && !Catch::Contains("--per_device"));
  }
  SECTION("llama.cpp: KV-cache and compute-buffer failures change the context first, with the numbers of the log")
  {
    const std::string head = "llm_load_tensors: offloaded 33/33 layers to GPU\nllama_new_context_with_model: n_ctx      = 32768\n"
                             "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out "
                             "of memory\n";
    const auto kv = diagnose_text(head + "llama_kv_cache_init: failed to allocate buffer for kv cache");
    CHECK(kv.fixes[0].command == "-c 16384");
    CHECK(kv.fixes[1].id == "kv-cache-q8");
    const auto compute = diagnose_text(head + "llama_new_context_with_model: failed to allocate compute buffers");
    CHECK(compute.fixes[0].command == "-ub 256");
    const auto weights = diagnose_text(head + "llama_model_load: error loading model: unable to allocate CUDA0 buffer");
    CHECK(weights.fixes[0].command == "-ngl 16");  // half of the 33 layers
    const auto ollama = diagnose_text("time=2025-01-01T00:00:00Z level=INFO source=server.go:405 msg=\"starting llama server\" cmd=\"/usr/bin/ollama runner\"\n" +
                                      head + "llama_kv_cache_init: failed to allocate buffer for kv cache");
    CHECK(ollama.fixes[0].command == "OLLAMA_CONTEXT_LENGTH=16384 ollama serve");
  }
  SECTION("ROCm: rocm-smi, never nvidia-smi")
  {
    const auto d = diagnose_text("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of "
                                 "15.98 GiB of which 84.00 MiB is free. Process 9 has 4.00 GiB memory in use. Of the allocated memory "
                                 "11.44 GiB is allocated by PyTorch, and 267.59 MiB is reserved by PyTorch but unallocated.");
    CHECK_THAT(commands(d), Catch::Contains("rocm-smi") && !Catch::Contains("nvidia-smi"));
    CHECK_THAT(commands(d), !Catch::Contains("gpurent status"));  // doctor checks NVIDIA cards
  }
  SECTION("SGLang's minimum viable fraction makes the value; near the whole card, more GPUs first")
  {
    const auto d = diagnose_text("ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88. Raise "
                                 "--mem-fraction-static above 0.912 (minimum viable = 1 - available/pre = 0.9113).");
    CHECK(d.fixes[0].id == "mem-fraction-static");
    CHECK(d.fixes[0].command == "--mem-fraction-static 0.94");
    const auto full = diagnose_text("ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.9. Raise "
                                    "--mem-fraction-static above 0.961 (minimum viable = 1 - available/pre = 0.9604).");
    CHECK(full.fixes[0].command == "--tp 2");
  }
}

}  // namespace gpurent
