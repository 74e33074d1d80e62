// SPDX-License-Identifier: MIT
#include "planner/job_time.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/rounding.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/checkpoint_use.hpp"
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

CheckpointDownload checkpoint_download(const JobSpec& job, const SpeedFigures& figures)
{
  if (const auto& ck = job.model.checkpoint) {
    const double bytes = static_cast<double>(ck->file_bytes > 0 ? ck->file_bytes : ck->total_bytes());
    const std::string what = ck->file_bytes > 0 ? "file sizes" : "tensor bytes";
    if (ck->gguf) {
      return {bytes, fmt::format("the GGUF file's {} ({})", what, ck->files.empty() ? ck->source : ck->files.front())};
    }
    if (!ck->hub_repo.empty()) {
      return {bytes, fmt::format("the Hub listing's {} of {} ({} files)", what, ck->hub_repo, ck->files.size())};
    }
    return {bytes, fmt::format("the local files' {} ({} files)", what, ck->files.size())};
  }
  if (is_gguf(job.weights)) {
    return {figures.weight_bytes, fmt::format("the GGUF {} file: its weights as held", to_string(job.weights))};
  }
  const WeightFormat stored = checkpoint_format(job.model);
  const std::string from = checkpoint_format_source(job.model);
  const std::string label = fmt::format("the catalogue: {:.1f}B parameters stored as {} ({})",
                                        static_cast<double>(job.model.params) / 1e9, to_string(stored),
                                        from.empty() ? "no quantization_config" : from);
  if (formats_match(weights_in_memory(job), stored)) {
    return {figures.weight_bytes, label};
  }
  // Converted as it loads: the download is the stored format's bytes, not the held ones.
  JobSpec as_stored = job;
  as_stored.task = Task::infer;
  as_stored.weights = stored;
  as_stored.offload_bytes = 0;
  return {speed_figures(as_stored).weight_bytes, label};
}

StartupTime startup_time(const JobSpec& job, const SpeedFigures& figures)
{
  StartupTime t;
  const double held = figures.weight_bytes;
  const CheckpointDownload download = checkpoint_download(job, figures);
  t.download_bytes = download.bytes;
  t.download_source = download.source;
  t.download = whole_seconds(download.bytes / k_download_bytes_per_s);
  t.load = whole_seconds(held / k_load_bytes_per_s);
  if (!is_training(job.task) && pools_kv(job.engine)) {  // a batching server's warm-up (graphs, profiling)
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
  if (job.task == Task::serve || job.offline_batch) {
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
