// SPDX-License-Identifier: MIT
#include "planner/job_time.hpp"

#include <algorithm>

#include "common/rounding.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

std::chrono::seconds whole_seconds(double s)
{
  return std::chrono::seconds{static_cast<std::int64_t>(ceil_up(std::max(0.0, std::min(s, 1e12))))};
}

}  // namespace

StartupTime startup_time(const JobSpec& job) { return startup_time(job, speed_figures(job)); }

StartupTime startup_time(const JobSpec& job, const SpeedFigures& figures)
{
  StartupTime t;
  const double held = figures.weight_bytes;
  // What is downloaded: the checkpoint's files when read from them; a 16-bit checkpoint the engine
  // quantizes as it loads (vLLM --quantization fp8, bitsandbytes) at 2 bytes per parameter;
  // otherwise the weights as held.
  double download = held;
  if (job.model.checkpoint) {
    download = static_cast<double>(job.model.checkpoint->total_bytes());
  } else if (job.model.quant_method.empty() && !is_gguf(job.weights) && is_quantized(job.weights) &&
             job.weights != WeightFormat::mxfp4) {
    download = static_cast<double>(job.model.params) * 2.0;
  }
  t.download_bytes = download;
  t.download = whole_seconds(download / k_download_bytes_per_s);
  t.load = whole_seconds(held / k_load_bytes_per_s);
  if (!is_training(job.task) && (job.engine == Engine::vllm || job.engine == Engine::sglang)) {
    t.warmup = k_serving_warmup;
  }
  return t;
}

std::optional<double> work_seconds(const JobSpec& job, const Speed& speed, const JobSize& size)
{
  if (is_training(job.task)) {
    if (!size.tokens || !speed.train_tokens_per_s || *speed.train_tokens_per_s <= 0) {
      return std::nullopt;
    }
    return static_cast<double>(*size.tokens) * std::max<std::uint32_t>(size.epochs, 1) / *speed.train_tokens_per_s;
  }
  if (!size.requests) {
    return std::nullopt;
  }
  const double n = static_cast<double>(*size.requests);
  if (job.task == Task::serve) {
    if (!speed.serve_output_tokens_per_s || *speed.serve_output_tokens_per_s <= 0) {
      return std::nullopt;
    }
    return n * speed.output_len / *speed.serve_output_tokens_per_s;
  }
  if (!speed.prefill_tokens_per_s || !speed.decode_tokens_per_s || *speed.prefill_tokens_per_s <= 0 ||
      *speed.decode_tokens_per_s <= 0) {
    return std::nullopt;
  }
  const double in = size.load.input_len > 0 ? size.load.input_len : job.context;
  const double out = size.load.output_len > 0 ? size.load.output_len
                                              : std::min<double>(k_default_output_len, job.context / 2.0);
  return n * (in / *speed.prefill_tokens_per_s + out / *speed.decode_tokens_per_s);
}

std::optional<std::uint64_t> tokens_per_dollar(const JobSpec& job, const Speed& speed, std::int64_t micro_usd_per_hour)
{
  const auto rate = speed.headline(job.task);
  if (!rate || micro_usd_per_hour <= 0) {
    return std::nullopt;
  }
  const double per_dollar = *rate * 3600.0 * 1e6 / static_cast<double>(micro_usd_per_hour);
  return static_cast<std::uint64_t>(std::min(per_dollar, 1e18));
}

}  // namespace gpurent
