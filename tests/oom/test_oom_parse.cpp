// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oom/parse.hpp"

namespace gpurent {
namespace {

nlohmann::json load_oom_data(const std::string& name)
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/oom/" + name);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// Every real message with its expectations: oom_public.json, public_more.json, public_v2.json.
std::vector<nlohmann::json> all_examples()
{
  std::vector<nlohmann::json> out;
  for (const auto& e : load_oom_data("oom_public.json")) {
    out.push_back(e);
  }
  for (const char* name : {"public_more.json", "public_v2.json"}) {
    const auto more = load_oom_data(name);  // kept alive for the loop
    for (const auto& e : more["reports"]) {
      out.push_back(e);
    }
  }
  return out;
}

std::vector<nlohmann::json> all_near_misses()
{
  std::vector<nlohmann::json> out;
  for (const char* name : {"public_more.json", "public_v2.json"}) {
    const auto more = load_oom_data(name);
    for (const auto& e : more["not_reports"]) {
      out.push_back(e);
    }
  }
  return out;
}

std::optional<Bytes> report_size(const OomReport& r, const std::string& key)
{
  // vLLM v1: the KV cache needed is the request, the KV memory available what was free.
  const bool kv = r.kind == OomKind::kv_cache_too_small;
  if (key == "requested_gib") return kv && !r.requested ? r.kv_cache_needed : r.requested;
  if (key == "total_gib") return r.total;
  if (key == "free_gib") return kv && !r.free ? r.kv_cache_available : r.free;
  if (key == "allowed_gib") return r.allowed;
  if (key == "other_allocations_gib") return r.other_allocations;
  if (key == "max_allowed_gib") return r.max_allowed;
  if (key == "weights_gib") return r.weights;
  if (key == "avail_after_weights_gib") return r.avail_after_weights;
  if (key == "xla_total_gib") return r.xla_total;
  if (key == "xla_parameters_gib") return r.xla_parameters;
  if (key == "xla_temp_gib") return r.xla_temp;
  if (key == "xla_live_out_gib") return r.xla_live_out;
  if (key == "xla_fragmentation_gib") return r.xla_fragmentation;
  if (key == "process_in_use_gib") return r.process_in_use;
  if (key == "allocated_gib") return r.allocated;
  if (key == "reserved_unallocated_gib") return r.reserved_unallocated;
  if (key == "kv_cache_needed_gib") return r.kv_cache_needed;
  if (key == "kv_cache_available_gib") return r.kv_cache_available;
  FAIL("unknown size key " << key);
  return std::nullopt;
}

// Compares the report-level keys of `expect`; diagnosis keys are checked in test_oom_diagnose.
void check_report(const nlohmann::json& expect, const OomReport& r)
{
  for (const auto& [key, value] : expect.items()) {
    INFO("key " << key);
    if (key == "engine") {
      CHECK(to_string(r.engine) == value.get<std::string>());
    } else if (key == "format") {
      CHECK(to_string(r.format) == value.get<std::string>());
    } else if (key == "device") {
      REQUIRE(r.device.has_value());
      CHECK(*r.device == value.get<std::uint32_t>());
    } else if (key == "max_model_len" || key == "kv_cache_tokens" || key == "gpu_blocks" || key == "prefill_tokens" ||
               key == "batch_total_tokens" || key == "max_num_seqs") {
      const auto& field = key == "max_model_len"     ? r.max_model_len
                          : key == "kv_cache_tokens" ? r.kv_cache_tokens
                          : key == "gpu_blocks"      ? r.gpu_blocks
                          : key == "prefill_tokens"  ? r.prefill_tokens
                          : key == "max_num_seqs"    ? r.max_num_seqs
                                                     : r.batch_total_tokens;
      REQUIRE(field.has_value());
      CHECK(*field == value.get<std::uint64_t>());
    } else if (key == "mem_fraction_static" || key == "gpu_memory_utilization") {
      const auto& field = key == "mem_fraction_static" ? r.mem_fraction_static : r.gpu_memory_utilization;
      REQUIRE(field.has_value());
      CHECK(std::abs(*field - value.get<double>()) < 1e-9);
    } else if (key == "memory") {
      CHECK(to_string(r.memory) == value.get<std::string>());
    } else if (key == "raised_in") {
      CHECK(to_string(r.context) == value.get<std::string>());
    } else if (key == "stage") {
      CHECK(to_string(r.stage) == value.get<std::string>());
    } else if (key == "backend" || key == "dtype" || key == "memory_space" || key == "component") {
      CHECK((key == "backend" ? r.backend : key == "dtype" ? r.dtype : key == "component" ? r.component : r.memory_space) ==
            value.get<std::string>());
    } else if (key == "rocm") {
      CHECK(r.rocm == value.get<bool>());
    } else if (key == "process_in_use_invalid") {
      CHECK(r.process_in_use_invalid == value.get<bool>());
      CHECK_FALSE(r.process_in_use.has_value());
    } else if (key == "tensor_shape") {
      CHECK(r.tensor_shape == value.get<std::vector<std::uint64_t>>());
    } else if (key == "need_gib" || key == "other_processes_gib" || key == "causes" || key == "self_process" ||
               key.starts_with("commands_") || key.starts_with("first_fix")) {
      continue;  // diagnosis keys: test_oom_diagnose.cpp
    } else {
      const auto size = report_size(r, key);
      REQUIRE(size.has_value());
      // The expectations are rounded to 6 decimals; the message itself to 2.
      CHECK(std::abs(to_gib(*size) - value.get<double>()) <= 1e-6);
    }
  }
}

// `with_context`: also which engine the log around names (a line break inside a prefix such as
// vLLM's "ERROR 03-13 09:00:43 [core.py:330]" hides it, as it would in a real log).
bool same_report(const OomReport& a, const OomReport& b, bool with_context = true)
{
  const auto sizes_equal = [](const std::vector<OomOtherProcess>& x, const std::vector<OomOtherProcess>& y) {
    if (x.size() != y.size()) {
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].pid != y[i].pid || x[i].used != y[i].used) {
        return false;
      }
    }
    return true;
  };
  return a.engine == b.engine && a.format == b.format && a.kind == b.kind && a.memory == b.memory && a.stage == b.stage &&
         a.rocm == b.rocm && (!with_context || a.context == b.context) && a.backend == b.backend && a.device == b.device && a.requested == b.requested &&
         a.total == b.total && a.free == b.free && a.process_in_use == b.process_in_use && a.allocated == b.allocated &&
         a.reserved_unallocated == b.reserved_unallocated && a.private_pools == b.private_pools && a.allowed == b.allowed &&
         a.max_model_len == b.max_model_len && a.kv_cache_tokens == b.kv_cache_tokens && a.gpu_blocks == b.gpu_blocks &&
         a.kv_cache_needed == b.kv_cache_needed && a.kv_cache_available == b.kv_cache_available &&
         a.other_allocations == b.other_allocations && a.max_allowed == b.max_allowed && a.prefill_tokens == b.prefill_tokens &&
         a.batch_total_tokens == b.batch_total_tokens && a.mem_fraction_static == b.mem_fraction_static &&
         a.min_mem_fraction_static == b.min_mem_fraction_static && a.gpu_memory_utilization == b.gpu_memory_utilization &&
         a.weights == b.weights && a.xla_total == b.xla_total && a.tensor_shape == b.tensor_shape && a.dtype == b.dtype &&
         a.other_processes_sum == b.other_processes_sum && sizes_equal(a.other_processes, b.other_processes);
}

Result<OomReport> parse_in_chunks(std::string_view text, std::mt19937& rng, std::size_t max_chunk)
{
  OomScanner scanner;
  std::uniform_int_distribution<std::size_t> size(1, max_chunk);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = std::min(size(rng), text.size() - i);
    scanner.feed(text.substr(i, n));
    i += n;
  }
  return scanner.finish();
}

// Re-wraps a message the way logs do: line breaks at random points (also inside words and
// numbers), then a log prefix on every line and colour codes between words. The prefixes here
// name no engine (those that do, "(EngineCore_DP0 pid=1)", "ollama  |", are tested apart).
std::string rewrap(std::string_view message, std::mt19937& rng)
{
  static const std::vector<std::string> prefixes{
      "[rank3]: ",
      "[default0]:",
      "[1,0]<stderr>:",
      "2024-06-28T06:11:45.123456Z ",
      "[2025-03-10T15:07:20Z] ",
      "2024-04-27 10:13:05 | ERROR | stderr | ",
      "trainer-1  | ",
      "worker  | ",
      "(RayWorkerWrapper pid=20770, ip=10.0.0.1) ",
      "1.06.520.077 E ",
      "Apr 17 01:25:10 ai-pc kernel[56169]: ",
      "E0628 06:11:45.123456 12345 train.cc:12] ",
      "2024-06-28T06:11:45.123456789Z stderr F ",
      "\x1b[36mworker-2  |\x1b[0m ",
      "[rank0]: \x1b[1;31m",
      "12:01:02.345 ",
  };
  std::uniform_int_distribution<std::size_t> pick(0, prefixes.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  const std::string prefix = prefixes[pick(rng)];
  std::string out = prefix;
  std::size_t column = 0;
  for (const char c : message) {
    if (c == '\n') {
      out += "\r\n" + prefix;
      column = 0;
      continue;
    }
    ++column;
    const int roll = percent(rng);
    const bool escape = !out.empty() && out.back() == '\\';  // a log never splits "\n" written as an escape
    if (roll < 3 && column > 16 && !escape) {  // not inside the message's own line prefix ("1.06.520.077 E ")
      out += '\n' + prefix;  // a break inside the message, even inside a word
    } else if (roll < 5 && c == ' ') {
      out += "\x1b[0m";
    } else if (roll == 5 && c == ' ') {
      out += "^[[33m";
    }
    out += c;
  }
  return out;
}

}  // namespace

TEST_CASE("OomScanner: every public example is read with the expected numbers", "[sizing][oom_parse]")
{
  for (const auto& example : all_examples()) {
    INFO("example " << example["id"].get<std::string>());
    const auto report = parse_oom(example["message"].get<std::string>());
    REQUIRE(report.has_value());
    check_report(example["expect"], *report);
  }
}

TEST_CASE("OomScanner: text that only looks like a report is not one", "[sizing][oom_parse]")
{
  for (const auto& example : all_near_misses()) {
    INFO("example " << example["id"].get<std::string>());
    const auto report = parse_oom(example["message"].get<std::string>());
    REQUIRE_FALSE(report.has_value());
    CHECK(report.error().message.find(example["expect_error"].get<std::string>()) != std::string::npos);
    CHECK(exit_code_for(report.error().code) == 1);
  }
}

TEST_CASE("OomScanner: wrapping, prefixes and colours do not change what is read", "[sizing][oom_parse]")
{
  std::mt19937 rng(20261130);
  for (const auto& example : all_examples()) {
    const std::string message = example["message"].get<std::string>();
    const auto plain = parse_oom(message);
    REQUIRE(plain.has_value());
    for (int round = 0; round < 25; ++round) {
      const std::string wrapped = rewrap(message, rng);
      INFO("example " << example["id"].get<std::string>() << "\n" << wrapped);
      const auto report = parse_oom(wrapped);
      REQUIRE(report.has_value());
      CHECK(same_report(*plain, *report, false));
    }
  }
}

TEST_CASE("OomScanner: the result does not depend on how the input is chunked", "[sizing][oom_parse]")
{
  std::mt19937 rng(7);
  std::string log;
  for (const auto& example : all_examples()) {
    log += "step 12 loss 0.731\n" + example["message"].get<std::string>() + "\nTraceback (most recent call last):\n";
  }
  std::vector<std::string> inputs{log};
  for (const auto& example : all_examples()) {
    inputs.push_back(example["message"].get<std::string>());
  }
  for (const auto& input : inputs) {
    const auto whole = parse_oom(input);
    REQUIRE(whole.has_value());
    for (const std::size_t max_chunk : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{4096}}) {
      const auto chunked = parse_in_chunks(input, rng, max_chunk);
      REQUIRE(chunked.has_value());
      CHECK(same_report(*whole, *chunked));
      CHECK(whole->line == chunked->line);
    }
  }
}

TEST_CASE("OomScanner: the last report in a log wins, with its line", "[sizing][oom_parse]")
{
  const std::string log =
      "epoch 1\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB "
      "already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)\nretrying with a smaller batch\n"
      "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of\n"
      "[rank1]: 79.19 GiB of which 1.00 GiB is free. Process 77 has 3.00 GiB memory in use. Including non-PyTorch memory,\n"
      "[rank1]: this process has 75.00 GiB memory in use. Process 78 has 0 bytes memory in use. Of the allocated memory 70.00 GiB\n"
      "[rank1]: is allocated by PyTorch, with 1.00 GiB allocated in private pools (e.g., CUDA Graphs), and 4.00 GiB is reserved by "
      "PyTorch but unallocated.\nshutting down\n";
  const auto r = parse_oom(log);
  REQUIRE(r.has_value());
  CHECK(r->line == 4);
  CHECK(r->format == OomFormat::pytorch_2_2);
  CHECK(r->device == 1U);
  CHECK(r->process_in_use == Bytes{75 * k_gib});
  CHECK(r->private_pools == Bytes{k_gib});
  CHECK(r->reserved_unallocated == Bytes{4 * k_gib});
  REQUIRE(r->other_processes.size() == 2);
  CHECK(r->other_processes[0].pid == 77);
  CHECK(r->other_processes_sum == Bytes{3 * k_gib});
}

TEST_CASE("OomScanner: empty input, garbage and random bytes are 'no report', never a crash", "[sizing][oom_parse]")
{
  CHECK_THAT(parse_oom("").error().message, Catch::Contains("no out-of-memory report found"));
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) {
    all_bytes.push_back(static_cast<char>(i));
  }
  CHECK_FALSE(parse_oom(all_bytes + all_bytes).has_value());

  // Random text made of the message's own words: reports may appear, and must be sane.
  static const std::vector<std::string> words{"CUDA", "out", "of", "memory.", "Tried", "to", "allocate", "2.00", "GiB", "(GPU",
                                              "0;", "total", "capacity;", "free;", "cached)", "\n", "[rank1]:", "\x1b[", "1e309",
                                              "-5", "MiB", "max seq len (", "KV cache (", ")", "cudaMalloc failed: out of memory",
                                              "allocating", "on device", "Process", "has", "GPU blocks:", "\r", "|", "  "};
  std::mt19937 rng(99);
  std::uniform_int_distribution<std::size_t> pick(0, words.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int n = round % 150 + 1;
    for (int i = 0; i < n; ++i) {
      text += round % 3 == 0 ? std::string(1, static_cast<char>(byte(rng))) : words[pick(rng)] + " ";
    }
    const auto r = parse_in_chunks(text, rng, 64);
    if (r) {
      for (const auto& size : {r->requested, r->total, r->free, r->allocated, r->reserved_unallocated}) {
        if (size) {
          CHECK(size->n <= (1ULL << 50));
        }
      }
    } else {
      // No report in it (not_found, exit 1), or one that is malformed (usage, exit 2).
      CHECK((exit_code_for(r.error().code) == 1 || exit_code_for(r.error().code) == 2));
    }
  }
}

TEST_CASE("OomScanner: a 64 MiB single line streams in bounded memory", "[sizing][oom_parse]")
{
  std::string block(1 << 20, 'x');
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> printable(33, 126);
  for (auto& c : block) {
    c = static_cast<char>(printable(rng));
  }
  OomScanner scanner;
  std::size_t peak = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 64; ++i) {
    scanner.feed(block);
    peak = std::max(peak, scanner.retained_bytes());
  }
  scanner.feed(" torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of "
               "which 1.12 GiB is free. Of the allocated memory 20.84 GiB is allocated by PyTorch, and 1.03 GiB is reserved by "
               "PyTorch but unallocated.");
  const auto r = scanner.finish();
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(r.has_value());
  CHECK(r->requested == Bytes{2 * k_gib});
  CHECK(r->line == 1);
  CHECK(peak <= 3 * OomScanner::k_segment);
  CHECK(scanner.bytes_seen() > 64ULL * (1 << 20));
  CHECK(seconds < 60.0);  // ~1.5 s CPU optimised; a hang guard, generous for sanitizer builds
}

}  // namespace gpurent
