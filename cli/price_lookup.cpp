// SPDX-License-Identifier: MIT
#include "cli/price_lookup.hpp"

#include "cli/catalog_support.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"

#include <algorithm>
#include <set>

#include "common/text.hpp"
#include "providers/offers.hpp"

namespace gpurent {

namespace {

// The catalogue cache's offers to lay over the built-in ones (cli.md plan v4: config > live >
// catalogue > snapshot), only providers this build knows: as the cache reads them, per (provider,
// card, GPUs) the cheapest region (`load` cheapest_per_shape, what start-up needs) or every region
// (`load` all: --region picks among them). The built-in offers are never copied for this.
std::vector<Offer> catalogue_over_builtin(Services& s, const Config& cfg, market::CatalogLoad load)
{
  const auto providers = provider_catalog();
  std::vector<Offer> out = catalogue_offers(s, cfg, load);
  std::erase_if(out, [&](const Offer& o) {
    return std::none_of(providers.begin(), providers.end(), [&](const ProviderInfo& p) { return p.name == o.provider; });
  });
  return out;
}

}  // namespace

OfferRegions builtin_regions(market::CatalogLoad load) noexcept
{
  return load == market::CatalogLoad::cheapest_per_shape ? OfferRegions::cheapest_per_shape : OfferRegions::every;
}

std::span<const Offer> current_offers_into(Services& s, const Config& cfg, std::vector<Offer>& merged,
                                           market::CatalogLoad regions)
{
  // The catalogue's offers come after the built-in ones and before the live ones, as merge_offers
  // reads order within a tier: both go in its `fetched` list, the catalogue's first.
  std::vector<Offer> over = catalogue_over_builtin(s, cfg, regions);
  auto fetched = cached_offers(s, cfg);
  if (!fetched) {
    report_warning(s, "the offer cache was not used: " + fetched.error().message);
  } else {
    over.insert(over.end(), std::make_move_iterator(fetched->begin()), std::make_move_iterator(fetched->end()));
  }
  const auto builtin = builtin_offers(builtin_regions(regions));
  if (over.empty() && cfg.price_overrides.empty()) {
    return builtin;  // what merge_offers would give of them alone (tests/providers/test_offer_data.cpp)
  }
  merged = merge_offers(builtin, cfg.price_overrides, over);
  return merged;
}

std::vector<Offer> current_offers(Services& s, const Config& cfg, market::CatalogLoad regions)
{
  std::vector<Offer> merged;
  const auto offers = current_offers_into(s, cfg, merged, regions);
  return merged.empty() ? std::vector<Offer>(offers.begin(), offers.end()) : std::move(merged);
}

std::string describe_origin(const Offer& offer, const ProviderInfo& provider, const Config& cfg)
{
  if (offer.price_origin == "config") {
    return "from the config file " + (cfg.path.empty() ? std::string("config.toml") : cfg.path);
  }
  if (offer.price_origin == "--price") {
    return "from --price";
  }
  if (offer.price_source == "catalogue") {
    return "SkyPilot's price catalogue (catalogs/v8/" + offer.provider + "/vms.csv), fetched " + offer.price_date +
           "; `gpurent offers --refresh` updates it";
  }
  if (offer.price_source == "snapshot") {
    return "from the market snapshot of " + offer.price_date + " (SkyPilot's catalogue" +
           (offer.instance_type.empty() ? std::string() : ", " + offer.instance_type) +
           (offer.gpu_only ? "; GPU only: the host VM is extra" : "") + "); set [prices." + provider.name +
           "] in the config file to override";
  }
  if (offer.price_origin.starts_with("built-in ")) {
    return "built-in price from " + offer.price_origin.substr(9) + " (" + provider.price_source + "); set [prices." +
           provider.name + "] in the config file to override";
  }
  return offer.price_origin;
}

Result<PricedOffer> resolve_offer(Services& s, const Config& cfg, std::string_view provider, std::string_view card,
                                  std::uint32_t gpus, std::string_view price_usd, bool spot)
{
  PricedOffer po;
  auto p = find_provider(provider);
  if (!p) {
    return fail(Errc::usage, "--provider: " + p.error().message);
  }
  po.provider = *p;
  auto c = find_card(card);
  if (!c) {
    return fail(Errc::usage, "--card: " + c.error().message);
  }
  po.card = *c;
  if (gpus < 1 || gpus > po.provider.max_gpus) {
    return fail(Errc::usage, "--gpus " + std::to_string(gpus) + ": " + po.provider.name + " servers have 1.." +
                                 std::to_string(po.provider.max_gpus) + " GPUs");
  }
  if (po.card.label_gb < po.provider.min_card_gb) {
    return fail(Errc::unsupported, po.card.display + " on " + po.provider.name + ": its smallest card has " +
                                       std::to_string(po.provider.min_card_gb) + " GB; pick a larger card");
  }
  if (!price_usd.empty()) {
    const auto usd = parse_double(price_usd);
    if (!usd.has_value() || !(*usd > 0)) {
      return fail(Errc::usage, "--price `" + std::string(price_usd) + "`: give USD per hour > 0, e.g. 2.49");
    }
    auto micro = usd_to_micro(*usd);
    if (!micro) {
      return fail(Errc::usage, "--price: " + micro.error().message);
    }
    po.offer = Offer{};
    po.offer.provider = po.provider.name;
    po.offer.card = po.card.id;
    po.offer.gpus = gpus;
    po.offer.price_per_hour = *micro;
    po.offer.region = po.provider.default_region;
    po.offer.price_origin = "--price";
    if (spot) {
      po.offer.spot_price_per_hour = *micro;
    }
    po.origin_text = describe_origin(po.offer, po.provider, cfg);
    return po;
  }
  std::vector<Offer> merged;
  const auto offers = current_offers_into(s, cfg, merged);
  const Offer* o = find_offer(offers, po.provider.name, po.card.id, gpus);
  if (o == nullptr) {
    std::string why = "no known price for " + po.card.id + " x" + std::to_string(gpus) + " on " + po.provider.name;
    if (po.provider.price_source.empty()) {
      why += po.provider.name == "vast" ? " (a marketplace: every host sets its own price)"
                                        : " (its published material gives no prices)";
    } else {
      std::set<std::string_view> priced;  // each card once (the market lists a row per region)
      for (const auto& x : offers) {
        if (x.provider == po.provider.name && x.gpus == gpus) {
          priced.insert(x.card);
        }
      }
      std::string have;
      for (const auto card_id : priced) {
        have += (have.empty() ? "" : ", ") + std::string(card_id);
      }
      why += have.empty() ? "" : " (priced x" + std::to_string(gpus) + ": " + have + ")";
    }
    return fail(Errc::not_found, why + "; pass --price USD_PER_HOUR or set [prices." + po.provider.name + "] \"" +
                                     po.card.id + (gpus > 1 ? "x" + std::to_string(gpus) : "") +
                                     "\" = USD_PER_HOUR in " + (cfg.path.empty() ? "the config file" : cfg.path));
  }
  po.offer = *o;
  po.origin_text = describe_origin(po.offer, po.provider, cfg);
  return po;
}

std::string wrap_text(std::string_view text, std::size_t width, std::string_view indent)
{
  std::string out;
  std::size_t col = 0;
  for (const auto word : split(text, ' ')) {
    if (word.empty()) {
      continue;
    }
    if (col > 0 && col + 1 + word.size() > width) {
      out += '\n';
      out += indent;
      col = indent.size();
    } else if (col > 0) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
  }
  return out;
}

}  // namespace gpurent
