// SPDX-License-Identifier: MIT
// Fuzz target for the OOM scanner and diagnosis (every engine's shapes, JSON-escaped lines): any
// bytes, fed in any chunking, give the same report or the same one-line error, in bounded memory,
// never a crash or sanitizer report; the diagnosis always names fixes, never with a placeholder.
// The first byte seeds the chunk sizes; the rest is the log.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "oom/diagnose.hpp"
#include "oom/parse.hpp"

namespace {

bool same(const gpurent::OomReport& a, const gpurent::OomReport& b)
{
  return a.engine == b.engine && a.format == b.format && a.kind == b.kind && a.memory == b.memory && a.context == b.context &&
         a.stage == b.stage && a.rocm == b.rocm && a.backend == b.backend && a.line == b.line && a.device == b.device &&
         a.requested == b.requested && a.total == b.total && a.free == b.free && a.process_in_use == b.process_in_use &&
         a.allocated == b.allocated && a.reserved_unallocated == b.reserved_unallocated && a.max_model_len == b.max_model_len &&
         a.kv_cache_tokens == b.kv_cache_tokens && a.other_processes_sum == b.other_processes_sum &&
         a.other_process_count == b.other_process_count && a.other_allocations == b.other_allocations &&
         a.max_allowed == b.max_allowed && a.kv_cache_needed == b.kv_cache_needed && a.kv_cache_available == b.kv_cache_available &&
         a.prefill_tokens == b.prefill_tokens && a.mem_fraction_static == b.mem_fraction_static && a.xla_total == b.xla_total &&
         a.tensor_shape == b.tensor_shape && a.dtype == b.dtype && a.max_num_seqs == b.max_num_seqs;
}

void check_sizes(const gpurent::OomReport& r)
{
  for (const auto& size : {r.requested, r.total, r.free, r.process_in_use, r.allocated, r.kv_cache_needed, r.kv_cache_available,
                           r.other_allocations, r.max_allowed, r.allowed, r.weights, r.xla_total, r.xla_temp, r.swap_free}) {
    if (size && size->n > (1ULL << 50)) {
      std::abort();  // the parser rejects sizes over 1 PiB
    }
  }
}

// An upper-case word standing alone ("NAME", "MODEL", "K") is something for the user to fill in.
bool has_placeholder(const std::string& command)
{
  std::size_t run = 0;
  bool upper_only = true;
  for (std::size_t i = 0; i <= command.size(); ++i) {
    const char c = i < command.size() ? command[i] : ' ';
    if (c == ' ' || c == '=' || c == ',' || c == '(' || c == ')') {
      if (run > 0 && run <= 8 && upper_only) {
        return true;
      }
      run = 0;
      upper_only = true;
    } else {
      ++run;
      upper_only = upper_only && c >= 'A' && c <= 'Z';
    }
  }
  return command.find('<') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  gpurent::OomScanner whole;
  whole.feed(text);
  const auto a = whole.finish();

  gpurent::OomScanner chunked;
  std::uint32_t state = 2654435761U * (static_cast<std::uint32_t>(data[0]) + 1U);
  for (std::size_t i = 0; i < text.size();) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    const std::size_t n = std::min<std::size_t>(1 + state % 97, text.size() - i);
    chunked.feed(text.substr(i, n));
    i += n;
    if (chunked.retained_bytes() > 3 * gpurent::OomScanner::k_segment) {
      std::abort();  // memory must stay bounded whatever the input
    }
  }
  const auto b = chunked.finish();

  if (a.has_value() != b.has_value()) {
    std::abort();
  }
  if (!a) {
    if (a.error().message.empty() || a.error().message.find('\n') != std::string::npos || a.error().message != b.error().message) {
      std::abort();
    }
    return 0;
  }
  if (!same(*a, *b)) {
    std::abort();
  }
  check_sizes(*a);
  const std::vector<gpurent::OomCardOption> options{
      {"small", "Small", gpurent::Bytes{16ULL << 30}, "p", 1, gpurent::MicroUsd{100'000}},
      {"big", "Big", gpurent::Bytes{80ULL << 30}, "q", 1, gpurent::MicroUsd{2'000'000}},
  };
  const auto d = gpurent::diagnose_oom(*a, options, options[0]);
  if (d.fixes.empty()) {
    std::abort();
  }
  if (d.card && d.card_need && gpurent::oom_fit_limit(d.card->usable) < *d.card_need) {
    std::abort();  // a suggested card always holds what the job needs
  }
  for (const auto& fix : d.fixes) {
    if (fix.id.empty() || fix.description.empty() || has_placeholder(fix.command)) {
      std::abort();  // every fix says what it does; no command asks the user to fill something in
    }
  }
  if (d.fitting_max_model_len && a->max_model_len && a->kv_cache_needed && a->kv_cache_available && !a->kv_cache_tokens &&
      *a->kv_cache_available <= *a->kv_cache_needed && *d.fitting_max_model_len > *a->max_model_len) {
    std::abort();  // less KV memory than needed never fits a longer context
  }
  return 0;
}
