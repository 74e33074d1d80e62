// SPDX-License-Identifier: MIT
// `gpurent offers`: every provider's card offers, their prices and where the prices come from.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

#include "cli/catalog_support.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/errors.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/offers_unmapped.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/cloud_rules.hpp"
#include "providers/offer_cache.hpp"
#include "providers/offer_select.hpp"
#include "providers/offers.hpp"
#include "providers/registry.hpp"

namespace gpurent {
namespace {

struct OffersOptions {
  std::string provider;  // --provider A,B
  bool rentable = false; // --rentable
  std::string region;    // --region R
  OfferFilter filter;    // the three, validated
  std::string min_vram;
  bool spot = false;
  bool refresh = false;
  bool offline = false;
  bool unmapped = false;
};

// One row: a priced offer, or a card the provider lists without a price.
struct Row {
  const ProviderInfo* provider = nullptr;
  Card card;
  std::uint32_t gpus = 1;
  const Offer* offer = nullptr;  // null: listed, no price known
};

// Per (cloud, card, GPUs) the cheapest region (or the --region asked for): the market lists
// hundreds of region rows (select_offers).
std::vector<Row> collect(const std::vector<Offer>& offers, const OffersOptions& o, double min_gib)
{
  const std::vector<Offer> picked = select_offers(offers, provider_catalog(), o.filter, o.spot);
  std::vector<Row> rows;
  for (const auto& p : provider_catalog()) {
    if (!o.filter.names(p.name) || (o.filter.rentable_only && !p.rentable())) {
      continue;
    }
    std::vector<std::string> priced;
    for (const auto& off : offers) {
      if (off.provider != p.name) {
        continue;
      }
      priced.push_back(off.card);  // a card priced in another region is not "listed without a price"
      const auto it = std::find_if(picked.begin(), picked.end(), [&](const Offer& x) {
        return same_shape(x, off) && x.region == off.region;
      });
      auto c = find_card(off.card);
      if (it == picked.end() || !c || to_gib(c->usable) < min_gib || (o.spot && !off.spot_price_per_hour)) {
        continue;
      }
      rows.push_back(Row{&p, *c, off.gpus, &off});
    }
    for (const auto& id : p.listed_cards) {
      auto c = find_card(id);
      if (!c || std::find(priced.begin(), priced.end(), id) != priced.end() || to_gib(c->usable) < min_gib || o.spot ||
          o.filter.region) {
        continue;
      }
      rows.push_back(Row{&p, *c, 0, nullptr});
    }
  }
  return rows;
}

nlohmann::json row_json(const Row& r, const Config& cfg)
{
  nlohmann::json j;
  j["provider"] = r.provider->name;
  j["card"] = r.card.id;
  j["display"] = r.card.display;
  j["vram_gib"] = round2(to_gib(r.card.usable));
  j["label_gb"] = r.card.label_gb;
  j["gpus"] = r.offer != nullptr ? nlohmann::json(r.gpus) : nlohmann::json(nullptr);
  j["price_per_hour"] = r.offer != nullptr ? nlohmann::json(to_units(r.offer->price_per_hour, 6)) : nlohmann::json(nullptr);
  j["spot_price_per_hour"] = r.offer != nullptr && r.offer->spot_price_per_hour
                                 ? nlohmann::json(to_units(*r.offer->spot_price_per_hour, 6))
                                 : nlohmann::json(nullptr);
  j["cloud"] = r.provider->name;
  j["rentable"] = r.provider->rentable();
  // cli.md plan v4: the cloud's billing rule and its source ("unknown": per hour assumed).
  j["billing"] = {{"increment_s", r.provider->billing.increment.count()},
                  {"minimum_s", r.provider->billing.minimum.count()},
                  {"source", billing_source_link(r.provider->billing_source)}};
  j["billing_label"] = r.provider->billing_label;
  j["billing_increment_s"] = r.provider->billing.increment.count();
  j["region"] = r.offer != nullptr && !r.offer->region.empty() ? r.offer->region : r.provider->default_region;
  j["price_source"] = r.offer != nullptr ? nlohmann::json(price_source_of(*r.offer)) : nlohmann::json(nullptr);
  const std::string date = r.offer != nullptr ? price_date_of(*r.offer) : std::string();
  j["price_date"] = date.empty() ? nlohmann::json(nullptr) : nlohmann::json(date);
  if (r.offer != nullptr && !r.offer->instance_type.empty()) {
    j["instance_type"] = r.offer->instance_type;
  }
  if (r.offer != nullptr && !r.offer->upstream.empty()) {
    j["upstream"] = r.offer->upstream;
  }
  if (r.offer != nullptr && r.offer->gpu_only) {
    j["gpu_only"] = true;
  }
  if (r.offer != nullptr && r.offer->spot_above_on_demand) {
    j["spot_above_on_demand"] = true;
  }
  j["price_origin"] = r.offer != nullptr ? nlohmann::json(r.offer->price_origin) : nlohmann::json(nullptr);
  j["price_note"] = r.offer != nullptr ? describe_origin(*r.offer, *r.provider, cfg)
                                       : "no published price; set [prices." + r.provider->name + "] \"" + r.card.id +
                                             "\" in the config file or pass --price to `cost`";
  return j;
}

// Whether any of the provider's rows names a region (the market's do; built-in prices do not).
bool with_region(const std::vector<Row>& rows, const ProviderInfo* p)
{
  return std::any_of(rows.begin(), rows.end(),
                     [&](const Row& r) { return r.provider == p && r.offer != nullptr && !r.offer->region.empty(); });
}

void print_text(Services& s, const std::vector<Row>& rows, const Config& cfg, const ProviderInfo* only)
{
  const ProviderInfo* current = nullptr;
  bool any_config = false;
  for (const auto& r : rows) {
    if (r.provider != current) {
      current = r.provider;
      std::string head = r.provider->name + ": " + r.provider->billing_label + " (" +
                         increment_label(r.provider->billing.increment) + " increments";
      if (r.provider->billing.minimum.count() > 0) {
        head += ", " + increment_label(r.provider->billing.minimum) + " minimum";
      }
      head += ")";
      if (!r.provider->default_region.empty()) {
        head += ", region " + r.provider->default_region;
      }
      if (!billing_known(*r.provider)) {
        head = r.provider->name + ": billing unknown: per hour assumed";
      }
      s.out << (&r == &rows.front() ? "" : "\n") << head << '\n';
      if (!r.provider->rentable()) {
        s.out << "  " << wrap_text("gpurent does not rent " + r.provider->name + " servers: rent one there, then `gpurent attach --provider " +
                                       r.provider->name + " --card CARD --gpus N --host USER@HOST --name NAME`",
                                   78, "    ")
              << '\n';
      }
      // Where this provider's prices in the table come from: fetched, built-in, or both.
      std::string fetched;
      std::string catalogue_date;
      std::string snapshot;
      bool builtin = false;
      for (const auto& other : rows) {
        if (other.provider == r.provider && other.offer != nullptr) {
          const std::string& origin = other.offer->price_origin;
          if (origin.find("fetched") != std::string::npos && fetched.empty()) {
            fetched = origin.substr(origin.find("fetched"));
          }
          if (other.offer->price_source == "catalogue" && other.offer->price_date > catalogue_date) {
            catalogue_date = other.offer->price_date;
          }
          builtin = builtin || origin.find("built-in") != std::string::npos;
          if (other.offer->price_source == "snapshot") {
            snapshot = other.offer->price_date;
          }
        }
      }
      if (!catalogue_date.empty()) {
        s.out << "  " << wrap_text("prices from SkyPilot's price catalogue, checked " + catalogue_date, 78, "    ") << '\n';
      }
      if (!fetched.empty()) {
        s.out << "  " << wrap_text("prices " + fetched.substr(0, fetched.find(')')) + " from " + r.provider->display + "'s API",
                                   78, "    ")
              << '\n';
      }
      if (!snapshot.empty()) {
        s.out << "  " << wrap_text("prices: the market snapshot of " + snapshot + " (SkyPilot's catalogue)", 78, "    ")
              << '\n';
      }
      if (builtin && !r.provider->price_source.empty()) {
        s.out << "  " << wrap_text("built-in prices: " + r.provider->price_source, 78, "    ") << '\n';
      }
      s.out << fmt::format("  {:<18} {:>15} {:>4} {:>10} {:>10}{}\n", "CARD", "VRAM GiB/label", "GPUS", "$/H", "SPOT $/H",
                           with_region(rows, r.provider) ? "  REGION" : "");
    }
    const std::string vram = fmt::format("{:.2f}/{}", to_gib(r.card.usable), r.card.label_gb);
    if (r.offer == nullptr) {
      s.out << fmt::format("  {:<18} {:>15} {:>4} {:>10} {:>10}\n", r.card.id, vram, "-", "no price", "-");
      continue;
    }
    const bool from_config = r.offer->price_origin == "config";
    any_config = any_config || from_config;
    std::string region = with_region(rows, r.provider) ? "  " + (r.offer->region.empty() ? "-" : r.offer->region) : "";
    if (r.offer->gpu_only) {
      region += " (GPU only)";
    }
    s.out << fmt::format("  {:<18} {:>15} {:>4} {:>10} {:>10}{}\n", r.card.id, vram, r.gpus,
                         format_usd(r.offer->price_per_hour) + (from_config ? "*" : ""),
                         r.offer->spot_price_per_hour ? format_usd(*r.offer->spot_price_per_hour) : "-", region);
  }
  if (rows.empty()) {
    s.out << "no offers match\n";
    if (const DriverInfo* d = only == nullptr ? nullptr : find_driver(only->name)) {
      s.out << wrap_text(only->name + " publishes no list prices gpurent can date: its offers come from its API. " +
                             (has_api_key(cfg, d->name) ? std::string() : "Set " + std::string(d->key_env) + ", then run ") +
                             "`gpurent offers --refresh --provider " + only->name + "`" +
                             (has_api_key(cfg, d->name) ? " to fetch them." : "."),
                         78, "")
            << '\n';
    }
  }
  if (any_config) {
    s.out << "\n* price from the config file " << cfg.path << '\n';
  }
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.offer == nullptr; })) {
    s.out << '\n'
          << wrap_text("no price: the provider publishes none we can date; set [prices.<provider>] \"<card>\" or "
                       "\"<card>x<gpus>\" = USD per hour in the config file, or pass --price to `gpurent cost`",
                       78, "")
          << '\n';
  }
}

// `--refresh`: fetches the price catalogue of every listed cloud (or `only`) and the offers of every
// provider with an API and a key (or only `only`). Returns the
// error to report: nothing could be asked (no key, no API), everything failed (network), or
// some providers failed (partial, exit 4).
std::optional<Error> refresh(Services& s, const Config& cfg, const std::string& only)
{
  // The price catalogue (every listed cloud, or `only` when it is one), then the live APIs.
  const CatalogRefreshSummary catalogue = refresh_catalogue(s, cfg, only, catalog_reader());
  if (!only.empty() && find_driver(only) == nullptr && !catalogue.asked) {
    return Error{Errc::unsupported, "offers --refresh: " + only + " has no API to fetch offers from and no file in the "
                                    "price catalogue; its prices are built-in, or set them with `gpurent config set "
                                    "prices." + only + ".<card> USD`"};
  }
  std::vector<std::string> asked;
  std::string keys;
  for (const auto& d : driver_registry()) {
    if (only.empty() || d.name == only) {
      keys += (keys.empty() ? "" : ", ") + std::string(d.key_env);
      if (has_api_key(cfg, d.name)) {
        asked.emplace_back(d.name);
      }
    }
  }
  if (asked.empty() && !catalogue.asked) {
    return Error{Errc::unauthorized, "offers --refresh: no API key" + std::string(only.empty() ? " for any provider" : " for " + only) +
                                         ", nothing was fetched; set " + keys + " (or `gpurent config set " +
                                         (only.empty() ? std::string("runpod") : only) + "_api_key KEY`)"};
  }
  std::vector<std::string> fetched_from;
  std::vector<std::string> failed = catalogue.failed;
  for (const auto& f : catalogue.failed) {
    report_warning(s, f);
  }
  if (catalogue.clouds_ok > 0) {
    s.err << "the price catalogue of " << catalogue.clouds_ok << (catalogue.clouds_ok == 1 ? " cloud" : " clouds")
          << " is current: " << catalogue.offers << " offers\n";
    fetched_from.emplace_back("the price catalogue");
  }
  auto path = offer_cache_path([&](const std::string& k) { return s.getenv(k); });
  if (!path) {
    return path.error();
  }
  std::size_t count = 0;
  for (const auto& name : asked) {
    auto h = open_provider(s, cfg, name);
    auto got = h ? refresh_offers(*h->provider, *path, s.clock.now()) : Result<std::vector<Offer>>(std::unexpected(h.error()));
    if (!got) {
      const std::string why = error_text(got.error(), "offers").message;
      failed.push_back(why.starts_with(name) ? why : name + ": " + why);
      report_warning(s, failed.back());
      continue;
    }
    count += got->size();
    fetched_from.push_back(name);
  }
  std::string from;
  for (const auto& f : fetched_from) {
    if (f != "the price catalogue") {
      from += (from.empty() ? "" : ", ") + f;
    }
  }
  if (!from.empty()) {
    s.err << "fetched " << count << " offers from " << from << " into the offer cache\n";
  }
  std::string what;
  for (const auto& f : failed) {
    what += (what.empty() ? "" : " / ") + f;
  }
  if (fetched_from.empty()) {
    return Error{Errc::unavailable, "offers --refresh fetched nothing: " + what +
                                        "; check the network and the API keys, then retry (the table shows built-in prices)"};
  }
  if (!failed.empty()) {
    return Error{Errc::partial, "offers --refresh: " + what +
                                    "; retry later (the table shows built-in or cached prices for what failed)"};
  }
  return std::nullopt;
}

// `--unmapped`: the catalogue names without a card; --provider takes any cloud of the catalogue.
Result<void> offers_unmapped(Services& s, const std::string& provider)
{
  const UnmappedListing listings[] = {snapshot_unmapped_listing()};
  if (!provider.empty() && !find_provider(provider) && !is_market_cloud(provider)) {
    return fail(Errc::usage, "--provider `" + provider + "`: not a cloud of the market catalogue or a provider of gpurent's");
  }
  print_unmapped(s, listings, provider);
  return {};
}

Result<void> run_offers(Services& s, OffersOptions o)
{
  double min_gib = 0;
  if (!o.min_vram.empty()) {
    const auto v = parse_double(o.min_vram);
    if (!v.has_value() || *v < 0 || *v > 100000) {
      return fail(Errc::usage, "--min-vram `" + o.min_vram + "`: give GiB per GPU, e.g. 40");
    }
    min_gib = *v;
  }
  if (o.unmapped) {
    return offers_unmapped(s, o.provider);
  }
  std::optional<ProviderInfo> only;
  if (!o.provider.empty()) {
    TRY_ASSIGN(o.filter.clouds, parse_cloud_list(o.provider));
    if (o.filter.clouds.size() == 1) {
      TRY_ASSIGN(only, find_provider(o.filter.clouds.front()));
      o.provider = only->name;  // --refresh asks that one provider
    } else {
      o.provider.clear();  // --refresh asks every provider with a key; the table keeps the list
    }
  }
  o.filter.rentable_only = o.rentable;
  if (!o.region.empty()) {
    const std::string_view region = trim(o.region);
    if (region.empty() || !printable_ascii(region)) {
      return fail(Errc::usage, "--region `" + o.region + "`: give a region as `gpurent offers` lists it, e.g. us-east-1");
    }
    o.filter.region = std::string(region);
  }
  if (o.refresh && o.offline) {
    return fail(Errc::usage, "--refresh fetches and --offline forbids it: give one of them");
  }
  TRY_ASSIGN(const Config cfg, load_config(s));
  std::optional<Error> refresh_error;
  if (!o.refresh && !o.offline) {
    refresh_stale_catalogue(s, cfg, catalog_reader());
  }
  if (o.refresh) {
    refresh_error = refresh(s, cfg, o.provider);
    if (refresh_error && refresh_error->code != Errc::partial && refresh_error->code != Errc::unavailable) {
      return std::unexpected(*refresh_error);  // nothing was asked of any API: the table would not be new
    }
  }
  // --region lists that region of the catalogue cache, not only each shape's cheapest.
  const auto offers = current_offers(s, cfg, o.filter.region ? market::CatalogLoad::all : market::CatalogLoad::cheapest_per_shape);
  const auto rows = collect(offers, o, min_gib);
  const bool priced = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.offer != nullptr; });
  if (refresh_error && refresh_error->code == Errc::unavailable && priced) {
    // Nothing fetched, but the table still answers with built-in or cached prices: a partial
    // answer (exit 4, cli.md), not a failure.
    refresh_error->code = Errc::partial;
  }
  if (s.global.json) {
    nlohmann::json j;
    j["offers"] = nlohmann::json::array();
    for (const auto& r : rows) {
      j["offers"].push_back(row_json(r, cfg));
    }
    j["currency"] = "USD";
    if (rows.empty() && only && find_driver(only->name) != nullptr) {
      j["note"] = only->name + " publishes no list prices: its offers come from its API; run `gpurent offers --refresh "
                               "--provider " + only->name + "` with " + std::string(find_driver(only->name)->key_env) + " set";
    }
    s.out << j.dump(2) << '\n';
  } else {
    print_text(s, rows, cfg, only ? &*only : nullptr);
  }
  if (refresh_error) {
    return std::unexpected(*refresh_error);  // after the table: it still shows built-in and cached prices
  }
  return {};
}

}  // namespace

void add_offers_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<OffersOptions>();
  auto* sub = app.add_subcommand("offers", "every provider's card offers, prices and billing increments");
  sub->add_option("--provider", opts->provider, "only these clouds, a comma list (runpod,nebius)");
  sub->add_flag("--rentable", opts->rentable, "only clouds gpurent rents itself (lambda, runpod, vast)");
  sub->add_option("--region", opts->region, "only offers in this region (default: each offer's cheapest region)");
  sub->add_option("--min-vram", opts->min_vram, "only cards with at least this usable memory per GPU (GiB)");
  sub->add_flag("--spot", opts->spot, "only offers with a spot price");
  sub->add_flag("--refresh", opts->refresh,
                "fetch the price catalogue and the offers of the providers' APIs (those with an API key) first");
  sub->add_flag("--offline", opts->offline, "never fetch: no refresh of a stale price catalogue");
  sub->add_flag("--unmapped", opts->unmapped, "list the market catalogue's GPU names that map to no card, per cloud");
  sub->callback([&s, opts] {
    auto r = run_offers(s, *opts);
    if (!r) {
      s.exit_code = report_error(s, r.error());
    }
  });
}

}  // namespace gpurent
