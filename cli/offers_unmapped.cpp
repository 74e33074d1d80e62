// SPDX-License-Identifier: MIT
#include "cli/offers_unmapped.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/price_lookup.hpp"
#include "providers/market/snapshot.hpp"

namespace gpurent {

std::vector<market::UnmappedName> unmapped_names(std::span<const market::CatalogFile> files)
{
  std::vector<market::UnmappedName> out;
  for (const auto& f : files) {
    auto m = market::offers_from_catalog(f, "catalogue", "");
    out.insert(out.end(), m.unmapped.begin(), m.unmapped.end());
  }
  return out;
}

UnmappedListing snapshot_unmapped_listing()
{
  return UnmappedListing{"snapshot", std::string(market::snapshot_date()), market::snapshot_unmapped()};
}

bool is_market_cloud(std::string_view cloud)
{
  for (const auto& c : market::snapshot_clouds()) {
    if (c.cloud == cloud) {
      return true;
    }
  }
  return false;
}

void print_unmapped(Services& s, std::span<const UnmappedListing> listings, const std::string& cloud)
{
  const auto wanted = [&](const market::UnmappedName& u) { return cloud.empty() || u.cloud == cloud; };
  if (s.global.json) {
    nlohmann::json j;
    j["unmapped"] = nlohmann::json::array();
    for (const auto& l : listings) {
      for (const auto& u : l.names) {
        if (wanted(u)) {
          j["unmapped"].push_back({{"cloud", u.cloud}, {"accelerator_name", u.accelerator_name}, {"gpu_info", u.gpu_info},
                                   {"rows", u.rows}, {"reason", u.reason}, {"price_source", l.source},
                                   {"price_date", l.date}});
        }
      }
    }
    s.out << j.dump(2) << '\n';
    return;
  }
  bool any = false;
  for (const auto& l : listings) {
    std::string current;
    for (const auto& u : l.names) {
      if (!wanted(u)) {
        continue;
      }
      if (!any) {
        s.out << wrap_text("Accelerator names of the market catalogue that map to no card of gpurent's (data/market/names.json "
                           "maps names to cards; a name is never guessed). Their offers are left out.",
                           78, "")
              << '\n';
        any = true;
      }
      if (u.cloud != current) {
        current = u.cloud;
        s.out << '\n' << u.cloud << " (" << l.source << (l.date.empty() ? "" : " " + l.date) << ")\n";
      }
      s.out << fmt::format("  {:<20} {:>4} {:<4}  {}\n", u.accelerator_name, u.rows, u.rows == 1 ? "row" : "rows", u.reason);
    }
  }
  if (!any) {
    s.out << "every accelerator name of the market catalogue" << (cloud.empty() ? "" : " for " + cloud) << " maps to a card\n";
  }
}

}  // namespace gpurent
