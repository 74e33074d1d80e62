// SPDX-License-Identifier: MIT
// What `gpurent up` rents (cli/up_choice.hpp): the offer as given, or plan's cheapest fit among
// the providers with an API, with the sizing it was chosen for.
#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "cli/plan_build.hpp"
#include "providers/node_link.hpp"
#include "cli/plan_json.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/plan_text.hpp"
#include "cli/up_choice.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/cost.hpp"
#include "providers/offers.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

// Whether any option that sizes a job was given (they mean something only with --from-plan).
bool sizing_given(const PlanArgs& a)
{
  return !a.task.empty() || !a.engine.empty() || !a.weights.empty() || !a.kv_cache.empty() || !a.context.empty() ||
         !a.batch.empty() || !a.micro_batch.empty() || !a.grad_accum.empty() || a.pack || a.compile || !a.optimizer.empty() ||
         a.grad_checkpointing || a.no_grad_checkpointing ||
         !a.lora_rank.empty() || !a.shard.empty() || !a.gpu_util.empty() || a.offline || !a.gguf.empty() ||
         !a.tokens.empty() || !a.epochs.empty() || !a.requests.empty() || !a.input_len.empty() ||
         !a.output_len.empty() || !a.concurrency.empty() || !a.rank_by.empty() || !a.deadline.empty();
}

std::string gib_text(double gib) { return fmt::format("{:.2f} GiB", round2(gib)); }

std::string provider_names(std::span<const ProviderInfo> providers)
{
  std::string names;
  for (const auto& p : providers) {
    names += (names.empty() ? "" : ", ") + p.name;
  }
  return names;
}

}  // namespace

Result<UpChoice> choose_given(Services& s, const Config& cfg, const UpOptions& o)
{
  if (o.provider.empty() || o.card.empty()) {
    return fail(Errc::usage, "up: give --provider and --card, or --from-plan MODEL to let `plan` choose them");
  }
  if (sizing_given(o.sizing)) {
    return fail(Errc::usage, "up: --task, --engine, --weights, --context and the other sizing options need "
                             "--from-plan MODEL");
  }
  UpChoice c;
  if (!o.gpus.empty()) {
    TRY_ASSIGN(c.gpus, parse_count(o.gpus, "--gpus", 1, k_max_gpus_per_server));
  }
  auto resolved = resolve_offer(s, cfg, o.provider, o.card, c.gpus, "", o.spot);
  if (!resolved && resolved.error().code == Errc::not_found) {
    // No built-in or configured price: a fresh fetched offer, else the price the provider reports.
    TRY_ASSIGN(ProviderInfo pi, find_provider(o.provider));
    TRY_ASSIGN(Card card, find_card(o.card));
    Offer reported{};
    reported.provider = pi.name;
    reported.card = card.id;
    reported.gpus = c.gpus;
    reported.region = o.region;
    reported.price_origin = "provider";
    PricedOffer po{pi, card, reported,
                   "price as the provider reports it once the server exists"};
    if (auto cached = cached_offers(s, cfg)) {
      if (const Offer* f = find_offer(*cached, pi.name, card.id, c.gpus)) {
        po.offer = *f;
        po.origin_text = f->price_origin;
      }
    }
    resolved = po;
  }
  TRY_ASSIGN(c.priced, std::move(resolved));
  return c;
}

namespace {

// up --from-plan on a choice gpurent does not rent (cli.md plan v4): what to attach, and the
// cheapest option it does rent.
std::string not_rentable_refusal(const PlanOption& choice, const PlanResult& rentable, const std::string& model)
{
  const std::string where = choice.region.empty() ? choice.provider : choice.provider + " (" + choice.region + ")";
  std::string text = fmt::format("up --from-plan: plan chose {} x {} on {} at {}/h, which gpurent does not rent: rent "
                                 "it there, then `gpurent attach --provider {} --card {} --gpus {} --host USER@HOST "
                                 "--name NAME`",
                                 choice.gpus, choice.card_display, where, format_usd(choice.price_per_hour),
                                 choice.provider, choice.card, choice.gpus);
  if (rentable.choice) {
    const PlanOption& r = *rentable.choice;
    text += fmt::format("; the cheapest option gpurent rents: {} x {} on {}{} at {}/h (add --rentable to `gpurent up "
                        "--from-plan {} ...` to rent it)",
                        r.gpus, r.card_display, r.provider, r.region.empty() ? "" : " (" + r.region + ")",
                        format_usd(r.price_per_hour), model);
  } else {
    text += "; no cloud gpurent rents offers a server that fits";
  }
  return text + "; nothing was rented";
}

}  // namespace

Result<UpChoice> choose_from_plan(Services& s, const Config& cfg, const UpOptions& o)
{
  PlanArgs args = o.sizing;
  args.model = o.from_plan;
  args.provider = o.provider;
  args.card = o.card;
  args.gpus = o.gpus;
  // One server, or a group's N servers (up --nodes N --group): plan sizes the job across all of them and
  // each member rents the chosen server shape; a group without --nodes: as many as plan finds it needs.
  args.nodes = o.group.empty() ? std::string("1") : o.nodes == 0 ? std::string() : std::to_string(o.nodes);
  args.hours = o.hours;
  args.spot = o.spot;
  args.max_price = o.max_price;
  if (args.region.empty()) {
    args.region = o.region;  // --region: plan ranks that region's offers
  }
  TRY_ASSIGN(const PlanOptions opts, validate_plan_args(args));
  if (!opts.request.filter.clouds.empty()) {
    bool any_rentable = false;
    for (const auto& name : opts.request.filter.clouds) {
      TRY_ASSIGN(const ProviderInfo pi, find_provider(name));
      any_rentable = any_rentable || pi.rentable();
    }
    if (!any_rentable) {
      const std::string& name = opts.request.filter.clouds.front();
      return fail(Errc::refused, "gpurent does not rent servers on " + args.provider + ": `gpurent plan " + o.from_plan +
                                     " --provider " + args.provider + "` sizes the job; rent the server there, then `gpurent attach --provider " +
                                     name + "` it");
    }
  }
  std::vector<ProviderInfo> rentable;
  std::vector<ProviderInfo> everywhere_providers;
  for (const auto& p : provider_catalog()) {
    if (!o.spot || p.spot_available) {
      everywhere_providers.push_back(p);
      if (p.rentable()) {
        rentable.push_back(p);
      }
    }
  }
  TRY_ASSIGN(const PlanInputs inputs, gather_plan_inputs(s, opts));
  TRY_ASSIGN(const PlanReport report, plan_from(inputs, opts, rentable));
  // The same plan over every cloud: cli.md plan v4 refuses a choice gpurent cannot rent, naming
  // the cheapest rentable option; with --rentable, a cheaper cloud elsewhere is worth knowing of.
  PlanOptions all_clouds = opts;
  all_clouds.request.filter.rentable_only = false;
  const auto everywhere = plan(all_clouds, Catalogues{inputs.offers(), everywhere_providers, card_catalog()}, inputs.model);
  const PlanOption* elsewhere =
      everywhere && everywhere->result.choice && !everywhere->result.choice->rentable ? &*everywhere->result.choice : nullptr;
  if (elsewhere != nullptr && !opts.request.filter.rentable_only) {
    return fail(Errc::refused, not_rentable_refusal(*elsewhere, report.result, o.from_plan));
  }
  const PlanResult& res = report.result;
  if (!res.choice) {
    if (s.global.json) {
      s.out << plan_to_json(report).dump(2) << '\n';
    } else {
      s.out << render_plan_text(report, s.color_out(), s.utf8());
    }
    const std::string why = report.fits() ? fmt::format("the job fits {} x {}, but no provider with an API ({}) offers "
                                                        "it within the filters",
                                                        res.job.gpus, res.card->display, provider_names(rentable))
                                          : plan_misfit_reason(report);
    return fail(Errc::refused,
                fmt::format("up --from-plan: {}; {}; nothing was rented", why,
                            report.recipe && report.recipe->recipe.fits
                                ? "the recipe above makes it fit: rerun with its options"
                                : (report.fixes.empty() ? "relax the filters, or rent elsewhere and `gpurent attach` it"
                                                        : "see the fixes above")));
  }
  const PlanOption& pick = *res.choice;
  TRY_ASSIGN(const ProviderInfo pi, find_provider(pick.provider));
  TRY_ASSIGN(const Card card, find_card(pick.card));
  if (pick.nodes > 1) {
    // `up` rents separate servers through the provider's server API; a cluster product with its
    // own fabric between servers is rented elsewhere (RunPod's Pod API has no clusters), and a plan
    // timed over that fabric would be wrong for separate servers.
    const NodeLink* link = node_link_for(pi.node_links, card.id);
    if (link != nullptr && link->kind == "cluster") {
      return fail(Errc::refused,
                  fmt::format("up --from-plan: plan chose {} {} servers x {} x {} joined by {}, which {}'s API does "
                              "not rent (it rents separate servers, whose link is not published); rent the cluster in "
                              "{}'s console and join each server with `gpurent attach --group {}`, or rent separate "
                              "servers with `gpurent up --nodes {} --group {} --provider {} --card {} --gpus {}` knowing "
                              "the plan's speed does not hold for them; nothing was rented",
                              pick.nodes, pi.name, pick.gpus, card.display, link->label(), pi.name, pi.name, o.group,
                              pick.nodes, o.group, pi.name, card.id, pick.gpus));
    }
  }
  if (pick.serve && pick.serve->replicas > 1) {
    // Replicas are separate servers, each with its own copy of the model: `up` rents one.
    return fail(Errc::refused,
                fmt::format("up --from-plan: plan chose {} replicas of {} x {} on {} ({} requests each) to serve "
                            "--concurrency {}; up rents one server: rerun with --concurrency {} once per replica, or "
                            "with --gpus or --card for a server that holds them all; nothing was rented",
                            pick.serve->replicas, pick.gpus, card.display, pi.name, pick.serve->per_replica,
                            pick.speed.concurrency, pick.serve->per_replica));
  }
  UpChoice c;
  c.gpus = pick.gpus;
  c.nodes = pick.nodes;
  Offer offer{};
  offer.provider = pi.name;
  offer.card = card.id;
  offer.gpus = pick.gpus;
  offer.price_per_hour = pick.price_per_hour;
  offer.region = pick.region.empty() ? o.region : pick.region;
  offer.price_origin = pick.price_origin;
  if (pick.spot) {
    offer.spot_price_per_hour = pick.price_per_hour;
  }
  c.priced = PricedOffer{pi, card, offer, describe_origin(offer, pi, cfg)};

  const JobSpec& job = res.job;
  const double total = to_gib(pick.total);
  const double usable = to_gib(pick.usable);
  const double limit = to_gib(pick.limit);
  const double headroom = static_cast<double>(pick.headroom) / static_cast<double>(k_gib);
  const std::string reason = "the cheapest option that fits among the providers with an API (" +
                             provider_names(rentable) + ")";
  if (o.quiet_plan) {  // a group's other members: the same choice, said once
    c.plan = nullptr;
    return c;
  }
  const std::string servers = pick.nodes > 1 ? fmt::format("{} servers x ", pick.nodes) : std::string();
  s.err << "gpurent: plan: " << job.model.name << ", " << to_string(job.task) << " (" << to_string(job.engine) << ", "
        << to_string(job.weights) << ", context " << job.context << ", batch " << job.batch << "): " << gib_text(total)
        << " per GPU on " << servers << pick.gpus << " GPU" << (pick.gpus > 1 ? "s" : "") << '\n'
        << "gpurent: chosen: " << pi.name << " " << servers << card.display << " x" << pick.gpus << ": " << gib_text(total)
        << " per GPU of " << gib_text(usable) << " usable (limit " << gib_text(limit) << ", headroom "
        << gib_text(headroom) << "), " << per_hour(pick.price_per_hour) << ", " << format_usd(pick.cost) << " for "
        << hours_label(report.runtime) << "; " << reason << '\n';
  if (elsewhere != nullptr && elsewhere->cost < pick.cost) {
    s.err << "gpurent: cheaper without an API: " << elsewhere->provider << " " << elsewhere->card_display << " x"
          << elsewhere->gpus << " at " << per_hour(elsewhere->price_per_hour)
          << "; rent it there and track it with `gpurent attach --provider " << elsewhere->provider << "`\n";
  }
  c.plan = {{"model", job.model.name},
            {"task", std::string(to_string(job.task))},
            {"engine", std::string(to_string(job.engine))},
            {"provider", pi.name},
            {"card", card.id},
            {"gpus", pick.gpus},
            {"nodes", pick.nodes},
            {"memory_per_gpu_gib", round2(total)},
            {"usable_gib", round2(usable)},
            {"limit_gib", round2(limit)},
            {"headroom_gib", round2(headroom)},
            {"price_per_hour", to_units(pick.price_per_hour)},
            {"cost", to_units(pick.cost)},
            {"hours", static_cast<double>(report.runtime.count()) / 3600.0},
            {"reason", reason}};
  return c;
}

}  // namespace gpurent
