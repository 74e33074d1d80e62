// SPDX-License-Identifier: MIT
#include "planner/rank.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/rounding.hpp"
#include "planner/card_run.hpp"
#include "providers/offers.hpp"
#include "planner/micro_batch.hpp"
#include "planner/serve_size.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"

namespace gpurent {
namespace {

const ProviderInfo* provider_named(std::span<const ProviderInfo> providers, const std::string& name)
{
  const auto it = std::find_if(providers.begin(), providers.end(), [&](const ProviderInfo& p) { return p.name == name; });
  return it == providers.end() ? nullptr : &*it;
}

const Card* card_with_id(std::span<const Card> cards, const std::string& id)
{
  const auto it = std::find_if(cards.begin(), cards.end(), [&](const Card& c) { return c.id == id; });
  return it == cards.end() ? nullptr : &*it;
}

bool allowed(const ProviderInfo& p, const Card& c, std::uint32_t gpus)
{
  return gpus >= 1 && gpus <= std::min(p.max_gpus, k_max_gpus_per_server) && c.label_gb >= p.min_card_gb;
}

// Estimates per (job as run on a card, GPU count), computed once each. Cards differ in the job
// only by how the engine holds the weights (hardware_rules.hpp), so that is the key.
class EstimateCache {
public:
  EstimateCache(std::optional<Shard> shard, const Estimator& estimator) : m_shard(shard), m_estimator(estimator) {}
  const MemoryEstimate& at(const JobSpec& job, std::uint32_t gpus, std::uint32_t nodes = 1)
  {
    // Every field the card sets on the job (the hardware rules, card_run) is part of the key: two
    // cards of the same count can give one job different memory (vLLM's large-card defaults,
    // NCCL's NVLS buffers, fp16 compute, Marlin experts, an e5m2 KV cache, flash attention).
    const auto key = std::tuple(job.weights, gpus, nodes, job.large_card_defaults, job.nccl_nvls, job.fp16_compute,
                                job.moe_marlin, job.kv_fp8_e5m2, job.flash_attention);
    auto it = m_cache.find(key);
    if (it == m_cache.end()) {
      it = m_cache.emplace(key, m_estimator(job_for_gpus(job, gpus, m_shard, nodes))).first;
    }
    return it->second;
  }

private:
  std::optional<Shard> m_shard;
  const Estimator& m_estimator;
  std::map<std::tuple<WeightFormat, std::uint32_t, std::uint32_t, bool, bool, bool, bool, bool, bool>, MemoryEstimate>
      m_cache;
};

// The job as the engine runs it on each card, computed once per card.
class CardRuns {
public:
  explicit CardRuns(const JobSpec& job) : m_job(job) {}
  const CardRun& on(const Card& c)
  {
    auto it = m_runs.find(c.id);
    if (it == m_runs.end()) {
      it = m_runs.emplace(c.id, run_on(m_job, c)).first;
    }
    return it->second;
  }

private:
  const JobSpec& m_job;
  std::map<std::string, CardRun> m_runs;
};

std::int64_t signed_diff(Bytes a, Bytes b)
{
  return a >= b ? static_cast<std::int64_t>(a.n - b.n) : -static_cast<std::int64_t>(b.n - a.n);
}

// The figure options are ranked by (lower is better): the bill or the hours of a sized job, the
// tokens per dollar or per second (negated) of an unsized one, the cost of --hours for `hourly`.
// An option whose figure is unknown ranks after every known one.
double rank_key(const PlanOption& o, RankBy by, bool sized, Task task)
{
  constexpr double unknown = 1e300;
  if (o.nodes > 1 && !o.node_link_known) {
    return unknown;  // the traffic between its servers is unknown: neither its speed nor its worth is known
  }
  if (by == RankBy::hourly) {
    return static_cast<double>(o.cost.n);
  }
  if (sized) {
    if (by == RankBy::cost) {
      return o.job_cost ? static_cast<double>(o.job_cost->n) : unknown;
    }
    return o.hours ? static_cast<double>(o.hours->count()) : unknown;
  }
  if (by == RankBy::cost) {
    return o.tokens_per_dollar ? -static_cast<double>(*o.tokens_per_dollar) : unknown;
  }
  const auto rate = o.speed.headline(task);
  return rate ? -*rate : unknown;
}

struct OptionOrder {
  RankBy by;
  bool sized;
  Task task;
  // Among the options not chosen, those that fit (and only miss a target or the deadline) first;
  // then the ranking figure, fewer GPUs, fewer pipeline stages, more headroom, the lower price, and
  // the cloud, card and region by name.
  [[nodiscard]] auto key(const PlanOption& o) const
  {
    return std::tuple(!o.choosable(), !o.fits, run_rank(o.runs.status), rank_key(o, by, sized, task), o.gpus * o.nodes,
                      o.pipeline, -o.headroom, o.price_per_hour);
  }
};

// Sorts the options in that order. The keys are computed once and indices sorted: a PlanOption is
// large, and the market gives some 1,300 of them (plan's start-up, docs/benchmarks.md).
void sort_options(std::vector<PlanOption>& options, const OptionOrder& order)
{
  using Key = decltype(order.key(options.front()));
  struct Keyed {
    Key key;
    std::uint32_t index;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    keyed.push_back(Keyed{order.key(options[i]), static_cast<std::uint32_t>(i)});
  }
  std::sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
    if (a.key != b.key) {
      return a.key < b.key;
    }
    const PlanOption& x = options[a.index];
    const PlanOption& y = options[b.index];
    return std::tie(x.provider, x.card, x.region, a.index) < std::tie(y.provider, y.card, y.region, b.index);
  });
  // Into that order in place (following each cycle of the permutation): no second vector.
  std::vector<std::uint32_t> from(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    from[i] = keyed[i].index;  // position i takes the option now at from[i]
  }
  for (std::size_t start = 0; start < from.size(); ++start) {
    if (from[start] == start) {
      continue;
    }
    PlanOption held = std::move(options[start]);
    std::size_t at = start;
    while (from[at] != start) {
      const std::size_t next = from[at];
      options[at] = std::move(options[next]);
      from[at] = static_cast<std::uint32_t>(at);
      at = next;
    }
    options[at] = std::move(held);
    from[at] = static_cast<std::uint32_t>(at);
  }
}

}  // namespace

namespace {

// The choice among the sorted options: the best usable one, unless another of the same run
// status ranks within k_tie_pct of it and is comfortable where the best is tight, or (a sized job
// ranked by its bill) finishes sooner, or needs fewer GPUs or no pipeline stages. Moved to the
// front.
void choose(std::vector<PlanOption>& options, const OptionOrder& order)
{
  if (options.empty() || !options.front().choosable()) {
    return;
  }
  const PlanOption& best = options.front();
  const double top = rank_key(best, order.by, order.sized, order.task);
  const double within = top + std::fabs(top) * k_tie_pct / 100.0;
  const bool by_bill = order.sized && order.by == RankBy::cost;
  std::size_t pick = 0;
  for (std::size_t i = 1; i < options.size(); ++i) {
    const PlanOption& o = options[i];
    if (!o.choosable() || o.runs.status != best.runs.status) {
      break;
    }
    const double k = rank_key(o, order.by, order.sized, order.task);
    if (k > within) {
      break;
    }
    const PlanOption& p = options[pick];
    if (by_bill) {
      // A sized job ranked by its bill (cli.md plan v4 "Ranking with a size"): within 5% of the
      // lowest bill the shortest job wins, then fewer GPUs (every server's), then a comfortable
      // option before a tight one.
      const auto h = [](const PlanOption& x) { return x.hours ? x.hours->count() : std::numeric_limits<std::int64_t>::max(); };
      if (std::tuple(h(o), o.gpus * o.servers(), o.tight, o.pipeline > 1) <
          std::tuple(h(p), p.gpus * p.servers(), p.tight, p.pipeline > 1)) {
        pick = i;
      }
    } else if (std::tuple(o.tight, o.gpus * o.nodes, o.pipeline > 1) <
               std::tuple(p.tight, p.gpus * p.nodes, p.pipeline > 1)) {
      pick = i;
    }
  }
  std::rotate(options.begin(), options.begin() + static_cast<std::ptrdiff_t>(pick),
              options.begin() + static_cast<std::ptrdiff_t>(pick) + 1);
}

}  // namespace

Shard default_shard(Task task, Engine engine, std::uint32_t gpus) noexcept
{
  if (gpus <= 1) {
    return Shard::none;
  }
  if (is_training(task)) {
    // Unsloth's multi-GPU is data parallel (its DDP guide): every GPU holds the whole model.
    return engine == Engine::deepspeed ? Shard::zero3 : engine == Engine::unsloth ? Shard::ddp : Shard::fsdp;
  }
  return splits_by_layer(engine) ? Shard::layer : Shard::tp;
}

namespace {

// The shard a job on `gpus` GPUs of `servers` servers gets: the one asked, else the default.
Shard shard_on(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard, std::uint32_t servers)
{
  return shard.value_or(default_shard(base.task, base.engine, gpus * servers));
}

JobSpec with_gpus(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard, std::uint32_t nodes)
{
  JobSpec job = base;
  job.gpus = gpus;
  job.nodes = std::max<std::uint32_t>(nodes, 1);
  job.pipeline = 1;
  job.shard = shard_on(base, gpus, shard, job.nodes);
  return job;
}

}  // namespace

std::uint32_t batch_concurrency(const JobSpec& there, const Card& card, const SpeedLoad& load, std::uint64_t requests,
                                const MemoryEstimate& memory)
{
  if (there.batch > 1) {
    return there.batch;  // --batch: the requests in flight the user asked for
  }
  const std::uint64_t context = std::max<std::uint32_t>(there.context, 1);
  const std::uint64_t out = load.output_len > 0 ? load.output_len
                                                : std::max<std::uint64_t>(1, std::min<std::uint64_t>(k_default_output_len, context / 2));
  const std::uint64_t in = load.input_len > 0 ? load.input_len : std::max<std::uint64_t>(1, context - std::min(out, context - 1));
  // vLLM hands out the pool in 16-token blocks, TensorRT-LLM in 32; SGLang one token per page.
  const std::uint64_t page = kv_page_tokens(there.engine);
  const std::uint64_t per_request = (in + out + page - 1) / page * page;
  const ServePool pool = serve_pool(there, memory, card.usable);
  std::uint64_t c = pool.kv_pool_tokens / per_request;
  if (there.engine == Engine::vllm) {
    c = std::min<std::uint64_t>(c, vllm_profile_seqs(there));  // the sequences its profiling pass sized
  }
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(std::min(c, requests), 1, 65536));
}

SpeedLoad speed_load(const JobSpec& there, const Card& card, const PlanRequest& request, const MemoryEstimate& memory)
{
  SpeedLoad load = request.size.load;
  if (there.offline_batch && load.concurrency == 0) {
    load.concurrency = batch_concurrency(there, card, load, request.size.requests.value_or(1), memory);
    return load;
  }
  if (there.task == Task::serve && load.concurrency == 0 && !pools_kv(there.engine)) {
    load.concurrency = std::max<std::uint32_t>(there.batch, 1);  // llama.cpp / Ollama: the slots (-np) planned
  } else if (there.task == Task::serve && load.concurrency == 0) {
    const ServePool pool = serve_pool(there, memory, card.usable);
    load.concurrency = static_cast<std::uint32_t>(std::clamp(pool.max_concurrency, 1.0, 65536.0));
  }
  return load;
}

namespace {

// The option's speed, whether its headroom is tight, and for a sized job its hours and bill (or,
// unsized, the tokens a dollar buys).
// What the speed and the start-up read from a card's job, computed once per card (they depend on
// the weights as the engine holds them there, not on the GPU count).
struct JobShape {
  SpeedFigures figures;
  StartupTime startup;
};

class JobShapes {
public:
  const JobShape& on(const std::string& card, const JobSpec& job)
  {
    auto it = m_shapes.find(card);
    if (it == m_shapes.end()) {
      const SpeedFigures figures = speed_figures(job);
      it = m_shapes.emplace(card, JobShape{figures, startup_time(job, figures)}).first;
    }
    return it->second;
  }

private:
  std::map<std::string, JobShape> m_shapes;
};

// The load of an option on several servers: the link between them.
SpeedLoad with_link(SpeedLoad load, const PlanOption& opt, const NodeLink* link)
{
  if (opt.nodes > 1 && link != nullptr) {
    load.node_bytes_per_s = link->bytes_per_s().value_or(0.0);
    load.node_link = link->label();
  }
  return load;
}

// The option's speed, whether its headroom is tight, and for a sized job its hours (what the
// shape decides; the bill is add_bill's). `serving`: the speed of a serving option, already sized
// for its workload (size_serving).
void add_speed(PlanOption& opt, const JobSpec& there, const JobShape& shape, const Card& card, const PlanRequest& request,
               const MemoryEstimate& memory, const NodeLink* link, const Speed* serving = nullptr)
{
  opt.pipeline = std::max<std::uint32_t>(there.pipeline, 1);
  if (serving != nullptr) {
    opt.speed = *serving;
  } else {
    opt.speed = estimate_speed(there, card, with_link(speed_load(there, card, request, memory), opt, link), shape.figures);
  }
  opt.tight = opt.fits && static_cast<double>(opt.headroom) <
                              static_cast<double>(opt.total.n) * memory_error_pct(there) / 100.0;
  if (request.size.sized()) {
    if (const auto work = work_seconds(there, opt.speed, request.size)) {
      opt.startup = shape.startup.total();
      opt.hours = std::chrono::seconds{static_cast<std::int64_t>(ceil_up(std::min(*work, 1e12)))} + opt.startup;
    }
  }
  opt.late = request.deadline && (!opt.hours || *opt.hours > *request.deadline);
}

// For a sized job its bill, else the tokens a dollar buys, at the option's price.
void add_bill(PlanOption& opt, const JobSpec& there, const ProviderInfo& provider, const PlanRequest& request)
{
  if (request.size.sized()) {
    if (opt.hours) {
      // Every server (each replica's too) is billed on its own under the provider's rules.
      const MicroUsd one = (opt.spot ? provider.spot_billing : provider.billing).charge(opt.price_per_hour, *opt.hours);
      opt.job_cost = MicroUsd{one.n * opt.servers()};
    }
  } else {
    opt.tokens_per_dollar = tokens_per_dollar(there, opt.speed, opt.price_per_hour.n * opt.servers());
  }
}

// One server configuration sold: an offer, or a per-GPU provider's server of `gpus` cards at
// `gpus` x its 1-GPU price, derived from `base` without copying it (plan's start-up: RunPod's
// pods of every count are most of the market's shapes).
struct Sold {
  const Offer* base;
  std::uint32_t gpus;
  MicroUsd price_per_hour;
  std::optional<MicroUsd> spot_price_per_hour;
  [[nodiscard]] const std::string& provider() const noexcept { return base->provider; }
  [[nodiscard]] const std::string& card() const noexcept { return base->card; }
  [[nodiscard]] bool derived() const noexcept { return gpus != base->gpus; }
  // --spot ranks and bills the spot price where there is one.
  [[nodiscard]] bool spot(bool asked) const noexcept { return asked && spot_price_per_hour.has_value(); }
  [[nodiscard]] MicroUsd price(bool asked) const noexcept { return spot(asked) ? *spot_price_per_hour : price_per_hour; }
};

// What an option is on its shape, whoever sells it: the job as run there, memory, fit, serving
// size, speed and hours. The market sells one shape on many clouds and regions (some 1,300 offers
// of about 100 shapes), so each shape is worked out once (plan's start-up, docs/benchmarks.md).
struct ShapeOption {
  // Every field but the seller's and the price's. alternatives_only ranks each offer of the shape
  // in it (fill_price); every field that sets is set again for each option built from it.
  PlanOption option;
  JobSpec there;  // the job the bill reads (the serving replica's when sized for a workload)
  std::uint32_t kept = 0;  // options still to be built from it: the last one takes `option` itself
};

// An offer to become an option: `nodes` servers of its shape (over `link` when more than one).
struct Candidate {
  const Sold* offer;
  const ProviderInfo* provider;
  std::uint32_t nodes;
  const NodeLink* link;
  ShapeOption* shape;
};

}  // namespace

JobSpec job_for_gpus(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard, std::uint32_t nodes)
{
  JobSpec job = with_gpus(base, gpus, shard, nodes);
  if (const auto l = layout_on(job, job.gpus, job.nodes, job.shard)) {
    job.pipeline = l->pipeline;
    job.nodes = l->nodes;
  }
  return job;
}

bool gpus_feasible(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard, std::uint32_t nodes)
{
  // with_gpus' fields, without its copy of the job
  const std::uint32_t servers = std::max<std::uint32_t>(nodes, 1);
  return layout_on(base, gpus, servers, shard_on(base, gpus, shard, servers)).has_value();
}

namespace {

std::vector<Sold> expand_sold(std::span<const Offer* const> offers, std::span<const ProviderInfo> providers,
                              std::span<const Card> cards)
{
  // (provider, card) -> the per-server GPU counts listed explicitly, as bits (only counts up to
  // k_max_gpus_per_server are ever asked). The market comes grouped by both, so the last group
  // found is asked first.
  using Group = std::pair<std::string_view, std::string_view>;
  static_assert(k_max_gpus_per_server < 32);
  std::map<Group, std::uint32_t> listed;
  auto bits_of = [&listed, last = listed.end()](const Offer& o) mutable -> std::uint32_t& {
    if (last == listed.end() || last->first != Group{o.provider, o.card}) {
      last = listed.try_emplace(Group{o.provider, o.card}, 0U).first;
    }
    return last->second;
  };
  for (const Offer* o : offers) {
    if (o->gpus <= k_max_gpus_per_server) {
      bits_of(*o) |= 1U << o->gpus;
    }
  }
  std::vector<Sold> out;
  out.reserve(offers.size() * 2);  // most are listed shapes; a 1-GPU per-GPU offer adds up to 7 more
  const ProviderInfo* p = nullptr;
  const Card* c = nullptr;
  for (const Offer* op : offers) {
    const Offer& o = *op;
    if (p == nullptr || p->name != o.provider) {
      p = provider_named(providers, o.provider);
    }
    if (c == nullptr || c->id != o.card) {
      c = card_with_id(cards, o.card);
    }
    if (p == nullptr || c == nullptr || !allowed(*p, *c, o.gpus)) {
      continue;
    }
    out.push_back(Sold{&o, o.gpus, o.price_per_hour, o.spot_price_per_hour});
    if (!p->per_gpu_servers || o.gpus != 1) {
      continue;  // the provider sells only the shapes it lists
    }
    // A per-GPU provider's pods of every count (RunPod's 1..8); a count it lists keeps its own price
    // (the market snapshot lists RunPod's 1, 2, 4 and 8).
    const std::uint32_t counts = bits_of(o);
    for (std::uint32_t n = 2; n <= std::min(p->max_gpus, k_max_gpus_per_server); ++n) {
      if ((counts & (1U << n)) != 0) {
        continue;
      }
      std::optional<MicroUsd> spot;
      if (o.spot_price_per_hour) {
        spot = MicroUsd{o.spot_price_per_hour->n * n};
      }
      out.push_back(Sold{&o, n, MicroUsd{o.price_per_hour.n * n}, spot});
    }
  }
  return out;
}

std::string price_origin_of(const Sold& s)
{
  return s.derived() ? std::to_string(s.gpus) + " x 1-GPU price (" + s.base->price_origin + ")" : s.base->price_origin;
}

}  // namespace

std::vector<Offer> expand_offers(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                 std::span<const Card> cards)
{
  std::vector<const Offer*> all;
  all.reserve(offers.size());
  for (const Offer& o : offers) {
    all.push_back(&o);
  }
  std::vector<Offer> out;
  for (const Sold& s : expand_sold(all, providers, cards)) {
    Offer& o = out.emplace_back(*s.base);
    o.gpus = s.gpus;
    o.price_per_hour = s.price_per_hour;
    o.spot_price_per_hour = s.spot_price_per_hour;
    o.price_origin = price_origin_of(s);
  }
  return out;
}

PlanResult rank(const JobSpec& job, std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                std::span<const Card> cards, const PlanRequest& request, const Estimator& estimator)
{
  EstimateCache estimates(request.shard, estimator);
  CardRuns runs(job);
  JobShapes shapes;
  PlanResult result;

  // --provider, --rentable, --region, and per (cloud, card, GPUs) the cheapest region.
  const std::vector<const Offer*> selected = select_offer_ptrs(offers, providers, request.filter, request.spot);
  const std::vector<Sold> sold = expand_sold(selected, providers, cards);
  const auto wanted = [&](const Sold& o) {
    return !request.card || o.card() == *request.card;
  };
  // --card: the smallest feasible GPU count sold for that card (1..8 when nobody sells it) that
  // fits (1 when none does).
  const Card* given_card = request.card ? card_with_id(cards, *request.card) : nullptr;
  std::uint32_t smallest_fit = 1;
  if (given_card != nullptr && !request.gpus) {
    std::set<std::uint32_t> counts;
    for (const auto& o : sold) {
      if (wanted(o)) {
        counts.insert(o.gpus);
      }
    }
    if (counts.empty()) {
      for (std::uint32_t n = 1; n <= k_max_gpus_per_server; ++n) {
        counts.insert(n);
      }
    }
    for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
      const std::uint32_t n = *it;
      const JobSpec& there = runs.on(*given_card).job;
      if (gpus_feasible(there, n, request.shard) &&
          estimates.at(there, n).total() <= fit_limit_for(job_for_gpus(there, n, request.shard), given_card->usable)) {
        smallest_fit = n;
      }
    }
  }
  const std::optional<std::uint32_t> count = request.gpus;

  // An option's shape (card, GPUs, servers, link), worked out once.
  // Keyed by the card's place in `cards` (one entry per id).
  std::map<std::tuple<const Card*, std::uint32_t, std::uint32_t, const NodeLink*>, ShapeOption> shape_options;
  const auto shape_option = [&](const Card& c, std::uint32_t gpus, std::uint32_t nodes, const NodeLink* link) -> ShapeOption& {
    const auto key = std::tuple(&c, gpus, nodes, link);
    if (const auto it = shape_options.find(key); it != shape_options.end()) {
      return it->second;
    }
    const CardRun& run = runs.on(c);
    PlanOption opt;
    opt.runs = run.runs;
    opt.card = c.id;
    opt.card_display = c.display;
    opt.gpus = gpus;
    opt.nodes = nodes;
    if (nodes > 1 && link != nullptr) {
      opt.node_link = link->label();
      opt.node_link_known = link->known();
    }
    opt.usable = c.usable;
    JobSpec there = job_for_gpus(run.job, gpus, request.shard, nodes);
    const JobShape& shape = shapes.on(c.id, run.job);
    MemoryEstimate memory = estimates.at(run.job, gpus, nodes);
    if (there.micro_batch_chosen) {
      // Training without --micro-batch: the micro-batch that trains fastest in this card's memory.
      const JobSpec chosen = with_chosen_micro_batch(there, c, shape.figures, [&](const JobSpec& j) { return estimator(j).total(); });
      if (chosen.batch > there.batch) {
        memory = estimator(chosen);
      }
      there.batch = chosen.batch;
    }
    opt.micro_batch = is_training(there.task) ? there.batch : 0;
    opt.limit = fit_limit_for(there, c.usable);
    std::optional<ServeSizing> serving;
    if (job.task == Task::serve) {
      // The workload sizes each server: its sequences, and the replicas that hold them all.
      serving = size_serving(there, c, with_link(request.size.load, opt, link), request.targets, estimator, shape.figures);
      opt.total = serving->memory.total();
      opt.fits = serving->fits;
      opt.serve = serving->shape;
    } else {
      opt.total = memory.total();
      opt.fits = opt.total <= opt.limit;
    }
    opt.headroom = signed_diff(opt.limit, opt.total);
    if (serving) {
      add_speed(opt, serving->job, shape, c, request, serving->memory, link, &serving->speed);
      there = serving->job;
    } else {
      add_speed(opt, there, shape, c, request, memory, link);
    }
    return shape_options.emplace(key, ShapeOption{std::move(opt), std::move(there)}).first->second;
  };

  // What ranks an offer on its shape: whether gpurent rents it, the price and the bill.
  const auto fill_price = [&](PlanOption& opt, const Candidate& cand) {
    const Sold& o = *cand.offer;
    const ProviderInfo& p = *cand.provider;
    const bool spot = o.spot(request.spot);
    const MicroUsd price = o.price(request.spot);
    opt.rentable = p.rentable();
    opt.billing_rule = spot ? p.spot_billing : p.billing;
    opt.price_per_hour = price;
    opt.spot = spot;
    const MicroUsd one = opt.billing_rule.charge(price, request.runtime);
    opt.cost = MicroUsd{one.n * opt.servers()};
    opt.job_cost.reset();
    opt.tokens_per_dollar.reset();
    add_bill(opt, cand.shape->there, p, request);
  };
  // The option an offer gives on its shape: the seller's fields, the price and the bill.
  const auto fill_option = [&](PlanOption& opt, const Candidate& cand) {
    const Offer& o = *cand.offer->base;
    const ProviderInfo& p = *cand.provider;
    fill_price(opt, cand);
    opt.provider = o.provider;
    opt.region = o.region;
    opt.billing_source = p.billing_source;
    opt.price_source = price_source_of(o);
    opt.price_date = price_date_of(o);
    opt.instance_type = o.instance_type;
    opt.upstream = o.upstream;
    opt.gpu_only = o.gpu_only;
    opt.billing = p.billing_label;
    opt.price_origin = price_origin_of(*cand.offer);
  };
  std::vector<Candidate> candidates;
  candidates.reserve(sold.size());
  // Offers come grouped by cloud and card (merge_offers' order): the last lookups are kept.
  const ProviderInfo* last_provider = nullptr;
  const Card* last_card = nullptr;
  const auto add_option = [&](const Sold& o, std::uint32_t nodes, const NodeLink* link) {
    if (last_provider == nullptr || last_provider->name != o.provider()) {
      last_provider = provider_named(providers, o.provider());
    }
    if (last_card == nullptr || last_card->id != o.card()) {
      last_card = card_with_id(cards, o.card());
    }
    candidates.push_back(Candidate{&o, last_provider, nodes, link, &shape_option(*last_card, o.gpus, nodes, link)});
  };
  const auto priced_ok = [&](const Sold& o) { return !request.max_price || o.price(request.spot) <= *request.max_price; };
  const std::uint32_t asked_nodes = request.nodes.value_or(1);
  std::map<std::uint32_t, bool> feasible;  // per GPU count, on one server
  const auto feasible_on_one = [&](std::uint32_t gpus) {
    auto it = feasible.find(gpus);
    if (it == feasible.end()) {
      it = feasible.emplace(gpus, gpus_feasible(job, gpus, request.shard)).first;
    }
    return it->second;
  };
  if (asked_nodes == 1) {
    for (const auto& o : sold) {
      if (!wanted(o) || (count && o.gpus != *count) || !feasible_on_one(o.gpus) || !priced_ok(o)) {
        continue;
      }
      add_option(o, 1, nullptr);
    }
  }
  // Several servers: asked for, or by itself when no single server fits.
  const bool one_fits = std::any_of(candidates.begin(), candidates.end(), [](const Candidate& c) {
    return c.shape->option.fits && c.shape->option.runs.status != RunStatus::refused;
  });
  if (asked_nodes > 1 || (!request.nodes && !one_fits)) {
    // (provider, card) -> the largest shape sold: the server a link between separate servers joins.
    std::map<std::pair<std::string, std::string>, std::uint32_t> largest;
    for (const auto& o : sold) {
      auto& l = largest[{o.provider(), o.card()}];
      l = std::max(l, o.gpus);
    }
    for (const auto& o : sold) {
      const auto& p = *provider_named(providers, o.provider());
      const NodeLink* link = node_link_for(p.node_links, o.card());
      if (link == nullptr || !wanted(o) || (count && o.gpus != *count) || !priced_ok(o)) {
        continue;
      }
      if (o.gpus != (link->gpus_per_node > 0 ? link->gpus_per_node : largest[{o.provider(), o.card()}])) {
        continue;
      }
      const std::uint32_t most = std::min(link->max_nodes, k_max_nodes);
      if (asked_nodes > 1) {
        if (asked_nodes <= most && gpus_feasible(job, o.gpus, request.shard, asked_nodes)) {
          add_option(o, asked_nodes, link);
        }
        continue;
      }
      if (!link->known()) {
        continue;  // by itself plan spreads a job only over servers whose link it knows: ask with --nodes
      }
      const auto& c = *card_with_id(cards, o.card());
      const JobSpec& there = runs.on(c).job;
      for (std::uint32_t n = 2; n <= most; ++n) {
        if (gpus_feasible(there, o.gpus, request.shard, n) &&
            estimates.at(there, o.gpus, n).total() <= fit_limit_for(job_for_gpus(there, o.gpus, request.shard, n), c.usable)) {
          add_option(o, n, link);
          break;
        }
      }
    }
  }
  const OptionOrder order{request.ranking(job.task), request.size.sized(), job.task};
  result.ranked_by = order.by;
  // The options: every candidate, or (alternatives_only) per shape the best and the best rentable
  // one, found by ranking each candidate on its shape before any option is built: the same list
  // keep_alternatives() would leave of all of them (tests/providers/test_plan_alternatives.cpp),
  // at a fraction of the copies.
  std::vector<const Candidate*> kept;
  kept.reserve(candidates.size());
  if (request.alternatives_only) {
    using Shape = std::tuple<std::string_view, std::uint32_t, std::uint32_t>;
    struct Best {
      const Candidate* any = nullptr;
      decltype(order.key(PlanOption{})) any_key;
      const Candidate* rentable = nullptr;
      decltype(order.key(PlanOption{})) rentable_key;
    };
    std::map<Shape, Best> best;
    const auto better = [](const auto& key_a, const Candidate& a, const auto& key_b, const Candidate& b) {
      if (key_a != key_b) {
        return key_a < key_b;
      }
      const Offer& x = *a.offer->base;
      const Offer& y = *b.offer->base;
      return std::tie(x.provider, x.card, x.region) < std::tie(y.provider, y.card, y.region);  // earlier wins a full tie
    };
    for (const auto& cand : candidates) {
      PlanOption& ranked = cand.shape->option;
      fill_price(ranked, cand);
      const auto key = order.key(ranked);
      Best& b = best[Shape{cand.offer->card(), cand.offer->gpus, cand.nodes}];
      if (b.any == nullptr || better(key, cand, b.any_key, *b.any)) {
        b.any = &cand;
        b.any_key = key;
      }
      if (ranked.rentable && (b.rentable == nullptr || better(key, cand, b.rentable_key, *b.rentable))) {
        b.rentable = &cand;
        b.rentable_key = key;
      }
    }
    for (const auto& cand : candidates) {
      const Best& b = best.at(Shape{cand.offer->card(), cand.offer->gpus, cand.nodes});
      if (b.any == &cand || b.rentable == &cand) {
        kept.push_back(&cand);
      }
    }
  } else {
    for (const auto& cand : candidates) {
      kept.push_back(&cand);
    }
  }
  result.options.reserve(kept.size());
  for (const Candidate* cand : kept) {
    ++cand->shape->kept;
  }
  for (const Candidate* cand : kept) {
    ShapeOption& shape = *cand->shape;
    PlanOption opt = --shape.kept == 0 ? std::move(shape.option) : shape.option;
    fill_option(opt, *cand);
    result.options.push_back(std::move(opt));
  }
  if (!result.options.empty()) {
    sort_options(result.options, order);
  }
  choose(result.options, order);

  if (!result.options.empty() && result.options.front().choosable()) {
    result.choice = result.options.front();
  }

  // What the memory breakdown refers to: the choice, else the given card, else the option
  // closest to fitting (largest headroom), else one GPU and no card.
  std::uint32_t gpus = count.value_or(smallest_fit);
  std::uint32_t nodes = asked_nodes;
  const PlanOption* shown = result.choice ? &*result.choice : nullptr;  // the option the memory is for
  if (result.choice) {
    gpus = result.choice->gpus;
    nodes = result.choice->nodes;
    result.card = *card_with_id(cards, result.choice->card);
  } else if (given_card != nullptr) {
    result.card = *given_card;
    if (asked_nodes > 1 && !result.options.empty()) {
      gpus = result.options.front().gpus;  // the shape joined across servers, not one server's count
    }
    for (const auto& o : result.options) {
      if (o.gpus == gpus && o.nodes == nodes) {
        shown = &o;  // that card at the count shown
        break;
      }
    }
  } else if (!result.options.empty()) {
    const auto closest = std::max_element(result.options.begin(), result.options.end(),
                                          [](const PlanOption& a, const PlanOption& b) {
                                            return std::tuple(a.runs.status != RunStatus::refused, a.headroom,
                                                              -static_cast<std::int64_t>(a.gpus)) <
                                                   std::tuple(b.runs.status != RunStatus::refused, b.headroom,
                                                              -static_cast<std::int64_t>(b.gpus));
                                          });
    gpus = closest->gpus;
    nodes = closest->nodes;
    result.card = *card_with_id(cards, closest->card);
    shown = &*closest;
  }
  const JobSpec* there = &job;
  if (result.card) {
    const CardRun& run = runs.on(*result.card);
    there = &run.job;
    result.runs = run.runs;
  }
  result.job = job_for_gpus(*there, gpus, request.shard, nodes);
  result.memory = estimates.at(*there, gpus, nodes);
  if (shown != nullptr && shown->serve && request.size.load.concurrency > 0) {
    // One replica as that option runs it (the choice, or the closest when none is chosen): its
    // sequences in memory and in the launch line.
    result.job.batch = shown->serve->per_replica;
    if (pools_kv(result.job.engine)) {
      result.job.max_seqs = shown->serve->per_replica;
    }
    result.memory = serving_memory(result.job, serve_lengths(result.job.context, request.size.load).tokens(), estimator);
  }
  if (result.job.micro_batch_chosen && result.card) {
    // The micro-batch chosen for that card and shape (the choice's own, when there is one).
    const JobSpec chosen = with_chosen_micro_batch(result.job, *result.card, shapes.on(result.card->id, *there).figures,
                                                   [&](const JobSpec& j) { return estimator(j).total(); });
    if (chosen.batch != result.job.batch) {
      result.job = chosen;
      result.memory = estimator(chosen);
    }
  }
  result.layout_ok = gpus_feasible(*there, gpus, request.shard, nodes);
  result.card_fits = given_card != nullptr && result.layout_ok &&
                     result.memory.total() <= fit_limit_for(result.job, given_card->usable);
  if (result.choice) {
    result.speed = result.choice->speed;
  } else if (result.card) {
    result.speed = estimate_speed(result.job, *result.card, speed_load(result.job, *result.card, request, result.memory));
  }
  return result;
}

}  // namespace gpurent
