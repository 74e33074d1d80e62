// SPDX-License-Identifier: MIT
// Vast.ai instances (providers/vast/vast_api.hpp): create, get and list answers, states and their
// troubles, SSH keys, and the error details of an answer.
#include <cctype>
#include <nlohmann/json.hpp>

#include "providers/vast/vast_api.hpp"
#include "providers/vast/vast_detail.hpp"

namespace gpurent::vast {
namespace {

using nlohmann::json;
using detail::money;
using detail::ram_mb;
using detail::storage_of;
using detail::str;

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
