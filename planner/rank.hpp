// SPDX-License-Identifier: MIT
#pragma once
// Picking a card, a GPU count and a provider for a sized job. Pure: data in, data out.
//
// The caller supplies the estimate as a function of the job (sizing/estimate.hpp's estimate()
// in the binary, a hand-built table in tests), so the ranking rules are tested on their own.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/offer_select.hpp"
#include "planner/job_time.hpp"
#include "planner/speed.hpp"
#include "sizing/hardware_rules.hpp"
#include "sizing/job.hpp"

namespace gpurent {

inline constexpr std::uint32_t k_max_gpus_per_server = 8;

// Service targets of a serving job (plan --min-user-speed, --max-ttft; docs/speed.md "Per
// user"): an option that misses one is not chosen. Every serving job has the per-user target;
// 10 tokens/s by default (about the pace people read at, and the floor serving guides name).
inline constexpr double k_default_min_user_tokens_per_s = 10.0;
struct ServeTargets {
  double min_user_tokens_per_s = k_default_min_user_tokens_per_s;
  bool min_user_given = false;
  std::optional<double> max_ttft_s;
};

struct PlanRequest {
  std::optional<std::uint32_t> gpus;    // --gpus (per server); nullopt: any count 1..8
  // --nodes: servers of `gpus` GPUs each; nullopt: one, or, when no single server fits, for each
  // server shape the smallest count (2 .. the provider's most) that fits.
  std::optional<std::uint32_t> nodes;
  std::optional<Shard> shard;           // --shard; nullopt: default_shard() per count
  std::chrono::seconds runtime{3600};   // --hours, in whole seconds
  // --provider A,B (registry keys), --rentable, --region: the offers ranked (select_offers; per
  // cloud, card and GPU count the cheapest region).
  OfferFilter filter;
  bool spot = false;                    // --spot: use the spot price where an offer has one
  std::optional<MicroUsd> max_price;    // --max-price, whole server per hour
  std::optional<std::string> card;      // --card, as a Card::id
  JobSize size;                         // --tokens/--epochs, --requests, lengths, --concurrency
  std::optional<RankBy> rank_by;        // --rank-by; nullopt: cost for a sized job, else hourly
  std::optional<std::chrono::seconds> deadline;  // --deadline: options that finish later are not chosen
  ServeTargets targets;                 // --min-user-speed, --max-ttft (serving)
  // plan without --card: per (card, GPUs, servers) only the best option and, when that one is a
  // cloud gpurent does not rent, the best rentable one, decided before the options are built (the
  // market sells one shape on many clouds; tests/providers/test_plan_alternatives.cpp holds this to
  // the same cut made of every option).
  bool alternatives_only = false;
  // Sized jobs and serving jobs rank by the bill (a serving job without a size: the tokens a
  // dollar buys at its concurrency, i.e. the cost of a million output tokens); others by the hour.
  [[nodiscard]] RankBy ranking(Task task) const noexcept
  {
    return rank_by.value_or(size.sized() || task == Task::serve ? RankBy::cost : RankBy::hourly);
  }
};

// Two options whose ranking figures differ by at most this (per cent of the better one) tie: the
// choice then goes to a comfortable option over a tight one, then (a sized job ranked by its bill,
// cli.md plan v4 "Ranking with a size") the shortest hours, then fewer GPUs, no pipeline stages.
inline constexpr double k_tie_pct = 5.0;

// A serving option's workload (cli.md plan v4 `serve`): `replicas` identical servers (each of
// `nodes` x `gpus` GPUs, each billed), each running `per_replica` sequences at once (its
// --max-num-seqs) in a KV pool of `kv_pool_tokens`; whether the per-user speed and time to first
// token (Speed) meet the targets, and the misses in words.
struct ServeShape {
  std::uint32_t replicas = 1;
  std::uint32_t per_replica = 1;
  std::uint64_t kv_pool_tokens = 0;
  bool meets_targets = true;
  std::vector<std::string> misses;
};

// One way to run the job: a provider's server with `gpus` cards of one kind.
struct PlanOption {
  std::string provider;      // the cloud key (cli.md plan v4 `cloud`)
  std::string region;        // the offer's region ("" when the offer names none)
  bool rentable = false;     // gpurent creates the server itself; else rent it there and `gpurent attach`
  BillingPolicy billing_rule;  // the cloud's billing (spot billing for a spot price)
  std::string billing_source;  // its source, or "unknown" (per hour assumed)
  std::string price_source;  // price_source_of(offer): config, live, catalogue, snapshot, built-in
  std::string price_date;    // price_date_of(offer), "" when unknown
  std::string instance_type; // the cloud's instance type, when the offer names one
  std::string upstream;      // aggregator/marketplace rows: what the row resells
  bool gpu_only = false;     // the price covers the GPUs only (GCP accelerator rows): the host VM is extra
  std::string card;          // Card::id
  std::string card_display;  // e.g. "RTX 4090 24GB"
  std::uint32_t gpus = 1;    // per server
  std::uint32_t nodes = 1;   // servers (plan --nodes): the price is per server, the costs for all of them
  std::string node_link;     // nodes > 1: how the servers reach each other (NodeLink::label)
  bool node_link_known = true;  // nodes > 1: the provider publishes that link's bandwidth
  Bytes usable;              // per GPU, what CUDA reports
  Bytes limit;               // fit_limit_for(job, usable): usable minus 5% (vLLM: also util x usable)
  Bytes total;               // the job's total per GPU at this GPU count
  bool fits = false;         // total <= limit
  std::int64_t headroom = 0; // limit - total in bytes; negative when it does not fit
  MicroUsd price_per_hour;   // whole server (the spot price when `spot`)
  bool spot = false;
  MicroUsd cost;             // for PlanRequest::runtime under the provider's billing, every server
  std::string billing;       // the provider's billing label ("hourly", "per-minute", ...)
  std::string price_origin;  // "built-in 2026-11-30", "config", "derived: 4 x 1-GPU price (...)"
  RunVerdict runs;           // whether the engine's kernels run the job on this card (hardware_rules.hpp)
  std::uint32_t pipeline = 1;  // vLLM pipeline stages at this GPU count
  std::uint32_t micro_batch = 0;  // training: sequences per GPU per step there (chosen or given); 0 otherwise
  Speed speed;               // at this card and GPU count (planner/speed.hpp)
  // Headroom within the memory estimate's own measured error for the job type
  // (memory_error_pct): it may not fit on the real machine.
  bool tight = false;
  // A sized job (PlanRequest::size): start-up plus work, and its bill under the provider's
  // billing; nullopt when a figure the speed needs is unknown.
  std::optional<std::chrono::seconds> hours;
  std::chrono::seconds startup{0};
  std::optional<MicroUsd> job_cost;
  std::optional<std::uint64_t> tokens_per_dollar;  // an unsized job: tokens one dollar buys
  bool late = false;         // --deadline: does not finish in time (or its time is unknown)
  std::optional<ServeShape> serve;  // --task serve: replicas, sequences per replica, targets
  // Every server of the option: nodes x replicas.
  [[nodiscard]] std::uint32_t servers() const noexcept { return nodes * (serve ? serve->replicas : 1U); }
  // Fits, the engine runs it (natively, by a fallback, or unknown), it meets the deadline and the
  // service targets: an option plan may choose.
  [[nodiscard]] bool choosable() const noexcept
  {
    return fits && runs.status != RunStatus::refused && !late && (!serve || serve->meets_targets);
  }
};

struct PlanResult {
  JobSpec job;                // the job as sized: gpus and shard resolved
  MemoryEstimate memory;      // per GPU, for `job`
  std::optional<Card> card;   // the card `memory` is shown against (chosen, given or closest)
  std::optional<PlanOption> choice;  // the cheapest option that fits; nullopt when none does
  bool card_fits = false;     // --card: the job fits that card at job.gpus (even if nobody offers it)
  RunVerdict runs;            // how the engine runs the job on `card` (native when there is no card)
  bool layout_ok = true;      // the engine can run the model on job.gpus GPUs (sizing/layout.hpp)
  std::vector<PlanOption> options;   // every priced option: the choice first, then usable ones by the ranking
  Speed speed;                // for `job` on `card` (empty without a card)
  RankBy ranked_by = RankBy::hourly;
};

using Estimator = std::function<MemoryEstimate(const JobSpec&)>;

// The contract's default: fsdp for training (zero3 under DeepSpeed), tp for inference and
// serving on more than one GPU, none on one GPU.
[[nodiscard]] Shard default_shard(Task task, Engine engine, std::uint32_t gpus) noexcept;
// `base` with `gpus` set, the shard resolved (the given one, else default_shard) and the layout
// the engine runs on that many GPUs (vLLM pipeline stages where tensor parallelism alone cannot
// split the heads; sizing/layout.hpp).
// `nodes` servers of `gpus` GPUs each.
[[nodiscard]] JobSpec job_for_gpus(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard,
                                   std::uint32_t nodes = 1);
// Whether the engine can run `base` on `nodes` servers of `gpus` GPUs at all (feasible_layout).
[[nodiscard]] bool gpus_feasible(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard,
                                 std::uint32_t nodes = 1);

// The load a speed is computed for: the request's, a serving job's concurrency defaulting to the
// full-context requests the KV pool (`memory` on `card`) holds (vLLM, SGLang) or the slots planned
// (llama.cpp, Ollama: --batch).
[[nodiscard]] SpeedLoad speed_load(const JobSpec& there, const Card& card, const PlanRequest& request,
                                   const MemoryEstimate& memory);
// An offline batch's requests in flight (docs/speed.md "The whole job"): --batch when given, else
// what the KV pool holds at the requests' input + output length (vLLM: whole 16-token blocks, at
// most the sequences its profiling pass sized, vllm_profile_seqs), never more than the requests.
[[nodiscard]] std::uint32_t batch_concurrency(const JobSpec& there, const Card& card, const SpeedLoad& load,
                                              std::uint64_t requests, const MemoryEstimate& memory);

// The server configurations each provider sells: the explicit offers, plus, for a provider that
// sells servers of any size at a per-GPU price (ProviderInfo::per_gpu_servers) and lists a card
// with one GPU only, servers of 2 .. max_gpus GPUs at n x that price. Other providers sell only
// the shapes they list. Offers of unknown providers or cards, or that break the provider's
// constraints (max GPUs, minimum card size), are dropped.
[[nodiscard]] std::vector<Offer> expand_offers(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                               std::span<const Card> cards);

// Ranks every offer (after expand_offers) that matches the request. Each card's job is the job as
// the engine runs it there (run_on_card: flags, and the memory of a dequantized or fp32 fallback).
// Options are sorted: usable (fits and not refused) first, then native before fallback before
// unknown, then cost for the runtime, fewer GPUs, more headroom, price, provider, card. The
// choice is the first usable option: a native one unless none exists. A card fits when the total per GPU is within
// fit_limit_for(job, usable) (usable minus 5%; for vLLM also within gpu-util x usable). GPU
// counts the engine cannot run the model on (gpus_feasible) are never offered. With `card`, the
// GPU count is --gpus or the smallest feasible count sold for that card (1..8 when nobody sells
// it) that fits (1 when none does), and only that card is priced.
// Several servers (request.nodes, or by itself when no single server fits): only server shapes
// the provider's node links allow (a cluster product's shape, else the largest shape of that card
// it sells), up to the link's most servers, and by itself only over links whose bandwidth is
// published; the price is per server and the bill is every
// server's under the provider's billing; the speed counts the traffic between the servers over
// that link, and an option whose link is not published ranks after every known one.
[[nodiscard]] PlanResult rank(const JobSpec& job, std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                              std::span<const Card> cards, const PlanRequest& request, const Estimator& estimator);

}  // namespace gpurent
