// SPDX-License-Identifier: MIT
#include "providers/vast/vast_api.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/rounding.hpp"

namespace gpurent::vast {
namespace {

using nlohmann::json;

struct Row {
  const char* gpu_name;
  std::uint64_t min_ram_mb;  // the row applies from this much RAM per GPU
  const char* card;
};
// Names as Vast's search__offers reports them (vast-python vast.py, docs' gpu_name examples).
constexpr Row k_rows[] = {
    {"RTX 4090", 0, "rtx-4090"},        {"RTX 5090", 0, "rtx-5090"},     {"RTX 3090", 0, "rtx-3090"},
    {"A100 SXM4", 0, "a100-40gb"},      {"A100 SXM4", 60'000, "a100-80gb"},
    {"A100 PCIE", 0, "a100-40gb"},      {"A100 PCIE", 60'000, "a100-80gb"},
    {"H100 SXM", 0, "h100-80gb"},       {"H100 PCIE", 0, "h100-80gb"},   {"H200", 0, "h200"},
    {"L40S", 0, "l40s"},                {"L4", 0, "l4"},                 {"A10", 0, "a10"},
    {"RTX A6000", 0, "a6000"},          {"RTX 6000Ada", 0, "rtx-6000-ada"},
    {"RTX PRO 6000 WS", 0, "rtx-pro-6000"}, {"RTX PRO 6000 S", 0, "rtx-pro-6000"}, {"B200", 0, "b200"},
};

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

std::optional<std::uint64_t> port_of(const json& v)
{
  std::uint64_t p = 0;
  if (v.is_number_unsigned()) {
    p = v.get<std::uint64_t>();
  } else if (v.is_string()) {
    try {
      p = std::stoull(v.get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  }
  if (p == 0 || p > 65535) {
    return std::nullopt;
  }
  return p;
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

double number(const json& j, const char* key)
{
  const auto it = j.find(key);
  return (it != j.end() && it->is_number()) ? it->get<double>() : 0.0;
}

std::string url_encode(std::string_view s)
{
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(k_hex[u >> 4]);
      out.push_back(k_hex[u & 15]);
    }
  }
  return out;
}

Result<Instance> instance_from(const json& j)
{
  if (!j.is_object() || !j.contains("id") || !(j["id"].is_number_integer() || j["id"].is_string())) {
    return fail(Errc::invalid_input, "vast: an instance lacks `id`; Vast's API may have changed");
  }
  Instance in;
  in.id = j["id"].is_string() ? j["id"].get<std::string>() : std::to_string(j["id"].get<std::int64_t>());
  if (in.id.empty()) {
    return fail(Errc::invalid_input, "vast: an instance has an empty `id`; Vast's API may have changed");
  }
  in.name = str(j, "label");
  std::optional<std::string> status;
  if (j.contains("actual_status") && j["actual_status"].is_string()) {
    status = j["actual_status"].get<std::string>();
  }
  in.raw_state = status.value_or("null");
  in.state = map_status(status);
  in.trouble = trouble_of(status, str(j, "intended_status"));
  if (!in.trouble.empty()) {
    const std::string msg = str(j, "status_msg");
    in.trouble_detail = "Vast reports actual_status '" + in.raw_state + "'" +
                        (str(j, "intended_status").empty() ? "" : ", intended_status '" + str(j, "intended_status") + "'") +
                        (msg.empty() ? std::string{} : " (" + msg.substr(0, 200) + ")");
  }
  in.user = "root";
  // Direct SSH (public address + the host port mapped to 22) when offered, else Vast's proxy.
  const std::string ip = str(j, "public_ipaddr");
  std::optional<std::uint64_t> direct;
  if (j.contains("ports") && j["ports"].is_object() && j["ports"].contains("22/tcp") && j["ports"]["22/tcp"].is_array() &&
      !j["ports"]["22/tcp"].empty() && j["ports"]["22/tcp"][0].is_object() && j["ports"]["22/tcp"][0].contains("HostPort")) {
    direct = port_of(j["ports"]["22/tcp"][0]["HostPort"]);
  }
  if (!ip.empty() && direct) {
    in.host = ip;
    in.port = static_cast<std::uint16_t>(*direct);
  } else if (!str(j, "ssh_host").empty() && j.contains("ssh_port")) {
    if (auto p = port_of(j["ssh_port"])) {
      in.host = str(j, "ssh_host");
      in.port = static_cast<std::uint16_t>(*p);
    }
  }
  if (in.state == InstanceState::running && in.host.empty()) {
    in.state = InstanceState::pending;
  }
  if (auto p = money(j, "dph_total")) {
    in.price_per_hour = *p;
  }
  in.storage_per_hour = storage_of(j, number(j, "disk_space"));
  if (auto c = card_of(str(j, "gpu_name"), ram_mb(j))) {
    in.card = *c;
  }
  if (j.contains("num_gpus") && j["num_gpus"].is_number_unsigned()) {
    in.gpus = j["num_gpus"].get<std::uint32_t>();
  }
  in.region = str(j, "geolocation");
  return in;
}

}  // namespace

InstanceState map_status(const std::optional<std::string>& s) noexcept
{
  if (!s || *s == "loading" || *s == "created" || *s == "scheduling" || *s == "rebooting") {
    return InstanceState::pending;
  }
  if (*s == "running") {
    return InstanceState::running;
  }
  if (*s == "exited" || *s == "stopped") {
    return InstanceState::stopped;
  }
  if (*s == "offline") {
    return InstanceState::offline;
  }
  return InstanceState::unknown;
}

std::string trouble_of(const std::optional<std::string>& s, std::string_view intended_status)
{
  if (!s) {
    return {};
  }
  if (*s == "exited") {
    return intended_status == "stopped" ? std::string{} : std::string("crashed");
  }
  if (*s == "offline" || *s == "frozen" || *s == "unknown") {
    return *s;
  }
  return map_status(s) == InstanceState::unknown ? "unknown" : "";
}

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
    o.spot_price_per_hour = b.min_bid;
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

std::string create_body(std::string_view image, std::string_view label, std::uint32_t disk_gb,
                        std::optional<MicroUsd> bid)
{
  json b = {{"image", image},
            {"disk", disk_gb},
            {"runtype", "ssh_direct"},
            {"label", label},
            {"target_state", "running"},
            {"cancel_unavail", true}};
  if (bid) {
    b["price"] = static_cast<double>(bid->n) / 1e6;
  }
  return b.dump();
}

Result<std::string> parse_create(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  const bool success = j.is_object() && j.contains("success") && j["success"].is_boolean() && j["success"].get<bool>();
  if (j.is_discarded() || !success || !j.contains("new_contract") ||
      !(j["new_contract"].is_number_integer() ||
        (j["new_contract"].is_string() && !j["new_contract"].get_ref<const std::string&>().empty()))) {
    return fail(Errc::invalid_input, "vast: create: the answer lacks success/new_contract" +
                                         (error_detail(body).empty() ? std::string{} : " (" + error_detail(body) + ")"));
  }
  return j["new_contract"].is_string() ? j["new_contract"].get<std::string>()
                                       : std::to_string(j["new_contract"].get<std::int64_t>());
}

Result<std::optional<Instance>> parse_instance(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("instances")) {
    return fail(Errc::invalid_input, "vast: get instance: the answer lacks `instances`");
  }
  if (j["instances"].is_null()) {
    return std::optional<Instance>{};
  }
  TRY_ASSIGN(Instance in, instance_from(j["instances"]));
  return std::optional<Instance>{std::move(in)};
}

Result<std::vector<Instance>> parse_instances(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("instances") || !j["instances"].is_array()) {
    return fail(Errc::invalid_input, "vast: list instances: the answer lacks an `instances` list");
  }
  std::vector<Instance> out;
  for (const auto& i : j["instances"]) {
    TRY_ASSIGN(Instance in, instance_from(i));
    out.push_back(std::move(in));
  }
  return out;
}

Result<InstancePage> parse_instance_page(std::string_view body)
{
  TRY_ASSIGN(auto list, parse_instances(body));
  InstancePage page{std::move(list), {}};
  const json j = json::parse(body, nullptr, false);
  if (j.contains("next_token") && j["next_token"].is_string()) {
    page.next_token = j["next_token"].get<std::string>();
  }
  return page;
}

std::string instances_query(std::string_view after_token)
{
  std::string q = "limit=25&select_filters=" + url_encode("{}") + "&order_by=" +
                  url_encode(R"([{"col":"id","dir":"asc"}])");
  if (!after_token.empty()) {
    q += "&after_token=" + url_encode(after_token);
  }
  return q;
}

Result<std::vector<std::string>> parse_ssh_keys(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  const json* list = &j;
  if (!j.is_discarded() && j.is_object()) {
    for (const char* key : {"ssh_keys", "keys"}) {
      if (j.contains(key) && j[key].is_array()) {
        list = &j[key];
      }
    }
  }
  if (j.is_discarded() || !list->is_array()) {
    return fail(Errc::invalid_input, "vast: ssh keys: the answer is not a list of keys");
  }
  std::vector<std::string> out;
  for (const auto& k : *list) {
    if (!k.is_object() || (k.contains("deleted_at") && !k["deleted_at"].is_null())) {
      continue;
    }
    const std::string key = str(k, "key").empty() ? str(k, "public_key") : str(k, "key");
    if (!key.empty()) {
      out.push_back(key);
    }
  }
  return out;
}

std::string ssh_key_body(std::string_view public_key)
{
  return json{{"ssh_key", public_key}}.dump();
}

std::string state_body(std::string_view state)
{
  return json{{"state", state}}.dump();
}

std::string error_detail(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return {};
  }
  std::string out;
  for (const char* key : {"error", "msg", "message", "detail"}) {
    if (j.contains(key) && j[key].is_string()) {
      out += (out.empty() ? "" : ": ") + j[key].get<std::string>().substr(0, 200);
    }
  }
  return out;
}

}  // namespace gpurent::vast
