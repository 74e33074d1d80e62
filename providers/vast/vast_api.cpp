// SPDX-License-Identifier: MIT
// Vast.ai offers (providers/vast/vast_api.hpp): the card table, the search body, bundles and the
// offers made of them; and the JSON field readers that the instances share (vast_detail.hpp).
#include "providers/vast/vast_api.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/rounding.hpp"
#include "providers/vast/vast_detail.hpp"

namespace gpurent::vast::detail {

using nlohmann::json;

std::string str(const json& j, const char* key)
{
  const auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string{};
}

std::optional<MicroUsd> money(const json& j, const char* key)
{
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) {
    return std::nullopt;
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || v > 1e5) {
    return std::nullopt;
  }
  return MicroUsd{round_to_i64(v * 1e6)};
}

// GPU RAM in MB (Vast sends a number, sometimes fractional); 0 when absent or out of any
// plausible range (a cast of such a double to an integer is undefined behaviour).
std::uint64_t ram_mb(const json& j)
{
  const auto it = j.find("gpu_ram");
  if (it == j.end() || !it->is_number()) {
    return 0;
  }
  const double v = it->get<double>();
  return std::isfinite(v) && v >= 0 && v <= 1e9 ? static_cast<std::uint64_t>(v) : 0;
}

// Storage per hour: the instance's own pricing breakdown (`instance.diskHour`), else
// storage_total_cost, else storage_cost ($/GB/month) x the disk in GB / 720.
MicroUsd storage_of(const json& j, double disk_gb)
{
  if (j.contains("instance") && j["instance"].is_object()) {
    if (auto d = money(j["instance"], "diskHour")) {
      return *d;
    }
  }
  if (auto t = money(j, "storage_total_cost")) {
    return *t;
  }
  const auto per_gb_month = money(j, "storage_cost");
  if (per_gb_month && disk_gb > 0 && disk_gb < 1e6) {
    const auto micro_gb = static_cast<std::int64_t>(disk_gb * 1000.0 + 0.5);  // milli-GB
    return MicroUsd{(per_gb_month->n * micro_gb + k_storage_month_h * 1000 - 1) / (k_storage_month_h * 1000)};
  }
  return MicroUsd{0};
}

}  // namespace gpurent::vast::detail

namespace gpurent::vast {
namespace {

using nlohmann::json;
using detail::money;
using detail::ram_mb;
using detail::storage_of;
using detail::str;

struct Row {
  const char* gpu_name;
  std::uint64_t min_ram_mb;  // the row applies from this much RAM per GPU
  const char* card;
};
// Names as Vast's search__offers reports them (vast-python vast.py, docs' gpu_name examples).
constexpr Row k_rows[] = {
    {"RTX 4090", 0, "rtx-4090"},        {"RTX 5090", 0, "rtx-5090"},     {"RTX 3090", 0, "rtx-3090"},
    {"A100 SXM4", 0, "a100-40gb-sxm"},  {"A100 SXM4", 60'000, "a100-80gb-sxm"},
    {"A100 PCIE", 0, "a100-40gb-pcie"}, {"A100 PCIE", 60'000, "a100-80gb-pcie"},
    {"H100 SXM", 0, "h100-sxm"},        {"H100 PCIE", 0, "h100-pcie"},   {"H100 NVL", 0, "h100-nvl"},
    {"H200", 0, "h200"},
    {"L40S", 0, "l40s"},                {"L4", 0, "l4"},                 {"A10", 0, "a10"},
    {"RTX A6000", 0, "a6000"},          {"RTX 6000Ada", 0, "rtx-6000-ada"},
    {"RTX PRO 6000 WS", 0, "rtx-pro-6000"}, {"RTX PRO 6000 S", 0, "rtx-pro-6000"}, {"B200", 0, "b200"},
};

}  // namespace

std::optional<std::string> card_of(std::string_view gpu_name, std::uint64_t gpu_ram_mb)
{
  const Row* best = nullptr;
  for (const Row& r : k_rows) {
    if (gpu_name == r.gpu_name && gpu_ram_mb >= r.min_ram_mb && (best == nullptr || r.min_ram_mb > best->min_ram_mb)) {
      best = &r;
    }
  }
  if (best == nullptr) {
    return std::nullopt;
  }
  return std::string(best->card);
}

std::vector<std::string> gpu_names(std::string_view card)
{
  std::vector<std::string> out;
  for (const Row& r : k_rows) {
    if (card == r.card && std::find(out.begin(), out.end(), r.gpu_name) == out.end()) {
      out.emplace_back(r.gpu_name);
    }
  }
  return out;
}

std::string search_body(const std::vector<std::string>& names, std::uint32_t gpus, bool bid, std::uint32_t limit,
                        std::uint32_t disk_gb)
{
  json q = {{"verified", {{"eq", true}}},
            {"rentable", {{"eq", true}}},
            {"order", json::array({json::array({"dph_total", "asc"})})},
            {"type", bid ? "bid" : "on-demand"},
            {"limit", limit}};
  if (!names.empty()) {
    q["gpu_name"] = {{"in", names}};
  }
  if (gpus > 0) {
    q["num_gpus"] = {{"eq", gpus}};
  }
  if (disk_gb > 0) {
    q["allocated_storage"] = disk_gb;
  }
  return q.dump();
}

Result<std::vector<Bundle>> parse_bundles(std::string_view body, std::uint32_t allocated_gb)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("offers") || !j["offers"].is_array()) {
    return fail(Errc::invalid_input, "vast: search offers: the answer lacks `offers`; check GPURENT_VAST_API_URL");
  }
  std::vector<Bundle> out;
  for (const auto& o : j["offers"]) {
    if (!o.is_object() || !o.contains("id") || !o["id"].is_number_integer()) {
      continue;
    }
    const auto price = money(o, "dph_total");
    if (!price) {
      continue;
    }
    Bundle b;
    b.id = o["id"].get<std::int64_t>();
    b.gpu_name = str(o, "gpu_name");
    b.num_gpus = o.contains("num_gpus") && o["num_gpus"].is_number_unsigned() ? o["num_gpus"].get<std::uint32_t>() : 0;
    b.gpu_ram_mb = ram_mb(o);
    b.dph_total = *price;
    b.storage_per_hour = storage_of(o, allocated_gb);
    b.min_bid = money(o, "min_bid");
    b.geolocation = str(o, "geolocation");
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<Offer> offers_from(const std::vector<Bundle>& bundles)
{
  std::map<std::pair<std::string, std::uint32_t>, Offer> best;
  for (const auto& b : bundles) {
    const auto card = card_of(b.gpu_name, b.gpu_ram_mb);
    if (!card || b.num_gpus == 0) {
      continue;
    }
    const auto key = std::make_pair(*card, b.num_gpus);
    auto it = best.find(key);
    if (it != best.end() && it->second.price_per_hour <= b.dph_total) {
      continue;
    }
    Offer o;
    o.provider = "vast";
    o.card = *card;
    o.gpus = b.num_gpus;
    o.price_per_hour = b.dph_total;
    // The lowest bid pays the GPU; the disk bills on top of it (dph_total includes it already).
    o.spot_price_per_hour = b.min_bid ? std::optional<MicroUsd>(*b.min_bid + b.storage_per_hour) : std::nullopt;
    o.region = b.geolocation;
    o.price_origin = "fetched";
    best[key] = std::move(o);
  }
  std::vector<Offer> out;
  for (auto& [k, o] : best) {
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gpurent::vast
