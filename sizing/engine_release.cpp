// SPDX-License-Identifier: MIT
// Engine releases and the profiling defaults they bring (docs/sizing.md §5).
#include "sizing/engine_release.hpp"
#include "sizing/precision.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace gpurent {

// The largest year that packs into 32 bits: 4294 x 1,000,000 + 999 x 1,000 + 999.
constexpr std::uint32_t k_max_release_year = 4293;

std::optional<std::uint32_t> parse_engine_release(std::string_view text) noexcept
{
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) {
    text.remove_prefix(1);
  }
  std::array<std::uint32_t, 3> part{};
  std::size_t parts = 0;
  std::size_t i = 0;
  while (parts < 3) {
    std::size_t digits = 0;
    std::uint32_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 5) {
      v = v * 10 + static_cast<std::uint32_t>(text[i] - '0');
      ++i;
      ++digits;
    }
    // The first number: a version's major (at most two digits) or a calendar release's year
    // (Unsloth 2026.8.19), which still packs into 32 bits.
    const bool year = parts == 0 && digits == 4 && v >= 2000 && v <= k_max_release_year;
    if (digits == 0 || (digits > 3 && !year) || (parts == 0 && digits > 2 && !year)) {
      return std::nullopt;
    }
    part[parts++] = v;
    if (i < text.size() && text[i] == '.' && parts < 3 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
      ++i;
      continue;
    }
    break;
  }
  // What follows the numbers must be a release suffix, not more digits or garbage.
  if (i < text.size()) {
    const char c = text[i];
    if (c != '.' && c != '+' && c != '-' && c != 'r' && c != 'p' && c != 'a' && c != 'b' && c != 'd') {
      return std::nullopt;
    }
    for (const char ch : text.substr(i)) {
      if (static_cast<unsigned char>(ch) < 0x21 || static_cast<unsigned char>(ch) > 0x7e) {
        return std::nullopt;
      }
    }
  }
  if (part[0] == 0 && part[1] == 0 && part[2] == 0) {
    return std::nullopt;  // "0", "0.0.0" name no release (0 is "current")
  }
  return engine_release(part[0], part[1], part[2]);
}

std::string engine_release_text(std::uint32_t release)
{
  if (release == 0) {
    return "current";
  }
  return fmt::format("{}.{}.{}", release / 1'000'000, release / 1'000 % 1'000, release % 1'000);
}

namespace {

std::optional<std::uint32_t> build_digits(std::string_view s) noexcept
{
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (const char c : s) {
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return n == 0 ? std::nullopt : std::optional<std::uint32_t>(n);
}

}  // namespace

std::optional<std::uint32_t> parse_llamacpp_build(std::string_view text) noexcept
{
  if (text.starts_with("build ") && text.ends_with(")")) {
    const auto open = text.rfind('(');
    return open == std::string_view::npos ? std::nullopt : build_digits(text.substr(open + 1, text.size() - open - 2));
  }
  if (text.starts_with("build ")) {
    text.remove_prefix(6);
  } else if (text.starts_with('b')) {
    text.remove_prefix(1);
  }
  return build_digits(text);
}

std::optional<std::uint32_t> parse_engine_version(Engine engine, std::string_view text) noexcept
{
  return engine == Engine::llama_cpp ? parse_llamacpp_build(text) : parse_engine_release(text);
}

std::string engine_version_text(Engine engine, std::uint32_t release)
{
  return engine == Engine::llama_cpp && release != 0 ? fmt::format("b{}", release) : engine_release_text(release);
}

bool llamacpp_dequantizes(const JobSpec& job, std::uint32_t cc) noexcept
{
  // Ollama ships its own release numbers, not llama.cpp's builds: it runs a current llama.cpp.
  if (job.engine != Engine::llama_cpp || !is_gguf(job.weights) || job.weights == WeightFormat::gguf_f16 || cc < 70) {
    return false;
  }
  const bool before_mmq_default = job.engine_version != 0 && job.engine_version < k_llamacpp_first_mmq_default;
  return before_mmq_default || cc < 75;
}

bool vllm_v0(const JobSpec& job) noexcept
{
  return job.engine == Engine::vllm && job.engine_version != 0 && job.engine_version < k_vllm_first_v1;
}

std::uint32_t vllm_profile_tokens(const JobSpec& job) noexcept
{
  if (job.max_batched_tokens > 0) {
    return job.max_batched_tokens;
  }
  if (vllm_v0(job)) {
    return job.context > 32768 ? 2048 : std::max<std::uint32_t>(job.context, 2048);
  }
  return job.large_card_defaults ? 8192 : 2048;
}

std::uint32_t vllm_profile_seqs(const JobSpec& job) noexcept
{
  if (job.max_seqs > 0) {
    return job.max_seqs;
  }
  return job.large_card_defaults && !vllm_v0(job) ? 1024 : 256;
}

}  // namespace gpurent
