// SPDX-License-Identifier: MIT
#pragma once
// How fast a job runs on a card: a roofline over the card's figures (memory bandwidth, dense
// tensor TFLOPS, the link between its GPUs) with efficiency constants that belong to the engine,
// fitted on public measurements (tests/data/speed/measurements.json). Every formula, constant and
// source is in docs/speed.md. Pure: data in, data out.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "providers/card.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// The engines whose efficiency the model knows.
enum class SpeedEngine { llama_cpp, vllm, sglang, tensorrt_llm, transformers, trainer };
[[nodiscard]] SpeedEngine speed_engine(Engine e) noexcept;

// An engine's efficiency constants (docs/speed.md "Constants").
struct SpeedConstants {
  double bandwidth = 0.8;    // fraction of the card's memory bandwidth a decode step reaches
  // The same on a data-centre card's HBM (hbm_card(): A100, H100, H200, B200, V100); 0: `bandwidth`.
  // An engine whose one-token kernels keep too few loads in flight for HBM's bandwidth x latency
  // reaches less of it than of a GeForce/workstation card's GDDR (docs/speed.md "Card class").
  double bandwidth_hbm = 0;
  double layer_s = 20e-6;    // fixed cost per layer per step (kernel launches), seconds
  double step_s = 0;         // fixed cost per step (scheduling, sampling, detokenizing), seconds
  double compute = 0.5;      // fraction of the dense TFLOPS prefill and batched steps reach
  double compute_cap_tflops = 0;  // the most the engine's kernels reach on any card (0: no ceiling)
  // llama.cpp: the same for 16-bit weights, whose prompt runs cuBLAS GEMMs instead of llama.cpp's
  // own quantized matrix kernels (0: compute_cap_tflops).
  double compute_cap_f16_tflops = 0;
  double allreduce_s = 10e-6;  // latency of one tensor-parallel all-reduce, seconds
  double mfu = 0.4;          // training: FLOPs utilisation in 16-bit mixed precision
  // The same on a Hopper or Blackwell data-centre card (hbm_card(), compute capability 9.0 or 10.x),
  // whose datasheet peak its training kernels reach less of than an Ampere card's (0: `mfu`;
  // docs/speed.md "Card class").
  double mfu_sm90 = 0;
  double mfu_fp8 = 0.3;      // training in FP8 mixed precision (Transformer Engine), of the FP8 TFLOPS
  // Training: the tokens per GPU step at which the step reaches half its peak utilisation; a step
  // of T tokens runs at mfu x T / (T + train_half_tokens) (docs/speed.md "Micro-batch and packing").
  double train_half_tokens = 0;
};
// Unpacked training: the share of the tokens a step computes that are data, not padding, when a
// micro-batch holds more than one sequence (docs/speed.md "Micro-batch and packing").
inline constexpr double k_unpacked_useful_share = 1.0 / 1.4;
[[nodiscard]] const SpeedConstants& speed_constants(SpeedEngine e) noexcept;

// A data-centre card with HBM: the xx100 dies, compute capability 7.0 (V100), 8.0 (A100), 9.0
// (H100, H200, GH200) and 10.x (B200, B300); every other NVIDIA card (Turing, GA10x, Ada, GB20x)
// carries GDDR. False when the card's compute capability is unknown.
[[nodiscard]] bool hbm_card(const Card& c) noexcept;

enum class SpeedKind { decode, prefill, serve, train };
// The fewest check-half measurements of an engine's kind that give it a spread of its own; with
// fewer, speed_range_pct() answers k_range_unmeasured instead of borrowing another engine's.
inline constexpr std::size_t k_min_check_cases = 5;
// speed_range_pct() of an engine and kind with fewer than k_min_check_cases check measurements:
// no measured spread (estimate_speed() says so in Speed::unknown).
inline constexpr std::uint32_t k_range_unmeasured = 0;
// The model's measured spread for an engine's figure of a kind: the 80th percentile of
// |predicted / measured - 1| over the check half of the measurements, in per cent
// (tests/providers/test_speed_measured.cpp recomputes it); k_range_unmeasured where the check half
// holds fewer than k_min_check_cases of the engine's own (docs/speed.md "Measured spread").
[[nodiscard]] std::uint32_t speed_range_pct(SpeedEngine e, SpeedKind k) noexcept;

// What the job asks of the server, besides the JobSpec.
struct SpeedLoad {
  std::uint32_t input_len = 0;    // prompt tokens per request; 0: the context (prefill), context - output (serve)
  std::uint32_t output_len = 0;   // generated tokens per request; 0: k_default_output_len (capped at half the context)
  std::uint32_t concurrency = 0;  // requests in flight when serving; 0: 1
  // A job across servers (JobSpec::nodes > 1): each server's bandwidth to the others, bytes per
  // second one way (the provider's node link, providers/node_link.hpp); 0: not published.
  double node_bytes_per_s = 0;
  std::string node_link;  // its words, for the basis
};
inline constexpr std::uint32_t k_default_output_len = 256;

// A served request's prompt and output tokens: the load's, else an output of
// k_default_output_len (at most what the context leaves after the prompt given, else at most half
// the context) and a prompt of the rest of the context.
struct ServeLengths {
  std::uint32_t input = 0, output = 0;
  [[nodiscard]] std::uint64_t tokens() const noexcept { return std::uint64_t{input} + output; }
};
[[nodiscard]] ServeLengths serve_lengths(std::uint32_t context, const SpeedLoad& load) noexcept;

// tokens per second; absent when the task has no such figure or a card figure it needs is unknown.
struct Speed {
  std::optional<double> prefill_tokens_per_s;
  std::optional<double> decode_tokens_per_s;
  std::optional<double> serve_output_tokens_per_s;
  std::optional<double> train_tokens_per_s;
  // Training: the utilisation the micro-step's tokens reach (of the peak mfu) and the share of its
  // tokens that are data (1 packed or one sequence per step; k_unpacked_useful_share otherwise).
  double train_utilisation = 1;
  double train_useful_share = 1;
  bool train_eager = false;    // the step runs eager (no --compile): train_utilisation counts it
  std::string bound;           // memory | compute | interconnect | offload: what limits the headline figure
  std::uint32_t range_pct = 0; // the measured spread of the headline figure's kind
  std::string basis;           // one line: the formula's inputs
  std::vector<std::string> unknown;  // terms that could not be computed, and why
  std::uint32_t concurrency = 0;     // serving: the requests in flight the figure is for
  std::uint32_t input_len = 0, output_len = 0;
  // Serving, at `concurrency` (docs/speed.md "Per user"): the output tokens per second each user
  // sees (one decode token per step, the others' prompts prefilled in between), and the time to
  // its first token when it joins the other requests in flight (its prompt prefilled in chunks
  // beside their decode steps, after the step in progress).
  std::optional<double> per_user_tokens_per_s;
  std::optional<double> ttft_s;
  bool batch = false;  // an offline batch (JobSpec::offline_batch): its headline is the serving figure
  // Training across servers: seconds per micro-step the traffic between servers alone takes, and
  // the step's compute, so that plan can say when the network dominates.
  std::optional<double> network_step_s;
  std::optional<double> compute_step_s;
  // The figure the job's time is computed from (serve for serving and an offline batch, train for
  // training, else the decode of one request), absent when unknown.
  [[nodiscard]] std::optional<double> headline(Task t) const noexcept;
};

// The shapes and sizes the formulas read, for the whole model (all GPUs together) at the format the
// engine holds it in. They depend on neither the card nor the GPU count: plan computes them once
// per job shape and reuses them for every option.
struct SpeedFigures {
  double weight_bytes = 0;     // every weight at the format the engine holds it in
  double expert_bytes = 0;     // of which routed experts
  double skipped_bytes = 0;    // never read by a step: the input embedding (only its rows are)
  double active_params = 0;    // parameters used per token (matrix multiplies)
  double train_params = 0;     // every parameter (training)
  double layers = 0;
  double hidden = 0;
  double attn_width = 0;       // heads x head_dim
  double global_layers = 0;    // layers attending over the whole context
  double window = 0;           // sliding window of the other layers (0: none)
  double experts = 0, experts_active = 0;
  double kv_bytes_per_token = 0;  // every layer, whole model
};
[[nodiscard]] SpeedFigures speed_figures(const JobSpec& job);

// The speed of `job` (gpus, shard and pipeline as planned, the weights as the engine holds them on
// `card`) on `card`, under `load`.
[[nodiscard]] Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load);
[[nodiscard]] Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load,
                                   const SpeedFigures& figures);
// The same with explicit constants (the fitter and the measured-case test).
[[nodiscard]] Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load,
                                   const SpeedConstants& k, SpeedEngine engine);
[[nodiscard]] Speed estimate_speed(const JobSpec& job, const Card& card, const SpeedLoad& load,
                                   const SpeedConstants& k, SpeedEngine engine, const SpeedFigures& figures);

}  // namespace gpurent
