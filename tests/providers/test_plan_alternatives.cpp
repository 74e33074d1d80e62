// SPDX-License-Identifier: MIT
// rank() with PlanRequest::alternatives_only (what plan lists without --card) must give exactly
// the list that keep_alternatives() below, the definition, leaves of every option: rank chooses
// the options per shape before it builds them (plan's start-up), and this holds the shortcut to
// the definition on the real market (the built-in offers and the snapshot), for jobs of every kind.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cli/plan_options.hpp"
#include "planner/job_request.hpp"
#include "planner/rank.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

// The definition: of every option, ranked (the choice first), per shape (card, GPUs per server,
// servers) the first and, when that one is a cloud gpurent does not rent, the first rentable one.
void keep_alternatives(std::vector<PlanOption>& options)
{
  using Shape = std::tuple<std::string, std::uint32_t, std::uint32_t>;
  std::set<Shape> any;
  std::set<Shape> rentable;
  std::vector<PlanOption> kept;
  for (auto& o : options) {
    const Shape shape{o.card, o.gpus, o.nodes};
    const bool first = any.insert(shape).second;
    const bool first_rentable = o.rentable && rentable.insert(shape).second;
    if (first || first_rentable) {
      kept.push_back(std::move(o));
    }
  }
  options = std::move(kept);
}

auto row(const PlanOption& o)
{
  return std::tuple(o.provider, o.card, o.gpus, o.nodes, o.region, o.price_per_hour.n, o.cost.n,
                    o.job_cost ? o.job_cost->n : -1, o.tokens_per_dollar.value_or(0), o.fits, o.rentable, o.headroom,
                    o.price_source, o.instance_type);
}

}  // namespace

TEST_CASE("rank: alternatives_only lists exactly what keep_alternatives leaves of every option", "[providers][plan]")
{
  const std::vector<std::vector<std::string>> jobs = {
      {"llama-3.1-8b"},
      {"llama-3.1-8b", "--task", "lora", "--tokens", "50M"},
      {"llama-3.1-70b", "--task", "serve"},
      {"qwen3-32b", "--task", "serve", "--concurrency", "200", "--input-len", "2000", "--output-len", "400"},
      {"deepseek-v3", "--requests", "25000", "--input-len", "1000", "--output-len", "400"},
      {"llama-3.1-8b", "--spot"},
      {"llama-3.1-8b", "--rentable"},
      {"llama-3.1-70b", "--task", "qlora", "--rank-by", "time", "--tokens", "10M"},
      {"llama-3.1-405b", "--task", "train"},
      {"llama-3.1-8b", "--hours", "3", "--max-price", "2"},
  };
  std::size_t shortened = 0;
  for (const auto& words : jobs) {
    std::string line;
    PlanArgs args;
    args.model = words[0];
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      const std::string v = i + 1 < words.size() ? words[i + 1] : "";
      if (w == "--spot") {
        args.spot = true;
        continue;
      }
      if (w == "--rentable") {
        args.rentable = true;
        continue;
      }
      std::string* field = w == "--task"           ? &args.task
                           : w == "--tokens"       ? &args.tokens
                           : w == "--concurrency"  ? &args.concurrency
                           : w == "--input-len"    ? &args.input_len
                           : w == "--output-len"   ? &args.output_len
                           : w == "--requests"     ? &args.requests
                           : w == "--rank-by"      ? &args.rank_by
                           : w == "--hours"        ? &args.hours
                           : w == "--max-price"    ? &args.max_price
                                                   : nullptr;
      REQUIRE(field != nullptr);
      *field = v;
      ++i;
    }
    for (const auto& w : words) {
      line += w + " ";
    }
    INFO(line);
    auto opts = validate_plan_args(args);
    REQUIRE(opts.has_value());
    const ModelArch* arch = find_model_ptr(args.model);
    REQUIRE(arch != nullptr);
    const auto job = make_job(*opts, *arch);
    REQUIRE(job.has_value());
    const auto estimator = [](const JobSpec& j) { return estimate(j); };
    PlanRequest every = opts->request;
    every.alternatives_only = false;
    PlanResult all = rank(*job, builtin_offers(), provider_catalog(), card_catalog(), every, estimator);
    PlanRequest some = opts->request;
    some.alternatives_only = true;
    const PlanResult kept = rank(*job, builtin_offers(), provider_catalog(), card_catalog(), some, estimator);
    const std::size_t before = all.options.size();
    keep_alternatives(all.options);
    shortened += before - all.options.size();
    REQUIRE(kept.options.size() == all.options.size());
    for (std::size_t i = 0; i < all.options.size(); ++i) {
      INFO("option " << i);
      CHECK(row(kept.options[i]) == row(all.options[i]));
    }
    REQUIRE(kept.choice.has_value() == all.choice.has_value());
    if (all.choice) {
      CHECK(row(*kept.choice) == row(*all.choice));
    }
    CHECK(kept.job.gpus == all.job.gpus);
    CHECK(kept.memory.total() == all.memory.total());
  }
  CHECK(shortened > 1000);  // the market's copies of one shape were there to leave out
}
