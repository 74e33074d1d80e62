// SPDX-License-Identifier: MIT
#pragma once
// A stand-in for the catalogue reader port (providers/market/catalog_refresh.hpp) in tests of the
// fetch and cache: it reads a tiny fixed layout, not SkyPilot's CSV. Header
// "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice"; AcceleratorName is taken
// as the card id; an empty SpotPrice is none; a Price that is not a number is a row warning. It
// refuses what the real reader refuses as a whole: another header (an HTML page, garbage), a row
// with another field count, a last line without its newline (truncated), no rows.
#include <cmath>
#include <string>
#include <string_view>

#include "common/text.hpp"
#include "providers/market/catalog_refresh.hpp"

namespace gpurent::test {

inline constexpr std::string_view k_fake_catalog_header = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n";

inline Result<market::CatalogReading> fake_catalog_reader(std::string_view cloud, std::string_view text)
{
  const std::string c(cloud);
  if (!text.starts_with(k_fake_catalog_header)) {
    return fail(Errc::invalid_input, c + " line 1: not a catalogue header");
  }
  if (!text.ends_with("\n")) {
    return fail(Errc::invalid_input, c + ": the last record is cut short (truncated file)");
  }
  market::CatalogReading out;
  std::size_t line_no = 1;
  text.remove_prefix(k_fake_catalog_header.size());
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    ++line_no;
    const auto f = split(line, ',');
    if (f.size() != 6) {
      return fail(Errc::invalid_input, c + " line " + std::to_string(line_no) + ": 6 fields expected");
    }
    const auto price = parse_double(f[4]);
    const auto gpus = parse_u64(f[2]);
    if (!price || !gpus) {
      out.warnings.push_back(c + " line " + std::to_string(line_no) + ": column Price `" + std::string(f[4]) +
                             "` is not a number; the row has no price");
      continue;
    }
    Offer o;
    o.provider = c;
    o.card = std::string(f[1]);
    o.gpus = static_cast<std::uint32_t>(*gpus);
    o.region = std::string(f[3]);
    o.instance_type = std::string(f[0]);
    o.price_per_hour = MicroUsd{std::llround(*price * 1e6)};
    if (const auto spot = parse_double(f[5]); spot && !f[5].empty()) {
      o.spot_price_per_hour = MicroUsd{std::llround(*spot * 1e6)};
    }
    out.offers.push_back(std::move(o));
  }
  if (out.offers.empty() && out.warnings.empty()) {
    return fail(Errc::invalid_input, c + ": no GPU rows");
  }
  return out;
}

// A catalogue file in that layout from rows "type,card,gpus,region,price,spot".
inline std::string fake_catalog(std::initializer_list<std::string_view> rows)
{
  std::string text(k_fake_catalog_header);
  for (const auto r : rows) {
    text.append(r).append("\n");
  }
  return text;
}

}  // namespace gpurent::test
