// SPDX-License-Identifier: MIT
#include "providers/plan.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>
#include <utility>

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
  const MemoryEstimate& at(const JobSpec& job, std::uint32_t gpus)
  {
    const auto key = std::pair(job.weights, gpus);
    auto it = m_cache.find(key);
    if (it == m_cache.end()) {
      it = m_cache.emplace(key, m_estimator(job_for_gpus(job, gpus, m_shard))).first;
    }
    return it->second;
  }

private:
  std::optional<Shard> m_shard;
  const Estimator& m_estimator;
  std::map<std::pair<WeightFormat, std::uint32_t>, MemoryEstimate> m_cache;
};

// The job as the engine runs it on each card, computed once per card.
class CardRuns {
public:
  explicit CardRuns(const JobSpec& job) : m_job(job) {}
  const CardRun& on(const Card& c)
  {
    auto it = m_runs.find(c.id);
    if (it == m_runs.end()) {
      it = m_runs.emplace(c.id, run_on_card(m_job, c.compute_capability)).first;
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

bool option_before(const PlanOption& a, const PlanOption& b)
{
  return std::tuple(!a.choosable(), run_rank(a.runs.status), a.cost, a.gpus, -a.headroom, a.price_per_hour, a.provider, a.card) <
         std::tuple(!b.choosable(), run_rank(b.runs.status), b.cost, b.gpus, -b.headroom, b.price_per_hour, b.provider, b.card);
}

}  // namespace

Shard default_shard(Task task, Engine engine, std::uint32_t gpus) noexcept
{
  if (gpus <= 1) {
    return Shard::none;
  }
  if (is_training(task)) {
    return engine == Engine::deepspeed ? Shard::zero3 : Shard::fsdp;
  }
  return Shard::tp;
}

namespace {

JobSpec with_gpus(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard)
{
  JobSpec job = base;
  job.gpus = gpus;
  job.pipeline = 1;
  job.shard = shard.value_or(default_shard(base.task, base.engine, gpus));
  return job;
}

}  // namespace

JobSpec job_for_gpus(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard)
{
  const JobSpec job = with_gpus(base, gpus, shard);
  return feasible_layout(job).value_or(job);
}

bool gpus_feasible(const JobSpec& base, std::uint32_t gpus, std::optional<Shard> shard)
{
  return feasible_layout(with_gpus(base, gpus, shard)).has_value();
}

std::vector<Offer> expand_offers(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                 std::span<const Card> cards)
{
  // (provider, card) -> GPU counts listed explicitly.
  std::map<std::pair<std::string, std::string>, std::set<std::uint32_t>> listed;
  for (const auto& o : offers) {
    listed[{o.provider, o.card}].insert(o.gpus);
  }
  std::vector<Offer> out;
  for (const auto& o : offers) {
    const auto* p = provider_named(providers, o.provider);
    const auto* c = card_with_id(cards, o.card);
    if (p == nullptr || c == nullptr || !allowed(*p, *c, o.gpus)) {
      continue;
    }
    out.push_back(o);
    const auto& counts = listed[{o.provider, o.card}];
    if (!p->per_gpu_servers || o.gpus != 1 || counts.size() != 1) {
      continue;  // the provider sells only the shapes it lists
    }
    for (std::uint32_t n = 2; n <= std::min(p->max_gpus, k_max_gpus_per_server); ++n) {
      Offer d = o;
      d.gpus = n;
      d.price_per_hour = MicroUsd{o.price_per_hour.n * n};
      if (o.spot_price_per_hour) {
        d.spot_price_per_hour = MicroUsd{o.spot_price_per_hour->n * n};
      }
      d.price_origin = std::to_string(n) + " x 1-GPU price (" + o.price_origin + ")";
      out.push_back(std::move(d));
    }
  }
  return out;
}

PlanResult rank(const JobSpec& job, std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                std::span<const Card> cards, const PlanRequest& request, const Estimator& estimator)
{
  EstimateCache estimates(request.shard, estimator);
  CardRuns runs(job);
  PlanResult result;

  const std::vector<Offer> sold = expand_offers(offers, providers, cards);
  const auto wanted = [&](const Offer& o) {
    return (!request.provider || o.provider == *request.provider) && (!request.card || o.card == *request.card);
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

  for (const auto& o : sold) {
    if (!wanted(o) || (count && o.gpus != *count) || !gpus_feasible(job, o.gpus, request.shard)) {
      continue;
    }
    const auto& p = *provider_named(providers, o.provider);
    const auto& c = *card_with_id(cards, o.card);
    const bool spot = request.spot && o.spot_price_per_hour.has_value();
    const MicroUsd price = spot ? *o.spot_price_per_hour : o.price_per_hour;
    if (request.max_price && price > *request.max_price) {
      continue;
    }
    const CardRun& run = runs.on(c);
    PlanOption opt;
    opt.runs = run.runs;
    opt.provider = o.provider;
    opt.card = c.id;
    opt.card_display = c.display;
    opt.gpus = o.gpus;
    opt.usable = c.usable;
    opt.limit = fit_limit_for(job_for_gpus(run.job, o.gpus, request.shard), c.usable);
    opt.total = estimates.at(run.job, o.gpus).total();
    opt.fits = opt.total <= opt.limit;
    opt.headroom = signed_diff(opt.limit, opt.total);
    opt.price_per_hour = price;
    opt.spot = spot;
    opt.cost = (spot ? p.spot_billing : p.billing).charge(price, request.runtime);
    opt.billing = p.billing_label;
    opt.price_origin = o.price_origin;
    result.options.push_back(std::move(opt));
  }
  std::sort(result.options.begin(), result.options.end(), option_before);

  if (!result.options.empty() && result.options.front().choosable()) {
    result.choice = result.options.front();
  }

  // What the memory breakdown refers to: the choice, else the given card, else the option
  // closest to fitting (largest headroom), else one GPU and no card.
  std::uint32_t gpus = count.value_or(smallest_fit);
  if (result.choice) {
    gpus = result.choice->gpus;
    result.card = *card_with_id(cards, result.choice->card);
  } else if (given_card != nullptr) {
    result.card = *given_card;
  } else if (!result.options.empty()) {
    const auto closest = std::max_element(result.options.begin(), result.options.end(),
                                          [](const PlanOption& a, const PlanOption& b) {
                                            return std::tuple(a.runs.status != RunStatus::refused, a.headroom,
                                                              -static_cast<std::int64_t>(a.gpus)) <
                                                   std::tuple(b.runs.status != RunStatus::refused, b.headroom,
                                                              -static_cast<std::int64_t>(b.gpus));
                                          });
    gpus = closest->gpus;
    result.card = *card_with_id(cards, closest->card);
  }
  const JobSpec* there = &job;
  if (result.card) {
    const CardRun& run = runs.on(*result.card);
    there = &run.job;
    result.runs = run.runs;
  }
  result.job = job_for_gpus(*there, gpus, request.shard);
  result.memory = estimates.at(*there, gpus);
  result.layout_ok = gpus_feasible(*there, gpus, request.shard);
  result.card_fits = given_card != nullptr && result.layout_ok &&
                     result.memory.total() <= fit_limit_for(result.job, given_card->usable);
  return result;
}

}  // namespace gpurent
