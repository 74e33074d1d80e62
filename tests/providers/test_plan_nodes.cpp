// SPDX-License-Identifier: MIT
// The decisions `plan --nodes` makes (cli.md "multi-node"): how many servers a job needs, the bill
// of every server, whether the network between them is worth paying for, and the built-in node
// links' facts. Real estimates and cards, hand-built providers and prices.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

#include "providers/catalog.hpp"
#include "providers/node_link.hpp"
#include "providers/offer_data.hpp"
#include "planner/rank.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/param_count.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

namespace {

NodeLink link(const char* kind, std::optional<double> gbit, std::uint32_t gpus_per_node = 0, std::uint32_t most = 16)
{
  NodeLink l;
  l.kind = kind;
  l.product = std::string(kind) == "cluster" ? "Test Cluster" : "";
  l.gbit_per_s = gbit;
  l.gpus_per_node = gpus_per_node;
  l.max_nodes = most;
  l.source = "test";
  l.quote = "test";
  return l;
}

ProviderInfo provider(const char* name, std::chrono::seconds increment, std::vector<NodeLink> links)
{
  ProviderInfo p;
  p.name = name;
  p.billing = BillingPolicy{increment, 0s, 0s};
  p.spot_billing = p.billing;
  p.billing_label = increment == 3600s ? "hourly" : "per-second";
  p.node_links = std::move(links);
  return p;
}

Offer offer(const char* p, const char* card, std::uint32_t gpus, std::int64_t micro)
{
  Offer o;
  o.provider = p;
  o.card = card;
  o.gpus = gpus;
  o.price_per_hour = MicroUsd{micro};
  o.price_origin = "test";
  return o;
}

const std::vector<Card>& cards()
{
  static const std::vector<Card> c = {*find_card("h200")};
  return c;
}

JobSpec full_405b()
{
  JobSpec j;
  j.model = *find_model_ptr("llama-3.1-405b");
  j.task = Task::train;
  j.engine = Engine::transformers;
  j.weights = WeightFormat::bf16;
  j.context = 4096;
  j.grad_checkpointing = true;
  return j;
}

PlanResult plan(const JobSpec& job, const std::vector<ProviderInfo>& providers, const std::vector<Offer>& offers,
                const PlanRequest& req)
{
  return rank(job, offers, providers, cards(), req, [](const JobSpec& j) { return estimate(j); });
}

bool fits_on(const JobSpec& job, std::uint32_t gpus, std::uint32_t nodes)
{
  const JobSpec there = job_for_gpus(job, gpus, std::nullopt, nodes);
  return estimate(there).total() <= fit_limit_for(there, find_card("h200")->usable);
}

}  // namespace

TEST_CASE("plan nodes: a 405B full fine-tune does not fit one server and gets the fewest servers that fit",
          "[providers][plan][nodes]")
{
  const std::vector<ProviderInfo> providers = {provider("ib", 1s, {link("cluster", 3200.0, 8, 16)})};
  const std::vector<Offer> offers = {offer("ib", "h200", 8, 24'000'000)};
  const PlanResult r = plan(full_405b(), providers, offers, PlanRequest{});
  REQUIRE(r.choice);
  const std::uint32_t n = r.choice->nodes;
  CHECK(n > 1);
  CHECK(r.choice->gpus == 8);
  // The smallest count: it fits on n servers and not on n - 1.
  CHECK(fits_on(full_405b(), 8, n));
  CHECK_FALSE(fits_on(full_405b(), 8, n - 1));
  CHECK(r.job.nodes == n);
  CHECK(r.memory.total() == estimate(job_for_gpus(full_405b(), 8, std::nullopt, n)).total());
  // The single server is listed too, not fitting.
  CHECK(std::any_of(r.options.begin(), r.options.end(), [](const PlanOption& o) { return o.nodes == 1 && !o.fits; }));
  // The bill is every server's: n x the hour of one, per-second billing.
  CHECK(r.choice->cost.n == 24'000'000 * static_cast<std::int64_t>(n));
  CHECK(r.choice->speed.train_tokens_per_s);
}

TEST_CASE("plan nodes: --nodes N prices N servers, beyond the provider's most there is no option", "[providers][plan][nodes]")
{
  const std::vector<ProviderInfo> providers = {provider("ib", 3600s, {link("cluster", 3200.0, 8, 16)})};
  const std::vector<Offer> offers = {offer("ib", "h200", 8, 24'000'000), offer("ib", "h200", 4, 12'000'000)};
  PlanRequest req;
  req.nodes = 16;
  req.runtime = 5400s;  // 1.5 h: hourly billing charges 2 h per server
  const PlanResult r = plan(full_405b(), providers, offers, req);
  REQUIRE(r.choice);
  CHECK(r.choice->nodes == 16);
  CHECK(r.choice->gpus == 8);  // the cluster's shape only: no 16 x 4
  CHECK(r.options.size() == 1);
  CHECK(r.choice->cost.n == 2 * 24'000'000 * 16);
  req.nodes = 17;
  CHECK(plan(full_405b(), providers, offers, req).options.empty());
  // --nodes 1: one server only, as before.
  req.nodes = 1;
  const PlanResult one = plan(full_405b(), providers, offers, req);
  CHECK_FALSE(one.choice);
  CHECK(std::all_of(one.options.begin(), one.options.end(), [](const PlanOption& o) { return o.nodes == 1; }));
}

TEST_CASE("plan nodes: a job that fits one server is planned on one server, --nodes 1 or not", "[providers][plan][nodes]")
{
  JobSpec j = full_405b();
  j.model = *find_model_ptr("llama-3.1-8b");
  j.task = Task::lora;
  const std::vector<ProviderInfo> providers = {provider("ib", 1s, {link("cluster", 3200.0, 8, 16)})};
  const std::vector<Offer> offers = {offer("ib", "h200", 1, 3'000'000), offer("ib", "h200", 8, 24'000'000)};
  const PlanResult def = plan(j, providers, offers, PlanRequest{});
  PlanRequest one;
  one.nodes = 1;
  const PlanResult r1 = plan(j, providers, offers, one);
  REQUIRE(def.choice);
  REQUIRE(r1.choice);
  CHECK(def.choice->nodes == 1);
  CHECK(def.options.size() == r1.options.size());
  CHECK(def.choice->gpus == r1.choice->gpus);
  CHECK(def.choice->cost == r1.choice->cost);
  CHECK(def.job.nodes == 1);
}

TEST_CASE("plan nodes: a public 25 Gbit/s link makes the network dominate, the real bill ranks it below the cluster",
          "[providers][plan][nodes]")
{
  // "public" is cheaper per hour per server, but FSDP moves 3 x 810 GB per step through each
  // server's 25 Gbit/s: about 780 s a step of the network alone.
  const std::vector<ProviderInfo> providers = {provider("ib", 1s, {link("cluster", 3200.0, 8, 16)}),
                                               provider("public", 1s, {link("public", 25.0, 0, 64)})};
  const std::vector<Offer> offers = {offer("ib", "h200", 8, 24'000'000), offer("public", "h200", 8, 16'000'000)};
  PlanRequest req;
  req.nodes = 12;
  req.size.tokens = 10'000'000;
  const PlanResult r = plan(full_405b(), providers, offers, req);
  REQUIRE(r.choice);
  CHECK(r.choice->provider == "ib");
  const auto pub = std::find_if(r.options.begin(), r.options.end(), [](const PlanOption& o) { return o.provider == "public"; });
  REQUIRE(pub != r.options.end());
  REQUIRE(pub->speed.network_step_s);
  REQUIRE(pub->speed.compute_step_s);
  CHECK(pub->speed.bound == "interconnect");
  const double w16 = static_cast<double>(count_params(full_405b().model).active) * 2.0;
  CHECK(*pub->speed.network_step_s == Approx(3.0 * w16 * 95.0 / 96.0 / (25e9 / 8.0)).epsilon(0.001));
  CHECK(*pub->speed.network_step_s > 10.0 * *pub->speed.compute_step_s);
  REQUIRE(pub->job_cost);
  REQUIRE(r.choice->job_cost);
  CHECK(*pub->job_cost > *r.choice->job_cost);  // cheaper per hour, dearer per job
  CHECK(pub->price_per_hour < r.choice->price_per_hour);
  // Over InfiniBand the network is not what binds.
  REQUIRE(r.choice->speed.network_step_s);
  CHECK(*r.choice->speed.network_step_s < *r.choice->speed.compute_step_s);
  CHECK(r.choice->speed.bound == "compute");
}

TEST_CASE("plan nodes: servers whose link is not published are tried only when asked, and rank last",
          "[providers][plan][nodes]")
{
  const std::vector<ProviderInfo> providers = {provider("ib", 1s, {link("cluster", 3200.0, 8, 16)}),
                                               provider("dark", 1s, {link("public", std::nullopt, 0, 64)})};
  const std::vector<Offer> offers = {offer("ib", "h200", 8, 24'000'000), offer("dark", "h200", 8, 8'000'000)};
  // By itself plan does not spread the job over servers whose link it does not know.
  const PlanResult by_itself = plan(full_405b(), providers, offers, PlanRequest{});
  REQUIRE(by_itself.choice);
  CHECK(by_itself.choice->provider == "ib");
  CHECK_FALSE(std::any_of(by_itself.options.begin(), by_itself.options.end(),
                          [](const PlanOption& o) { return o.provider == "dark" && o.nodes > 1; }));
  // Asked for: priced, ranked after the known one although a third of its price.
  PlanRequest req;
  req.nodes = by_itself.choice->nodes;
  const PlanResult r = plan(full_405b(), providers, offers, req);
  REQUIRE(r.choice);
  CHECK(r.choice->provider == "ib");
  const auto dark = std::find_if(r.options.begin(), r.options.end(),
                                 [](const PlanOption& o) { return o.provider == "dark" && o.nodes > 1; });
  REQUIRE(dark != r.options.end());
  CHECK_FALSE(dark->node_link_known);
  CHECK_FALSE(dark->speed.train_tokens_per_s);
  CHECK_FALSE(dark->speed.unknown.empty());
}

TEST_CASE("node links: the built-in data", "[providers][nodes]")
{
  const auto runpod = find_provider("runpod");
  REQUIRE(runpod);
  const NodeLink* h100 = node_link_for(runpod->node_links, "h100-sxm");
  REQUIRE(h100);
  CHECK(h100->kind == "cluster");
  CHECK(*h100->gbit_per_s == 3200.0);
  CHECK(h100->gpus_per_node == 8);
  CHECK(h100->max_nodes == 16);
  CHECK(h100->source.find("https://docs.runpod.io/instant-clusters") == 0);
  CHECK(h100->quote.find("3200 Gbps") != std::string::npos);
  const NodeLink* a100 = node_link_for(runpod->node_links, "a100-80gb-sxm");
  REQUIRE(a100);
  CHECK(*a100->gbit_per_s == 1600.0);
  const NodeLink* l4 = node_link_for(runpod->node_links, "l4");
  REQUIRE(l4);
  CHECK(l4->kind == "public");
  CHECK_FALSE(l4->known());
  for (const char* name : {"gpucloud", "cloudgpu", "lambda", "vast"}) {
    INFO(name);
    const auto p = find_provider(name);
    REQUIRE(p);
    REQUIRE_FALSE(p->node_links.empty());
    CHECK(p->node_links.front().kind == "public");
    CHECK_FALSE(p->node_links.front().known());
    CHECK_FALSE(p->node_links.front().quote.empty());
  }
}

TEST_CASE("node links: the reader is strict", "[providers][nodes]")
{
  const auto known = [](const std::string& id) { return id == "h100-sxm"; };
  const auto read = [&](const char* text) { return node_links_from_json(nlohmann::json::parse(text), "p", known); };
  CHECK(read(R"([{"kind": "cluster", "product": "X", "gbit_per_s": 3200, "source": "u", "quote": "q"}])"));
  CHECK_FALSE(read(R"([{"kind": "cluster", "product": "X", "source": "u", "quote": "q"}])"));  // no bandwidth
  CHECK_FALSE(read(R"([{"kind": "lan", "source": "u", "quote": "q"}])"));
  CHECK_FALSE(read(R"([{"kind": "public", "source": "u", "quote": ""}])"));
  CHECK_FALSE(read(R"([{"kind": "public", "source": "u", "quote": "q", "max_nodes": 65}])"));
  CHECK_FALSE(read(R"([{"kind": "public", "source": "u", "quote": "q", "cards": ["b300"]}])"));
  CHECK_FALSE(read(R"([{"kind": "public", "source": "u", "quote": "q", "speed": 1}])"));
  const auto err = read(R"([{"kind": "public", "source": "u", "quote": "q", "gbit_per_s": "25"}])");
  REQUIRE_FALSE(err);
  CHECK(err.error().message.find("p[0].gbit_per_s") != std::string::npos);
}
