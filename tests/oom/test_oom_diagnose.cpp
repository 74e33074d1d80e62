// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "oom/diagnose.hpp"

namespace gpurent {
namespace {

std::vector<nlohmann::json> examples()
{
  std::vector<nlohmann::json> out;
  for (const char* name : {"oom_public.json", "public_more.json", "public_v2.json"}) {
    std::ifstream in(std::string(GPURENT_TEST_DATA) + "/oom/" + name);
    REQUIRE(in);
    const auto data = nlohmann::json::parse(in);
    for (const auto& e : data.is_array() ? data : data["reports"]) {
      out.push_back(e);
    }
  }
  return out;
}

std::vector<std::string> cause_names(const OomDiagnosis& d)
{
  std::vector<std::string> out;
  for (const auto c : d.causes) {
    out.emplace_back(to_string(c));
  }
  return out;
}

OomDiagnosis diagnose_text(const std::string& text, std::span<const OomCardOption> options = {},
                           const std::optional<OomCardOption>& given = std::nullopt)
{
  const auto report = parse_oom(text);
  REQUIRE(report.has_value());
  return diagnose_oom(*report, options, given);
}

bool has_fix(const OomDiagnosis& d, const std::string& id)
{
  return std::any_of(d.fixes.begin(), d.fixes.end(), [&](const OomFix& f) { return f.id == id; });
}

const std::string k_seed =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\nGPU 0 has a total capacity of 23.65 GiB of which "
    "1.12 GiB is free. Of the allocated memory 20.84 GiB is allocated by PyTorch, and 1.03 GiB\nis reserved by PyTorch but "
    "unallocated.";

}  // namespace

TEST_CASE("diagnose_oom: need, others and causes of every public example", "[sizing][oom_diagnose]")
{
  for (const auto& example : examples()) {
    INFO("example " << example["id"].get<std::string>());
    const auto report = parse_oom(example["message"].get<std::string>());
    REQUIRE(report.has_value());
    const auto d = diagnose_oom(*report, {});
    const auto& expect = example["expect"];
    CHECK(cause_names(d) == expect["causes"].get<std::vector<std::string>>());
    if (expect.contains("need_gib")) {
      REQUIRE(d.need.has_value());
      CHECK(std::abs(to_gib(*d.need) - expect["need_gib"].get<double>()) <= 1e-6);
    } else if (report->engine != OomEngine::pytorch) {
      CHECK_FALSE(d.need.has_value());
    }
    if (expect.contains("other_processes_gib")) {
      REQUIRE(d.other_processes.has_value());
      CHECK(std::abs(to_gib(*d.other_processes) - expect["other_processes_gib"].get<double>()) <= 1e-6);
    }
    if (expect.contains("self_process")) {
      REQUIRE(d.self_process.has_value());
      CHECK(d.self_process->pid == expect["self_process"]["pid"].get<std::uint64_t>());
    } else {
      CHECK_FALSE(d.self_process.has_value());
    }
    REQUIRE_FALSE(d.fixes.empty());
    const auto any_command = [&](const std::string& part) {
      return std::any_of(d.fixes.begin(), d.fixes.end(), [&](const OomFix& f) { return f.command.find(part) != std::string::npos; });
    };
    for (const auto& part : expect.value("commands_include", nlohmann::json::array())) {
      INFO("command with " << part.get<std::string>());
      CHECK(any_command(part.get<std::string>()));
    }
    for (const auto& part : expect.value("commands_exclude", nlohmann::json::array())) {
      INFO("no command with " << part.get<std::string>());
      CHECK_FALSE(any_command(part.get<std::string>()));
    }
    if (expect.contains("first_fix")) {
      CHECK(d.fixes[0].id == expect["first_fix"].get<std::string>());
    }
    if (expect.contains("first_fix_not")) {
      CHECK(d.fixes[0].id != expect["first_fix_not"].get<std::string>());
    }
  }
}

TEST_CASE("diagnose_oom: no fix command holds a placeholder, no first fix reports nothing", "[sizing][oom_diagnose]")
{
  const auto placeholder = [](const std::string& command) {
    std::string token;
    for (std::size_t i = 0; i <= command.size(); ++i) {
      const char c = i < command.size() ? command[i] : ' ';
      if (c == ' ' || c == '=' || c == ',' || c == '(' || c == ')') {
        // An upper-case word alone ("NAME", "MODEL", "K", "N") stands for something to fill in.
        const bool upper = !token.empty() && token.size() <= 8 &&
                           std::all_of(token.begin(), token.end(), [](char x) { return x >= 'A' && x <= 'Z'; });
        if (upper) {
          return true;
        }
        token.clear();
      } else {
        token += c;
      }
    }
    return command.find('<') != std::string::npos || command.find("...") != std::string::npos;
  };
  for (const auto& example : examples()) {
    INFO("example " << example["id"].get<std::string>());
    const auto report = parse_oom(example["message"].get<std::string>());
    REQUIRE(report.has_value());
    const auto d = diagnose_oom(*report, {});
    for (const auto& f : d.fixes) {
      INFO("fix " << f.id << ": " << f.command);
      CHECK_FALSE(placeholder(f.command));
      // Sizes print with their own unit: never "0.00 GiB" for a small size.
      for (std::size_t at = f.description.find("0.00 GiB"); at != std::string::npos; at = f.description.find("0.00 GiB", at + 1)) {
        CHECK((at > 0 && f.description[at - 1] >= '0' && f.description[at - 1] <= '9'));
      }
    }
    const bool names_others = d.fixes[0].description.find("Other processes hold") != std::string::npos;
    CHECK((!names_others || d.other_processes->n >= k_gib));
  }
}

TEST_CASE("diagnose_oom: the seed's arithmetic, step by step", "[sizing][oom_diagnose]")
{
  const auto d = diagnose_text(k_seed);
  CHECK(d.non_pytorch_estimated);
  CHECK(d.non_pytorch == Bytes{k_gib / 2});
  REQUIRE(d.footprint.has_value());
  CHECK(std::abs(to_gib(*d.footprint) - 22.37) < 1e-6);
  REQUIRE(d.other_processes.has_value());
  CHECK(std::abs(to_gib(*d.other_processes) - 0.16) < 1e-6);
  CHECK(cause_names(d) == std::vector<std::string>{"job_too_large"});
  // The seeds' order: batch, context, precision, checkpointing, quantization, inference, offload.
  REQUIRE(d.fixes.size() >= 7);
  CHECK(d.fixes[0].id == "reduce-batch");
  CHECK(d.fixes[1].id == "reduce-context");
  CHECK(d.fixes[2].id == "mixed-precision");
  CHECK(d.fixes[3].id == "gradient-checkpointing");
  CHECK(d.fixes[4].id == "quantize");
}

TEST_CASE("diagnose_oom: fixes carry the concrete commands of each cause", "[sizing][oom_diagnose]")
{
  SECTION("fragmentation on PyTorch >= 2.2 names PYTORCH_ALLOC_CONF and its alias")
  {
    const auto d = diagnose_text("CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which "
                                 "1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. Of the "
                                 "allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but "
                                 "unallocated.");
    REQUIRE(cause_names(d) == std::vector<std::string>{"fragmentation"});
    CHECK(d.fixes[0].command == "PYTORCH_ALLOC_CONF=expandable_segments:True");
    CHECK_THAT(d.fixes[0].description, Catch::Contains("PYTORCH_CUDA_ALLOC_CONF"));
    CHECK_FALSE(d.non_pytorch_estimated);
    CHECK(std::abs(to_gib(d.non_pytorch) - 3.88) < 1e-6);
  }
  SECTION("TensorRT-LLM: little free when the KV cache was created is the weights' and activations' doing")
  {
    const std::string head = "[TRT-LLM] [E] Failed to initialize executor on rank 0: Executor creation failed due to insufficient "
                             "GPU memory.\n\nThe following component could not be created: ";
    const auto little = diagnose_text(head + "KV cache\nTotal GPU memory (GiB): 79.11\nFree GPU memory before component creation "
                                             "attempt (GiB): 1.20\n");
    REQUIRE(cause_names(little) == std::vector<std::string>{"no_kv_cache_memory"});
    CHECK(little.fixes[0].command == "--max_num_tokens 4096");
    // A tenth of the card (7.911 GiB) or more free: TensorRT-LLM's own estimate asked for more.
    const auto tenth = diagnose_text(head + "KV cache\nTotal GPU memory (GiB): 79.11\nFree GPU memory before component creation "
                                            "attempt (GiB): 7.92\n");
    CHECK(cause_names(tenth).empty());
    CHECK(tenth.fixes[0].command == "--kv_cache_free_gpu_memory_fraction 0.45");
    // Another component: the job is larger than the GPU; the fixes split or quantize the weights.
    const auto model = diagnose_text(head + "model\nTotal GPU memory (GiB): 23.53\nFree GPU memory before component creation "
                                            "attempt (GiB): 22.90\n");
    REQUIRE(cause_names(model) == std::vector<std::string>{"job_too_large"});
    CHECK(model.fixes[0].command == "--tp_size 2");
  }
  SECTION("TensorRT-LLM: no free KV blocks at run time is the requests outgrowing the pool")
  {
    // The message of kvCacheManager.cpp's TLLM_CHECK_WITH_INFO (quoted in its docs/source/reference/
    // memory.md, tests/data/trtllm/oom.md #6) in the "Assertion failed: ... (<file>:<line>)" form its
    // TLLM_CHECK failures print (NVIDIA/TensorRT-LLM#2708); the newer one names the attention window.
    const std::string head = "[TensorRT-LLM][ERROR] Encountered an error in forwardAsync function: [TensorRT-LLM][ERROR] Assertion "
                             "failed: ";
    const std::string file = " (/home/jenkins/agent/workspace/LLM/main/L0_PostMerge/llm/cpp/tensorrt_llm/batch_manager/"
                             "kvCacheManager.cpp:1508)";
    for (const std::string message : {"Can't allocate new blocks. No free blocks left.",
                                      "Can't allocate new blocks for window size 4096. No free blocks left."}) {
      INFO(message);
      const auto report = parse_oom(head + message + file);
      REQUIRE(report.has_value());
      CHECK(report->engine == OomEngine::tensorrt_llm);
      CHECK(report->format == OomFormat::trtllm_kv_blocks);
      const auto d = diagnose_text(head + message + file);
      REQUIRE(cause_names(d) == std::vector<std::string>{"context_exceeds_kv_cache"});
      REQUIRE(d.fixes.size() >= 5);
      CHECK(d.fixes[0].command == "--max_batch_size 256");
      CHECK(d.fixes[1].command == "--kv_cache_dtype fp8");
      CHECK(d.fixes[2].command == "--kv_cache_free_gpu_memory_fraction 0.95");
      CHECK(d.fixes[4].command == "--tp_size 2");
    }
    // After a PyTorch report in the same log it is a report of its own, not an echo of that one.
    const auto later = parse_oom("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
                                 "0.50 GiB is free.\n" + head + "Can't allocate new blocks. No free blocks left." + file);
    REQUIRE(later.has_value());
    CHECK(later->format == OomFormat::trtllm_kv_blocks);
    CHECK(later->line == 2);
  }
  SECTION("another process: nvidia-smi first, then gpurent doctor")
  {
    const auto d = diagnose_text("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which "
                                 "0.50 GiB is free. Process 4242 has 40.00 GiB memory in use. Including non-PyTorch memory, this "
                                 "process has 38.00 GiB memory in use. Of the allocated memory 37.00 GiB is allocated by PyTorch, "
                                 "and 0.20 GiB is reserved by PyTorch but unallocated.");
    REQUIRE(cause_names(d) == std::vector<std::string>{"other_process", "job_too_large"});
    CHECK(d.fixes[0].command == "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv");
    CHECK(d.fixes[1].command == "gpurent status");  // names the rented server for `gpurent doctor`
    CHECK(std::abs(to_gib(*d.other_processes) - 40.69) < 1e-6);  // T - F - P beats the listed 40 GiB
  }
  SECTION("vLLM context: --max-model-len with the KV cache's size")
  {
    const auto d = diagnose_text("The model's max seq len (8192) is larger than the maximum number of tokens that can be stored in "
                                 "KV cache (6048).");
    CHECK(d.fixes[0].command == "--max-model-len 6048");
    CHECK(has_fix(d, "gpu-memory-utilization"));
  }
  SECTION("llama.cpp loading weights: -ngl, quant type, -c, KV cache types, in that order")
  {
    const auto d = diagnose_text("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 1: cudaMalloc "
                                 "failed: out of memory");
    CHECK(d.causes.empty());
    REQUIRE(d.fixes.size() >= 4);
    CHECK(d.fixes[0].command == "-ngl 16");
    CHECK(d.fixes[1].id == "smaller-quant");
    CHECK(d.fixes[2].command == "-c 8192");
    CHECK_THAT(d.fixes[3].command, Catch::Contains("--cache-type-k q8_0"));
    REQUIRE(d.card_need.has_value());
    CHECK(*d.card_need == Bytes{k_gib});
  }
  SECTION("free memory was enough: limit_not_capacity, and how to check each limit first")
  {
    const auto d = diagnose_text("CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 10.00 GiB total capacity; 2.00 GiB "
                                 "already allocated; 7.00 GiB free; 2.50 GiB reserved in total by PyTorch)");
    CHECK(cause_names(d) == std::vector<std::string>{"limit_not_capacity"});
    CHECK(d.fixes[0].id == "check-memory-limit");
    CHECK_THAT(d.fixes[0].command, Catch::Contains("mig.mode.current"));
    CHECK(has_fix(d, "free-other-processes"));
    CHECK(d.fixes.back().command == "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128");  // 1.x has no expandable_segments
  }
}

// Every flag a TensorRT-LLM fix names is one trtllm-serve accepts (tests/data/engine_flags/trtllm.json,
// read from its source), and the defaults the fixes quote and halve are its own.
TEST_CASE("diagnose_oom: TensorRT-LLM's fixes use trtllm-serve's own flags and defaults", "[sizing][oom_diagnose]")
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/engine_flags/trtllm.json");
  REQUIRE(in);
  const auto table = nlohmann::json::parse(in);
  const auto& flags = table["flags"];
  const auto known = [&](const std::string& flag) {
    if (flags.contains(flag)) {
      return true;
    }
    return std::any_of(flags.begin(), flags.end(), [&](const nlohmann::json& f) {
      const auto aliases = f.value("aliases", std::vector<std::string>{});
      return std::find(aliases.begin(), aliases.end(), flag) != aliases.end();
    });
  };
  CHECK(flags["--max_num_tokens"]["default"] == 8192);
  CHECK(flags["--max_batch_size"]["default"] == 2048);
  CHECK(std::abs(flags["--kv_cache_free_gpu_memory_fraction"]["default"].get<double>() - 0.9) < 1e-9);
  const std::string head = "Executor creation failed due to insufficient GPU memory.\nThe following component could not be created: ";
  const std::vector<std::string> logs = {
      head + "KV cache\nTotal GPU memory (GiB): 79.11\nFree GPU memory before component creation attempt (GiB): 1.20\n",
      head + "KV cache\nTotal GPU memory (GiB): 79.11\nFree GPU memory before component creation attempt (GiB): 40.00\n",
      head + "model\nTotal GPU memory (GiB): 23.53\nFree GPU memory before component creation attempt (GiB): 22.90\n",
      "[TRT-LLM] [RANK 0] [E] CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB of which "
      "1.00 GiB is free. Including non-PyTorch memory, this process has 78.10 GiB memory in use. Of the allocated memory 70.00 "
      "GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.",
      "[TensorRT-LLM][ERROR] Assertion failed: Can't allocate new blocks. No free blocks left. (kvCacheManager.cpp:1508)",
  };
  std::size_t checked = 0;
  for (const auto& log : logs) {
    INFO(log);
    for (const auto& fix : diagnose_text(log).fixes) {
      // The default a fix quotes is the table's (the C++ keeps its own copy of each).
      if (fix.id == "max-num-tokens" || fix.id == "max-batch-size") {
        const std::string flag = fix.id == "max-num-tokens" ? "--max_num_tokens" : "--max_batch_size";
        CHECK_THAT(fix.description, Catch::Contains("(default " + flags[flag]["default"].dump() + ")"));
      }
      std::istringstream words(fix.command);
      for (std::string word; words >> word;) {
        if (word.starts_with("--") && word.find('_') != std::string::npos) {
          CHECK(known(word));
          ++checked;
        }
      }
    }
  }
  CHECK(checked >= 17);
}

TEST_CASE("oom_size: never rounds a size to nothing", "[sizing][oom_diagnose]")
{
  CHECK(oom_size(Bytes{2 * k_mib}) == "2.00 MiB");
  CHECK(oom_size(Bytes{512}) == "512 bytes");
  CHECK(oom_size(Bytes{1536}) == "1.50 KiB");
  CHECK(oom_size(gib_to_bytes(203.42)) == "203.42 GiB");
}

TEST_CASE("diagnose_oom: a 0-byte 'this process' falls back to the CUDA context estimate", "[sizing][oom_diagnose]")
{
  const auto d = diagnose_text("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 10.00 GiB of which "
                               "0 bytes is free. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the "
                               "allocated memory 8.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but "
                               "unallocated.");
  CHECK(d.non_pytorch_estimated);
  CHECK(*d.need == Bytes{19 * k_gib / 2});
  CHECK(*d.footprint == Bytes{19 * k_gib / 2});
}

TEST_CASE("diagnose_oom: the smallest card that holds need / 0.95, cheapest offer first", "[sizing][oom_diagnose]")
{
  const std::vector<OomCardOption> options{
      {"small", "Small 16GB", Bytes{16 * k_gib}, "a", 1, MicroUsd{100'000}},
      {"exact", "Exact", Bytes{0}, "a", 1, MicroUsd{900'000}},  // usable set below
      {"big", "Big 48GB", Bytes{48 * k_gib}, "b", 1, MicroUsd{500'000}},
      {"big", "Big 48GB", Bytes{48 * k_gib}, "c", 1, MicroUsd{400'000}},
      {"big", "Big 48GB", Bytes{48 * k_gib}, "d", 8, MicroUsd{3'200'000}},
      {"huge", "Huge", Bytes{96 * k_gib}, "", 1, std::nullopt},
  };
  const auto report = parse_oom(k_seed);
  REQUIRE(report.has_value());
  const auto base = diagnose_oom(*report, {});
  REQUIRE(base.need.has_value());
  auto with_exact = options;
  // usable such that usable * 0.95 == need exactly (integer rule of fit_limit): still fits.
  with_exact[1].usable = Bytes{base.need->n / 95 * 100 + (base.need->n % 95 == 0 ? 0 : 100)};
  REQUIRE(oom_fit_limit(with_exact[1].usable) >= *base.need);

  SECTION("cheapest offer of the smallest card")
  {
    const auto d = diagnose_oom(*report, options);
    REQUIRE(d.card.has_value());
    CHECK(d.card->card == "big");
    CHECK(d.card->provider == "c");
  }
  SECTION("a card right at the limit is the smallest")
  {
    const auto d = diagnose_oom(*report, with_exact);
    REQUIRE(d.card.has_value());
    CHECK(d.card->card == "exact");
  }
  SECTION("nothing offered fits: a card nobody offers, then nothing")
  {
    const std::vector<OomCardOption> only_huge{options[0], options[5]};
    CHECK(diagnose_oom(*report, only_huge).card->card == "huge");
    const std::vector<OomCardOption> none{options[0]};
    const auto d = diagnose_oom(*report, none);
    CHECK_FALSE(d.card.has_value());
    CHECK(has_fix(d, "larger-card"));
  }
  SECTION("--card: fits or not, against usable minus 5%")
  {
    const auto fits = diagnose_oom(*report, options, options[2]);
    REQUIRE(fits.on_card.has_value());
    CHECK(fits.on_card->fits);
    const auto not_fits = diagnose_oom(*report, options, options[0]);
    CHECK_FALSE(not_fits.on_card->fits);
    CHECK(not_fits.on_card->limit == oom_fit_limit(Bytes{16 * k_gib}));
  }
}

TEST_CASE("diagnose_oom: with the real catalogue the card holds need / 0.95 and nothing smaller does", "[sizing][oom_diagnose]")
{
  std::vector<OomCardOption> options;
  for (const auto& card : card_catalog()) {
    for (const auto& offer : builtin_offers()) {
      if (offer.card == card.id) {
        options.push_back({card.id, card.display, card.usable, offer.provider, offer.gpus, offer.price_per_hour});
      }
    }
  }
  REQUIRE_FALSE(options.empty());
  const auto d = diagnose_text(k_seed, options);
  REQUIRE(d.card.has_value());
  CHECK(fit_limit(*find_card(d.card->card)) >= *d.need);
  for (const auto& o : options) {
    if (o.usable < d.card->usable) {
      CHECK(oom_fit_limit(o.usable) < *d.need);
    }
    if (o.card == d.card->card) {
      CHECK(o.price_per_hour->n >= d.card->price_per_hour->n);
    }
  }
}

}  // namespace gpurent
