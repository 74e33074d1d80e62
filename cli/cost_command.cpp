// SPDX-License-Identifier: MIT
// `gpurent cost`: the bill a run would get under a provider's rules (cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "common/rounding.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/cost.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

constexpr double k_max_hours = 100000.0;  // about 11 years: anything above is a typo

struct CostOptions {
  std::string provider;
  std::string card;
  std::uint32_t gpus = 1;
  std::string hours;
  std::string stopped_hours = "0";
  std::string hibernated_hours = "0";
  std::string price;
  bool spot = false;
};

Result<std::chrono::seconds> parse_hours(const std::string& text, const char* flag)
{
  const auto h = parse_double(text);
  if (!h.has_value()) {
    return fail(Errc::usage, std::string(flag) + " `" + text.substr(0, 40) + "`: not a number; give hours, e.g. 1.5");
  }
  if (*h < 0) {
    return fail(Errc::usage, std::string(flag) + " " + text + ": negative; give hours >= 0");
  }
  if (*h > k_max_hours) {
    return fail(Errc::usage, std::string(flag) + " " + text + ": absurd (more than 100000 hours); give hours, e.g. 1.5");
  }
  return std::chrono::seconds{round_to_i64(*h * 3600.0)};
}

std::string hms(std::chrono::seconds s)
{
  const auto t = s.count();
  return fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
}

nlohmann::json state_json(const StateCost& c)
{
  return {{"billed_s", c.billed.count()}, {"cost", to_units(c.cost, 2)}, {"time_s", c.time.count()},
          {"rate_per_hour", to_units(c.rate_per_hour, 6)}};
}

void print_json(Services& s, const CostBreakdown& b, const PricedOffer& po)
{
  nlohmann::json j;
  j["provider"] = b.provider;
  j["card"] = b.card;
  j["gpus"] = b.gpus;
  j["spot"] = b.spot;
  j["price_per_hour"] = to_units(b.price_per_hour, 6);
  j["price_origin"] = po.offer.price_origin;
  j["billing"] = {{"increment_s", b.billing.increment.count()},
                  {"minimum_s", b.billing.minimum.count()},
                  {"charged_at_deploy_s", b.billing.charged_at_deploy.count()}};
  j["running"] = state_json(b.running);
  j["stopped"] = state_json(b.stopped);
  j["hibernated"] = state_json(b.hibernated);
  j["total"] = to_units(b.total, 2);
  j["currency"] = b.currency;
  j["notes"] = b.notes;
  s.out << j.dump(2) << '\n';
}

void print_text(Services& s, const CostBreakdown& b, const PricedOffer& po, const Card& card)
{
  s.out << fmt::format("{} on {}: {} x{}{}, {}/h\n", "cost", b.provider, card.display, b.gpus, b.spot ? " (spot)" : "",
                       format_usd(b.price_per_hour));
  s.out << wrap_text("price: " + po.origin_text, 78, "  ") << '\n';
  s.out << '\n' << fmt::format("{:<11} {:>10} {:>10} {:>10} {:>10}\n", "STATE", "TIME", "BILLED", "RATE/H", "COST");
  const auto row = [&](const char* name, const StateCost& c) {
    s.out << fmt::format("{:<11} {:>10} {:>10} {:>10} {:>10}\n", name, hms(c.time), hms(c.billed),
                         format_usd(c.rate_per_hour), format_usd(c.cost));
  };
  row("running", b.running);
  row("stopped", b.stopped);
  row("hibernated", b.hibernated);
  s.out << fmt::format("{:<11} {:>10} {:>10} {:>10} {:>10}\n", "total", "", "", "", format_usd(b.total)) << '\n';
  s.out << "notes:\n";
  for (const auto& n : b.notes) {
    s.out << "  - " << wrap_text(n, 74, "    ") << '\n';
  }
}

Result<void> run_cost(Services& s, const CostOptions& o)
{
  TRY_ASSIGN(const auto running, parse_hours(o.hours, "--hours"));
  TRY_ASSIGN(const auto stopped, parse_hours(o.stopped_hours, "--stopped-hours"));
  TRY_ASSIGN(const auto hibernated, parse_hours(o.hibernated_hours, "--hibernated-hours"));
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(const PricedOffer po, resolve_offer(s, cfg, o.provider, o.card, o.gpus, o.price, o.spot));
  TRY_ASSIGN(const CostBreakdown b, compute_cost(po.provider, po.offer, o.spot, running, stopped, hibernated));
  if (s.global.json) {
    print_json(s, b, po);
  } else {
    print_text(s, b, po, po.card);
  }
  return {};
}

}  // namespace

void add_cost_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<CostOptions>();
  auto* sub = app.add_subcommand("cost", "the bill a run would get under a provider's billing rules");
  sub->add_option("--provider", opts->provider, "cloud (lambda, runpod, vast, aws, nebius, ...: gpurent offers lists them)")->required();
  sub->add_option("--card", opts->card, "card, e.g. rtx-4090, a100-80gb, rtx-pro-6000")->required();
  sub->add_option("--gpus", opts->gpus, "GPUs in the server (default 1)");
  sub->add_option("--hours", opts->hours, "hours running (decimals allowed, e.g. 1.5)")->required();
  sub->add_option("--stopped-hours", opts->stopped_hours, "hours stopped");
  sub->add_option("--hibernated-hours", opts->hibernated_hours, "hours hibernated");
  sub->add_option("--price", opts->price, "USD per hour for the whole server (overrides built-in and config prices)");
  sub->add_flag("--spot", opts->spot, "a spot / interruptible server");
  sub->callback([&s, opts] {
    auto r = run_cost(s, *opts);
    if (!r) {
      s.exit_code = report_error(s, r.error());
    }
  });
}

}  // namespace gpurent
