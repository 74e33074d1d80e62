// SPDX-License-Identifier: MIT
// The build's generator of the built-in offers: reads data/offers.json with the strict reader
// (providers/offer_data.cpp) against the provider rules (providers/catalog.cpp) and the card
// catalogue (data/cards.json, providers/card_data.cpp); any error stops the build, naming the
// entry and key. It writes a C++ source that builds the same OfferData from initialisers, so that
// builtin_offer_data() parses no JSON at start-up.
//   gen_offer_data <data/offers.json> <data/cards.json> <out.cpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/codegen.hpp"
#include "providers/card_data.hpp"
#include "providers/catalog.hpp"
#include "providers/offer_data.hpp"

namespace {

using gpurent::codegen::exact;
using gpurent::codegen::literal;
using gpurent::codegen::strings;

std::string slurp(const char* path, bool& ok)
{
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void node_link(std::ostringstream& out, const gpurent::NodeLink& n)
{
  out << "  {\n    NodeLink n;\n    n.kind = " << literal(n.kind) << ";\n    n.product = " << literal(n.product) << ";\n"
      << "    n.cards = " << strings(n.cards) << ";\n    n.gpus_per_node = " << n.gpus_per_node << "U;\n"
      << "    n.max_nodes = " << n.max_nodes << "U;\n";
  if (n.gbit_per_s) {
    out << "    n.gbit_per_s = " << exact(*n.gbit_per_s) << ";\n";
  }
  out << "    n.source = " << literal(n.source) << ";\n    n.quote = " << literal(n.quote) << ";\n"
      << "    l.node_links.push_back(std::move(n));\n  }\n";
}

std::string generate(const gpurent::OfferData& d)
{
  std::ostringstream out;
  out << "// Generated from data/offers.json by providers/gen/gen_offer_data.cpp; do not edit.\n"
      << "#include <utility>\n\n#include \"providers/offer_data.hpp\"\n\n"
      << "namespace gpurent {\nnamespace {\n\n";
  out << "void sources(OfferData& d)\n{\n";
  for (const auto& [key, s] : d.sources) {
    out << "  d.sources.emplace(" << literal(key) << ", OfferSource{" << literal(s.url) << ", " << literal(s.title) << ", "
        << literal(s.date) << "});\n";
  }
  out << "}\n\n";
  for (std::size_t i = 0; i < d.providers.size(); ++i) {
    const auto& p = d.providers[i];
    out << "void listing_" << i << "(OfferData& d)\n{\n  ProviderListing l;\n  l.provider = " << literal(p.provider) << ";\n"
        << "  l.cards = " << strings(p.cards) << ";\n  l.cards_from = " << strings(p.cards_from) << ";\n"
        << "  l.price_source = " << literal(p.price_source) << ";\n";
    for (const auto& n : p.node_links) {
      node_link(out, n);
    }
    out << "  d.providers.push_back(std::move(l));\n}\n\n";
  }
  out << "void offers(OfferData& d)\n{\n";
  for (std::size_t i = 0; i < d.offers.size(); ++i) {
    const auto& o = d.offers[i];
    out << "  {\n    Offer o;\n    o.provider = " << literal(o.provider) << ";\n    o.card = " << literal(o.card) << ";\n"
        << "    o.gpus = " << o.gpus << "U;\n    o.price_per_hour = MicroUsd{" << o.price_per_hour.n << "};\n";
    if (o.spot_price_per_hour) {
      out << "    o.spot_price_per_hour = MicroUsd{" << o.spot_price_per_hour->n << "};\n";
    }
    out << "    o.region = " << literal(o.region) << ";\n    o.price_origin = " << literal(o.price_origin) << ";\n"
        << "    d.offers.push_back(std::move(o));\n    d.offer_sources.push_back(" << literal(d.offer_sources[i]) << ");\n  }\n";
  }
  out << "}\n\nOfferData make()\n{\n  OfferData d;\n  sources(d);\n";
  for (std::size_t i = 0; i < d.providers.size(); ++i) {
    out << "  listing_" << i << "(d);\n";
  }
  out << "  offers(d);\n  return d;\n}\n\n}  // namespace\n\n"
      << "const OfferData& builtin_offer_data()\n{\n  static const OfferData k_data = make();\n  return k_data;\n}\n\n"
      << "}  // namespace gpurent\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 4) {
    std::cerr << "usage: gen_offer_data <data/offers.json> <data/cards.json> <out.cpp>\n";
    return 2;
  }
  bool ok_offers = false;
  bool ok_cards = false;
  const std::string offers = slurp(argv[1], ok_offers);
  const std::string cards_text = slurp(argv[2], ok_cards);
  if (!ok_offers || !ok_cards) {
    std::cerr << "gen_offer_data: cannot read " << (ok_offers ? argv[2] : argv[1]) << "\n";
    return 1;
  }
  const auto cards = gpurent::card_data_from_json(cards_text);
  if (!cards) {
    std::cerr << argv[2] << ": " << cards.error().message << "\n";
    return 1;
  }
  const auto data = gpurent::offer_data_from_json(offers, gpurent::provider_rules(), cards->cards);
  if (!data) {
    std::cerr << argv[1] << ": " << data.error().message << "\n";
    return 1;
  }
  return gpurent::codegen::replace_file(argv[3], generate(*data)) ? 0 : 1;
}
