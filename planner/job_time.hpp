// SPDX-License-Identifier: MIT
#pragma once
// How long a sized job takes on one option and what its bill is (cli.md plan v3 "The whole job"):
// the work at the speed model's rate (planner/speed.hpp) plus the start-up (weights downloaded,
// loaded, the engine warmed up), billed under the provider's granularity. Pure. Figures and
// sources: docs/speed.md "The whole job".
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "planner/speed.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// What the user says the job is (plan --tokens/--epochs, --requests/--input-len/--output-len,
// --concurrency). Unsized: neither tokens nor requests.
struct JobSize {
  std::optional<std::uint64_t> tokens;    // training tokens per epoch
  std::uint32_t epochs = 1;
  std::optional<std::uint64_t> requests;  // a batch inference job of this many requests
  SpeedLoad load;                         // lengths and concurrency (0 = the defaults)
  [[nodiscard]] bool sized() const noexcept { return tokens.has_value() || requests.has_value(); }
};

enum class RankBy { cost, time, hourly };

// Hugging Face download rate assumed on every provider (none publishes one): 100 MB/s.
inline constexpr double k_download_bytes_per_s = 100e6;
// Weights read from the server's disk into GPU memory: 2.47 GiB/s, the median "Model loading took
// X GiB and Y seconds" of 17 vLLM start-up logs (tests/data/sizing/startup_logs.json).
inline constexpr double k_load_bytes_per_s = 2.47 * 1024 * 1024 * 1024;
// vLLM/SGLang start-up beyond loading the weights (profiling, torch.compile, CUDA graphs): 72 s,
// the median of the same 17 logs (44 to 229 s).
inline constexpr std::chrono::seconds k_serving_warmup{72};

struct StartupTime {
  std::chrono::seconds download{0}, load{0}, warmup{0};
  double download_bytes = 0;
  std::string download_source;  // where download_bytes comes from (checkpoint_download)
  [[nodiscard]] std::chrono::seconds total() const noexcept { return download + load + warmup; }
};
// The checkpoint as stored, which is what start-up downloads (cli.md plan v4), and where that
// figure comes from: the checkpoint's files when they were read (the Hub listing's file sizes, the
// local files, the GGUF file), a GGUF type's file (the weights as held), else the catalogue's
// parameters in the checkpoint's own format (checkpoint_format: its quantization_config, else
// 16-bit), whatever the job converts them to as it loads (a full fine-tune's fp32 master copy,
// bitsandbytes, vLLM --quantization fp8). `figures`: the job's own (their weight bytes are the
// weights as held).
struct CheckpointDownload {
  double bytes = 0;
  std::string source;
};
[[nodiscard]] CheckpointDownload checkpoint_download(const JobSpec& job, const SpeedFigures& figures);
[[nodiscard]] StartupTime startup_time(const JobSpec& job);
// The same from the job's speed figures (their weight bytes are the weights as held).
[[nodiscard]] StartupTime startup_time(const JobSpec& job, const SpeedFigures& figures);

// Seconds of work at `speed` (training: tokens x epochs / train rate; serving: the requests'
// output at the serving rate; other inference: each request's prefill and decode one after
// another); nullopt when the figure it needs is unknown.
[[nodiscard]] std::optional<double> work_seconds(const JobSpec& job, const Speed& speed, const JobSize& size);

// Tokens one dollar buys at the option's headline rate (nullopt when unknown or free).
[[nodiscard]] std::optional<std::uint64_t> tokens_per_dollar(const JobSpec& job, const Speed& speed,
                                                             std::int64_t micro_usd_per_hour);

}  // namespace gpurent
