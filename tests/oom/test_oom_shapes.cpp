// SPDX-License-Identifier: MIT
// Property tests of the v2 shapes (spec/oom.md, "v2"): random numbers in every unit, the wording
// variants of each engine's versions, random wrapping; the numbers read back must be the ones
// printed, to the rounding of the message.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <random>
#include <string>
#include <vector>

#include "oom/diagnose.hpp"
#include "oom/parse.hpp"

namespace gpurent {
namespace {

struct Printed {
  std::string text;  // "12.34 GiB"
  Bytes bytes;       // what it stands for
};

// A random size printed in a random unit, as the engines print them.
Printed random_size(std::mt19937& rng, double max_gib = 200.0)
{
  static const std::vector<std::pair<std::string, std::uint64_t>> units{
      {"GiB", k_gib}, {"GB", k_gib}, {"MiB", k_mib}, {"MB", k_mib}, {"KiB", k_kib}, {"KB", k_kib}};
  std::uniform_real_distribution<double> gib(0.0, max_gib);
  std::uniform_int_distribution<std::size_t> pick(0, units.size() - 1);
  const auto& [unit, factor] = units[pick(rng)];
  const double value = gib(rng) * static_cast<double>(k_gib) / static_cast<double>(factor);
  if (value > 1e7) {
    return random_size(rng, max_gib);  // no engine prints 12345678.90 KiB
  }
  const std::string number = fmt::format("{:.2f}", value);
  const double printed = std::stod(number);
  return {number + " " + unit, Bytes{static_cast<std::uint64_t>(printed * static_cast<double>(factor) + 0.5)}};
}

// Breaks the message at random points (also inside words and numbers) with a log prefix.
std::string wrap_randomly(std::string_view message, std::mt19937& rng)
{
  std::uniform_int_distribution<int> percent(0, 99);
  std::string out;
  for (const char c : message) {
    if (percent(rng) < 4) {
      out += "\n[rank0]: ";
    }
    out += c;
  }
  return out;
}

OomReport parse_both(const std::string& message, std::mt19937& rng)
{
  const auto plain = parse_oom(message);
  INFO(message);
  REQUIRE(plain.has_value());
  const std::string wrapped = wrap_randomly(message, rng);
  INFO(wrapped);
  const auto again = parse_oom(wrapped);
  REQUIRE(again.has_value());
  CHECK(again->requested == plain->requested);
  CHECK(again->total == plain->total);
  CHECK(again->free == plain->free);
  CHECK(again->kind == plain->kind);
  return *plain;
}

bool near(Bytes a, Bytes b) { return (a.n > b.n ? a.n - b.n : b.n - a.n) <= 1; }

}  // namespace

TEST_CASE("v2 shapes: PyTorch on MPS in any unit and pool", "[sizing][oom_shapes]")
{
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) {
    const auto a = random_size(rng, 60);
    const auto o = random_size(rng, 60);
    const auto m = random_size(rng, 150);
    const auto r = random_size(rng, 8);
    const std::string pool = i % 3 == 0 ? " on shared pool" : i % 3 == 1 ? " on private pool" : "";
    const std::string message = fmt::format("{}MPS backend out of memory (MPS allocated: {}, other allocations: {}, max allowed: {}). "
                                            "Tried to allocate {}{}. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit",
                                            i % 2 == 0 ? "RuntimeError: " : "", a.text, o.text, m.text, r.text, pool);
    const OomReport rep = parse_both(message, rng);
    CHECK(rep.engine == OomEngine::pytorch_mps);
    CHECK(near(*rep.allocated, a.bytes));
    CHECK(near(*rep.other_allocations, o.bytes));
    CHECK(near(*rep.max_allowed, m.bytes));
    CHECK(near(*rep.requested, r.bytes));
    const auto d = diagnose_oom(rep, {});
    REQUIRE(d.need.has_value());
    CHECK(d.need->n == rep.allocated->n + rep.other_allocations->n + rep.requested->n);
    const bool too_large = d.need->n > rep.max_allowed->n;
    CHECK((std::find(d.causes.begin(), d.causes.end(), OomCause::job_too_large) != d.causes.end()) == too_large);
  }
}

TEST_CASE("v2 shapes: TensorFlow tensors of any shape, type and device", "[sizing][oom_shapes]")
{
  static const std::vector<std::pair<std::string, std::uint64_t>> types{
      {"float", 4}, {"half", 2}, {"bfloat16", 2}, {"double", 8}, {"int32", 4}, {"int64", 8}, {"uint8", 1}, {"complex64", 8}, {"bool", 1}};
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> dims(1, 5);
  std::uniform_int_distribution<std::uint64_t> dim(1, 600);
  std::uniform_int_distribution<std::size_t> pick(0, types.size() - 1);
  for (int i = 0; i < 200; ++i) {
    std::vector<std::uint64_t> shape;
    std::string text;
    std::uint64_t elements = 1;
    for (int k = dims(rng); k > 0; --k) {
      shape.push_back(dim(rng));
      elements *= shape.back();
      text += (text.empty() ? "" : ",") + std::to_string(shape.back());
    }
    const auto& [type, size] = types[pick(rng)];
    const bool cpu = i % 7 == 0;
    const int device = i % 4;
    const std::string message =
        fmt::format("ResourceExhaustedError: OOM when allocating tensor {}[{}] and type {} on /job:localhost/replica:0/task:0/"
                    "device:{}:{} by allocator {}\n\t [[{{{{node conv1}}}}]]",
                    i % 2 == 0 ? "with shape" : "of shape ", text, type, cpu ? "CPU" : "GPU", device, cpu ? "cpu" : "GPU_0_bfc");
    const OomReport rep = parse_both(message, rng);
    CHECK(rep.engine == OomEngine::tensorflow);
    CHECK(rep.tensor_shape == shape);
    CHECK(rep.dtype == type);
    REQUIRE(rep.requested.has_value());
    CHECK(rep.requested->n == elements * size);
    CHECK(rep.device == static_cast<std::uint32_t>(device));
    CHECK(rep.memory == (cpu ? OomMemory::host : OomMemory::device));
  }
}

TEST_CASE("v2 shapes: JAX/XLA allocation failures, with and without the BufferAssignment stats", "[sizing][oom_shapes]")
{
  std::mt19937 rng(13);
  std::uniform_int_distribution<std::uint64_t> bytes(1, 80ULL * k_gib);
  for (int i = 0; i < 150; ++i) {
    const std::uint64_t n = bytes(rng);
    const auto total = random_size(rng, 80);
    std::string message = fmt::format("jaxlib.xla_extension.XlaRuntimeError: {}: Out of memory while trying to allocate {} bytes.",
                                      i % 2 == 0 ? "RESOURCE_EXHAUSTED" : "Resource exhausted", n);
    if (i % 3 != 0) {
      message += fmt::format("\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    6.00MiB\n"
                             "              constant allocation:         0B\n                 total allocation:   {}\n"
                             "              total fragmentation:         0B (0.00%)\nPeak buffers:",
                             total.text);
    }
    const OomReport rep = parse_both(message, rng);
    CHECK(rep.engine == OomEngine::jax);
    CHECK(rep.requested == Bytes{n});
    if (i % 3 != 0) {
      REQUIRE(rep.xla_total.has_value());
      CHECK(near(*rep.xla_total, total.bytes));
      CHECK(rep.xla_parameters == Bytes{6 * k_mib});
    }
  }
  SECTION("the allocator's own request, on a device ordinal")
  {
    const OomReport rep = parse_both("RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 3", rng);
    CHECK(rep.requested == Bytes{3206250496});
    CHECK(rep.device == 3U);
  }
  SECTION("TPU compile: used of capacity, in XLA's K/M/G")
  {
    const OomReport rep = parse_both("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used "
                                     "63.80G of 30.75G hbm. Exceeded hbm capacity by 33.05G.",
                                     rng);
    CHECK(rep.xla_total == gib_to_bytes(63.80));
    CHECK(rep.total == gib_to_bytes(30.75));
    CHECK(rep.memory_space == "hbm");
  }
}

TEST_CASE("v2 shapes: vLLM's start-up check and v1 KV messages", "[sizing][oom_shapes]")
{
  std::mt19937 rng(14);
  std::uniform_real_distribution<double> share(0.0, 1.0);
  std::uniform_int_distribution<std::uint64_t> tokens(1024, 2'000'000);
  for (int i = 0; i < 150; ++i) {
    const double total = std::stod(fmt::format("{:.2f}", 8.0 + share(rng) * 180.0));
    const double free = std::stod(fmt::format("{:.2f}", total * share(rng)));
    const double util = std::stod(fmt::format("{:.2f}", 0.5 + share(rng) * 0.45));
    const std::string device = i % 2 == 0 ? "" : fmt::format(" cuda:{}", i % 8);
    const std::string message =
        fmt::format("ValueError: {}ree memory on device{} ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {:.2f} "
                    "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                    i % 3 == 0 ? "f" : "F", device, free, total, util, util * total);
    const OomReport rep = parse_both(message, rng);
    CHECK(rep.kind == OomKind::vllm_startup_memory);
    CHECK(near(*rep.total, gib_to_bytes(total)));
    CHECK(near(*rep.free, gib_to_bytes(free)));
    CHECK(*rep.gpu_memory_utilization == util);
    const auto d = diagnose_oom(rep, {});
    const double fits = static_cast<double>(rep.free->n) / static_cast<double>(rep.total->n);
    for (const auto& f : d.fixes) {
      if (f.command.starts_with("--gpu-memory-utilization ")) {
        CHECK(std::stod(f.command.substr(25)) <= fits);  // never more than was free
      }
    }
  }
  for (int i = 0; i < 150; ++i) {
    const std::uint64_t n = tokens(rng);
    const auto needed = random_size(rng, 100);
    const auto available = random_size(rng, 100);
    const std::string estimate = i % 2 == 0 ? "" : " Based on the available memory, the estimated maximum model length is 4321.";
    const std::string message = fmt::format("ValueError: To serve at least one request with the models's max seq len ({}), ({} KV cache "
                                            "is needed, which is larger than the available KV cache memory ({}).{} Try increasing "
                                            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                                            n, needed.text, available.text, estimate);
    const OomReport rep = parse_both(message, rng);
    CHECK(rep.max_model_len == n);
    CHECK(near(*rep.kv_cache_needed, needed.bytes));
    CHECK(near(*rep.kv_cache_available, available.bytes));
    const auto d = diagnose_oom(rep, {});
    REQUIRE(!d.fixes.empty());
    if (i % 2 == 1) {
      CHECK(d.fitting_max_model_len == 4321U);
    } else if (needed.bytes.n > 0) {
      const auto expected = static_cast<std::uint64_t>(static_cast<long double>(n) * static_cast<long double>(rep.kv_cache_available->n) /
                                                       static_cast<long double>(rep.kv_cache_needed->n));
      CHECK(d.fitting_max_model_len == expected);
      if (expected < n) {
        CHECK(d.fixes[0].command == fmt::format("--max-model-len {}", expected));
      } else {
        // Random sizes may say more is available than needed: a context at or above the job's own
        // is never proposed.
        for (const auto& f : d.fixes) {
          CHECK(f.command.find(fmt::format("--max-model-len {}", expected)) == std::string::npos);
        }
      }
    }
  }
}

TEST_CASE("v2 shapes: SGLang, TGI, Ollama and NCCL numbers in their wordings", "[sizing][oom_shapes]")
{
  std::mt19937 rng(15);
  std::uniform_int_distribution<std::uint64_t> count(1, 200'000);
  std::uniform_real_distribution<double> share(0.05, 0.95);
  for (int i = 0; i < 100; ++i) {
    const double fraction = std::stod(fmt::format("{:.2f}", share(rng)));
    const double minimum = std::stod(fmt::format("{:.4f}", share(rng)));
    const OomReport sglang =
        parse_both(i % 2 == 0 ? fmt::format("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current "
                                            "value: mem_fraction_static={}",
                                            fraction)
                              : fmt::format("ValueError: Loaded weights leave no GPU memory for the KV cache under "
                                            "--mem-fraction-static={}. Raise --mem-fraction-static above {:.3f} (minimum viable = 1 - "
                                            "available/pre = {}). If using speculative decoding, draft weights are now counted.",
                                            fraction, minimum, minimum),
                   rng);
    CHECK(sglang.engine == OomEngine::sglang);
    CHECK(sglang.mem_fraction_static == fraction);
    if (i % 2 == 1) {
      CHECK(sglang.min_mem_fraction_static == minimum);
    }

    const std::uint64_t prefill = count(rng);
    const std::uint64_t total = count(rng);
    const OomReport tgi = parse_both(
        i % 2 == 0 ? fmt::format("Error: Warmup(Generation(\"Not enough memory to handle {} prefill tokens. You need to decrease "
                                 "`--max-batch-prefill-tokens`\"))",
                                 prefill)
                   : fmt::format("Not enough memory to handle {} total tokens with {} prefill tokens. You need to decrease "
                                 "`--max-batch-total-tokens` or `--max-batch-prefill-tokens`",
                                 total, prefill),
        rng);
    CHECK(tgi.prefill_tokens == prefill);
    CHECK(tgi.batch_total_tokens == (i % 2 == 0 ? std::nullopt : std::optional(total)));

    const auto need = random_size(rng, 200);
    const auto have = random_size(rng, 200);
    const std::string body = fmt::format("model requires more system memory ({}) than is available ({})", need.text, have.text);
    const OomReport ollama =
        parse_both(i % 2 == 0 ? "ollama._types.ResponseError: " + body + " (status code: 500)" : "{\"error\":\"" + body + "\"}", rng);
    CHECK(ollama.memory == OomMemory::host);
    CHECK(near(*ollama.requested, need.bytes));
    CHECK(near(*ollama.free, have.bytes));

    const std::uint64_t bytes = count(rng) * 1024;
    const int device = i % 8;
    const OomReport nccl =
        parse_both(fmt::format("host:1:2 [{}] include/alloc.h:178 NCCL WARN Cuda failure {}'out of memory'\n\nhost:1:2 [{}] "
                               "include/alloc.h:185 NCCL WARN Failed to CUDA calloc {} bytes",
                               device, i % 2 == 0 ? "" : "2 ", device, bytes),
                   rng);
    CHECK(nccl.engine == OomEngine::nccl);
    CHECK(nccl.device == static_cast<std::uint32_t>(device));
    CHECK(nccl.requested == Bytes{bytes});
  }
}

TEST_CASE("v2 shapes: ggml buffers of every backend, and what they were for", "[sizing][oom_shapes]")
{
  std::mt19937 rng(16);
  std::uniform_int_distribution<std::uint64_t> size(1, 300ULL * k_gib);
  static const std::vector<std::string> stages{"llama_new_context_with_model: failed to allocate compute buffers",
                                               "llama_kv_cache_init: failed to allocate buffer for kv cache",
                                               "llama_model_load: error loading model: unable to allocate CUDA0 buffer", "main: done"};
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t n = size(rng);
    const int device = i % 4;
    const std::string backend = i % 5 == 0 ? "Metal" : i % 5 == 1 ? "CPU" : fmt::format("{}{}", i % 2 == 0 ? "CUDA" : "ROCm", device);
    const std::string& stage = stages[static_cast<std::size_t>(i) % stages.size()];
    const OomReport rep =
        parse_both(fmt::format("ggml_gallocr_reserve_n: failed to allocate {} buffer of size {}\n{}", backend, n, stage), rng);
    CHECK(rep.kind == OomKind::device_alloc);
    CHECK(rep.requested == Bytes{n});
    CHECK(rep.backend == backend);
    CHECK(rep.memory == (backend == "CPU" ? OomMemory::host : backend == "Metal" ? OomMemory::unified : OomMemory::device));
    CHECK(rep.rocm == backend.starts_with("ROCm"));
    const OomStage want = i % 4 == 0 ? OomStage::compute : i % 4 == 1 ? OomStage::kv_cache : i % 4 == 2 ? OomStage::weights : OomStage::unknown;
    CHECK(rep.stage == want);
    if (backend.size() > 4 && backend != "Metal") {
      CHECK(rep.device == static_cast<std::uint32_t>(device));
    }
  }
}

TEST_CASE("OomScanner: invalid numbers are clear errors", "[sizing][oom_parse]")
{
  const auto error_of = [](const std::string& size) {
    const auto r = parse_oom("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + size +
                             ". GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.");
    REQUIRE_FALSE(r.has_value());
    CHECK(exit_code_for(r.error().code) == 2);  // a malformed report: a usage error
    return r.error().message;
  };
  CHECK_THAT(error_of("1e309 GiB"), Catch::Contains("'1e309GiB' is not a finite number"));
  CHECK_THAT(error_of("-5 MiB"), Catch::Contains("'-5MiB' is negative"));
  CHECK_THAT(error_of("inf GiB"), Catch::Contains("not a finite number"));
  CHECK_THAT(error_of("2048 TiB"), Catch::Contains("larger than any GPU"));
  std::string nines(200, '9');
  nines += " GiB";
  CHECK_THAT(error_of(nines), Catch::Contains("too many digits"));
  CHECK_THAT(error_of("1e309 GiB"), Catch::Contains("on line 1"));
  const auto vllm = parse_oom("The model's max seq len (99999999999999999999999) is larger than the maximum number of tokens");
  REQUIRE_FALSE(vllm.has_value());
  CHECK_THAT(vllm.error().message, Catch::Contains("not a plausible count"));
}

TEST_CASE("OomScanner: units, partial and rare shapes", "[sizing][oom_parse]")
{
  SECTION("KB/MB/GB are read as the binary units PyTorch means")
  {
    const auto r = parse_oom("CUDA out of memory. Tried to allocate 2.00 GB (GPU 0; 8 GB total capacity; 512 MB already "
                             "allocated; 1024 KB free; 2048 bytes cached)");
    REQUIRE(r.has_value());
    CHECK(r->requested == Bytes{2 * k_gib});
    CHECK(r->allocated == Bytes{512 * k_mib});
    CHECK(r->free == Bytes{k_mib});
    CHECK(r->reserved_unallocated == Bytes{2048});
    CHECK(r->format == OomFormat::pytorch_legacy);
  }
  SECTION("a message cut short keeps what it gives")
  {
    const auto r = parse_oom("RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB.\nsomething else entirely");
    REQUIRE(r.has_value());
    CHECK(r->requested == Bytes{3 * k_gib / 2});
    CHECK_FALSE(r->total.has_value());
    CHECK(r->format == OomFormat::unknown);
  }
  SECTION("ROCm says HIP")
  {
    const auto r = parse_oom("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity "
                             "of 191.98 GiB of which 0 bytes is free. Of the allocated memory 190.00 GiB is allocated by PyTorch, "
                             "and 1.00 GiB is reserved by PyTorch but unallocated.");
    REQUIRE(r.has_value());
    CHECK(r->total == gib_to_bytes(191.98));
    CHECK(r->free == Bytes{0});
  }
  SECTION("allowed memory of set_per_process_memory_fraction")
  {
    const auto r = parse_oom("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.76 GiB total capacity; 12.82 GiB already "
                             "allocated; 33.75 MiB free; 13.59 GiB allowed; 13.73 GiB reserved in total by PyTorch)");
    REQUIRE(r.has_value());
    CHECK(r->allowed == gib_to_bytes(13.59));
    CHECK(r->format == OomFormat::pytorch_1x);
  }
  SECTION("a new report interrupts one cut short")
  {
    const auto r = parse_oom("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of CUDA out of memory. "
                             "Tried to allocate 3.00 GiB (GPU 2; 10.00 GiB total capacity; 1.00 GiB already allocated; 1.00 GiB "
                             "free; 2.00 GiB reserved in total by PyTorch)");
    REQUIRE(r.has_value());
    CHECK(r->device == 2U);
    CHECK(r->requested == Bytes{3 * k_gib});
  }
}

TEST_CASE("v2 shapes: lines that amend a report are reports of their own when nothing comes before", "[sizing][oom_shapes]")
{
  const auto kv = parse_oom("llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache");
  REQUIRE(kv.has_value());
  CHECK(kv->kind == OomKind::device_alloc);
  CHECK(kv->stage == OomStage::kv_cache);
  CHECK_FALSE(kv->requested.has_value());
  const auto nccl = parse_oom("host:1:2 [1] include/alloc.h:185 NCCL WARN Failed to CUDA malloc 2097152 bytes");
  REQUIRE(nccl.has_value());
  CHECK(nccl->engine == OomEngine::nccl);
  CHECK(nccl->device == 1U);
  CHECK(nccl->requested == Bytes{2 * k_mib});
  const auto ollama = parse_oom("time=2025-02-21T01:41:16Z level=ERROR source=sched.go:455 msg=\"error loading llama server\" "
                                "error=\"llama runner process has terminated: cudaMalloc failed: out of memory\"");
  REQUIRE(ollama.has_value());
  CHECK(ollama->engine == OomEngine::ollama);
}

}  // namespace gpurent
