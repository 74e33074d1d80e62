// SPDX-License-Identifier: MIT
// The build's generator of the market snapshot: reads data/market/snapshot.json and each cloud's
// CSV with the catalogue reader (providers/market/catalog_csv.cpp), maps the rows to offers with
// data/market/names.json (checked against data/cards.json), and writes a C++ source of
// initialisers compiled into gpurent_providers. Any error (a file fault, a name rule naming no
// card, a row warning) stops the build, naming the cloud and line.
//   gen_market_snapshot <data/market/snapshot.json> <data/cards.json> <out.cpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/codegen.hpp"
#include "providers/card_data.hpp"
#include "providers/market/catalog_csv.hpp"
#include "providers/market/name_map.hpp"
#include "providers/offers.hpp"

namespace {

using gpurent::codegen::literal;
namespace market = gpurent::market;

std::optional<std::string> slurp(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool valid_date(const std::string& d)
{
  return d.size() == 10 && d[4] == '-' && d[7] == '-' && d.starts_with("20");
}

struct Cloud {
  std::string cloud, source, commit, kept;
  std::size_t rows = 0;
};

// The rows' strings, each once, in one character array the rows index by offset and length: an
// array of pointers would be relocated (written) at every start, 6,500 pointers in 94 KB.
class TextPool {
public:
  std::string add(const std::string& s)
  {
    auto [it, fresh] = m_at.try_emplace(s, m_text.size());
    if (fresh) {
      m_text += s;
    }
    return "{" + std::to_string(it->second) + "U, " + std::to_string(s.size()) + "U}";
  }
  [[nodiscard]] const std::string& text() const noexcept { return m_text; }

private:
  std::map<std::string, std::size_t> m_at;
  std::string m_text;
};

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 4) {
    std::cerr << "usage: gen_market_snapshot <data/market/snapshot.json> <data/cards.json> <out.cpp>\n";
    return 2;
  }
  const std::string manifest_path = argv[1];
  const auto manifest = slurp(manifest_path);
  const auto cards_text = slurp(argv[2]);
  if (!manifest || !cards_text) {
    std::cerr << "gen_market_snapshot: cannot read " << (manifest ? argv[2] : argv[1]) << "\n";
    return 1;
  }
  const auto cards = gpurent::card_data_from_json(*cards_text);
  if (!cards) {
    std::cerr << argv[2] << ": " << cards.error().message << "\n";
    return 1;
  }
  std::vector<std::string> ids;
  for (const auto& c : cards->cards) {
    ids.push_back(c.id);
  }
  const auto& names = market::builtin_name_map();
  if (const auto m = market::name_map_from_json(market::embedded_names_json()); !m) {
    std::cerr << "data/market/names.json: " << m.error().message << "\n";
    return 1;
  }
  if (const auto ok = market::check_name_map_cards(names, ids); !ok) {
    std::cerr << "data/market/names.json: " << ok.error().message << "\n";
    return 1;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(*manifest);
  } catch (const nlohmann::json::exception& e) {
    std::cerr << manifest_path << ": not JSON: " << e.what() << "\n";
    return 1;
  }
  const std::string date = doc.value("date", "");
  if (!valid_date(date) || !doc.contains("clouds") || !doc["clouds"].is_array()) {
    std::cerr << manifest_path << ": needs \"date\" (YYYY-MM-DD) and a \"clouds\" list\n";
    return 1;
  }
  const auto dir = std::filesystem::path(manifest_path).parent_path();
  std::vector<Cloud> clouds;
  std::vector<gpurent::Offer> offers;
  std::vector<market::UnmappedName> unmapped;
  for (const auto& c : doc["clouds"]) {
    Cloud cl{c.value("cloud", ""), c.value("source", ""), c.value("commit", ""), c.value("kept", ""), 0};
    const std::string file = c.value("file", "");
    if (cl.cloud.empty() || cl.source.empty() || cl.commit.size() != 40 || file.empty()) {
      std::cerr << manifest_path << ": each cloud needs cloud, file, source and a 40-digit commit\n";
      return 1;
    }
    const auto text = slurp((dir / file).string());
    if (!text) {
      std::cerr << manifest_path << ": cannot read " << file << "\n";
      return 1;
    }
    const auto read = market::read_catalog_csv(cl.cloud, *text);
    if (!read) {
      std::cerr << file << ": " << read.error().message << "\n";
      return 1;
    }
    if (!read->warnings.empty()) {
      for (const auto& w : read->warnings) {
        std::cerr << file << ": " << w.text << "\n";
      }
      return 1;
    }
    cl.rows = read->rows.size();
    if (c.contains("rows") && c["rows"] != cl.rows) {
      std::cerr << file << ": " << cl.rows << " GPU rows, the manifest says " << c["rows"] << "\n";
      return 1;
    }
    auto mapped = market::offers_from_catalog(*read, names, "snapshot", date);
    offers.insert(offers.end(), mapped.offers.begin(), mapped.offers.end());
    unmapped.insert(unmapped.end(), mapped.unmapped.begin(), mapped.unmapped.end());
    clouds.push_back(std::move(cl));
  }
  // In (provider, card, GPUs, region) order, the files' order kept among equals: builtin_offers()
  // and merge_offers rely on it, so that no start-up sorts the market.
  std::stable_sort(offers.begin(), offers.end(), gpurent::offer_before);
  // Per shape (cloud, card, GPUs) the row select_offer_ptrs would pick without --region: the
  // cheapest on demand, and the cheapest when --spot ranks spot prices (a row without one by its
  // price), each the first by (price, region) in this order. plan without --region builds only
  // these (builtin_offers(OfferRegions::cheapest_per_shape)): a shape's other regions never win.
  std::vector<bool> cheapest(offers.size(), false);
  for (std::size_t i = 0; i < offers.size();) {
    std::size_t end = i;
    while (end < offers.size() && offers[end].provider == offers[i].provider && offers[end].card == offers[i].card &&
           offers[end].gpus == offers[i].gpus) {
      ++end;
    }
    for (const bool spot : {false, true}) {
      const auto price = [&](const gpurent::Offer& o) {
        return spot && o.spot_price_per_hour ? o.spot_price_per_hour->n : o.price_per_hour.n;
      };
      std::size_t best = i;
      for (std::size_t k = i + 1; k < end; ++k) {
        if (std::tuple(price(offers[k]), std::string_view(offers[k].region)) <
            std::tuple(price(offers[best]), std::string_view(offers[best].region))) {
          best = k;
        }
      }
      cheapest[best] = true;
    }
    i = end;
  }
  TextPool pool;
  std::ostringstream rows;
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const auto& o = offers[i];
    rows << "    {" << pool.add(o.provider) << ", " << pool.add(o.card) << ", " << o.gpus << "U, " << o.price_per_hour.n << ", "
         << (o.spot_price_per_hour ? o.spot_price_per_hour->n : -1) << ", " << pool.add(o.region) << ", "
         << pool.add(o.instance_type) << ", " << pool.add(o.upstream) << ", " << (o.gpu_only ? "true" : "false") << ", "
         << (o.spot_above_on_demand ? "true" : "false") << ", " << (cheapest[i] ? "true" : "false") << "},\n";
  }
  const auto cheapest_rows = std::count(cheapest.begin(), cheapest.end(), true);
  std::ostringstream out;
  out << "// Generated from data/market/ by providers/gen/gen_market_snapshot.cpp; do not edit.\n"
      << "#include <cstdint>\n#include <iterator>\n#include <string>\n#include <string_view>\n#include <vector>\n\n"
      << "#include \"providers/market/snapshot.hpp\"\n\n"
      << "namespace gpurent::market {\nnamespace {\n\n"
      << "// Each row's strings as (offset, length) in k_text: no pointer to relocate at start-up.\n"
      << "struct Text {\n  std::uint32_t at; std::uint32_t size;\n};\n\n"
      << "constexpr char k_text[] = " << literal(pool.text()) << ";\n\n"
      << "constexpr std::string_view text(Text t) noexcept { return {k_text + t.at, t.size}; }\n\n"
      << "struct Row {\n  Text cloud; Text card; std::uint32_t gpus; std::int64_t price; std::int64_t spot;\n"
      << "  Text region; Text instance_type; Text upstream; bool gpu_only; bool spot_above;\n"
      << "  bool cheapest;  // the row select_offer_ptrs picks for its shape without --region (on demand or --spot)\n};\n\n"
      << "constexpr Row k_rows[] = {\n" << rows.str();
  out << "};\n\nconstexpr SnapshotCloud k_clouds[] = {\n";
  for (const auto& c : clouds) {
    out << "    {" << literal(c.cloud) << ", " << literal(c.source) << ", " << literal(c.commit) << ", " << c.rows << "U, "
        << literal(c.kept) << "},\n";
  }
  out << "};\n\n}  // namespace\n\n"
      << "std::string_view snapshot_date() noexcept { return " << literal(date) << "; }\n\n"
      << "std::span<const SnapshotCloud> snapshot_clouds() noexcept { return k_clouds; }\n\n"
      << "std::size_t snapshot_offer_count(OfferRegions regions) noexcept\n{\n"
      << "  return regions == OfferRegions::every ? std::size(k_rows) : " << cheapest_rows << "U;\n}\n\n"
      << "void append_snapshot_offers(std::vector<Offer>& out, OfferRegions regions)\n{\n"
      << "  out.reserve(out.size() + snapshot_offer_count(regions));\n"
      << "  const std::string origin = std::string(\"snapshot \") + " << literal(date) << ";\n"
      << "  for (const Row& r : k_rows) {\n"
      << "    if (regions == OfferRegions::cheapest_per_shape && !r.cheapest) {\n      continue;\n    }\n"
      << "    Offer& o = out.emplace_back();\n"
      << "    o.provider = text(r.cloud);\n    o.card = text(r.card);\n    o.gpus = r.gpus;\n"
      << "    o.price_per_hour = MicroUsd{r.price};\n"
      << "    if (r.spot >= 0) {\n      o.spot_price_per_hour = MicroUsd{r.spot};\n    }\n"
      << "    o.region = text(r.region);\n    o.price_origin = origin;\n    o.price_source = \"snapshot\";\n"
      << "    o.price_date = " << literal(date) << ";\n    o.instance_type = text(r.instance_type);\n"
      << "    o.upstream = text(r.upstream);\n    o.gpu_only = r.gpu_only;\n    o.spot_above_on_demand = r.spot_above;\n"
      << "  }\n}\n\n"
      << "std::vector<Offer> snapshot_offers()\n{\n  std::vector<Offer> v;\n  append_snapshot_offers(v, OfferRegions::every);\n  return v;\n}\n\n"
      << "std::vector<UnmappedName> snapshot_unmapped()\n{\n  return {\n";
  for (const auto& u : unmapped) {
    out << "      {" << literal(u.cloud) << ", " << literal(u.accelerator_name) << ", " << literal(u.gpu_info) << ", " << u.rows
        << "U, " << literal(u.reason) << "},\n";
  }
  out << "  };\n}\n\n}  // namespace gpurent::market\n";
  return gpurent::codegen::replace_file(argv[3], out.str()) ? 0 : 1;
}
