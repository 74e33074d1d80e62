// SPDX-License-Identifier: MIT
#include "providers/lambda/lambda_api.hpp"

#include <nlohmann/json.hpp>

#include "common/text.hpp"

namespace gpurent::lambda {
namespace {

using nlohmann::json;

Result<json> parse_data(std::string_view body, std::string_view what)
{
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data")) {
    return fail(Errc::invalid_input, "lambda: " + std::string(what) +
                                         ": the answer is not Lambda's {\"data\": …} envelope; check GPURENT_LAMBDA_API_URL");
  }
  return std::move(j["data"]);
}

// Lambda prices in cents per hour: a plausible one is at most $100,000 an hour (the bound of
// every provider's parser), which also keeps cents x 10'000 far from overflowing.
constexpr std::int64_t k_max_price_cents = 10'000'000;

bool plausible_cents(const json& price)
{
  return price.is_number_integer() && price.get<std::int64_t>() >= 0 && price.get<std::int64_t>() <= k_max_price_cents;
}

std::string str(const json& j, const char* key)
{
  const auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string{};
}

Result<Instance> instance_from(const json& j)
{
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || j["id"].get_ref<const std::string&>().empty() ||
      !j.contains("status")) {
    return fail(Errc::invalid_input, "lambda: an instance lacks `id` or `status`; Lambda's API may have changed");
  }
  Instance in;
  in.id = j["id"].get<std::string>();
  in.name = str(j, "name");
  in.raw_state = str(j, "status");
  in.state = map_status(in.raw_state);
  in.trouble = trouble_of(in.raw_state);
  if (!in.trouble.empty()) {
    in.trouble_detail = "Lambda reports the instance " + (in.raw_state.empty() ? std::string("without a status") : in.raw_state);
  }
  in.host = str(j, "ip");
  in.user = "ubuntu";
  in.port = 22;
  if (in.state == InstanceState::running && in.host.empty()) {
    in.state = InstanceState::pending;  // active without an address yet
  }
  if (j.contains("region") && j["region"].is_object()) {
    in.region = str(j["region"], "name");
  }
  if (j.contains("instance_type") && j["instance_type"].is_object()) {
    const json& t = j["instance_type"];
    if (auto card = card_of(str(t, "gpu_description"))) {
      in.card = *card;
    }
    if (t.contains("price_cents_per_hour") && plausible_cents(t["price_cents_per_hour"])) {
      in.price_per_hour = MicroUsd{t["price_cents_per_hour"].get<std::int64_t>() * 10'000};
    }
    if (t.contains("specs") && t["specs"].is_object() && t["specs"].contains("gpus") &&
        t["specs"]["gpus"].is_number_unsigned()) {
      in.gpus = t["specs"]["gpus"].get<std::uint32_t>();
    }
  }
  return in;
}

}  // namespace

InstanceState map_status(std::string_view status) noexcept
{
  if (status == "booting") {
    return InstanceState::pending;
  }
  if (status == "active") {
    return InstanceState::running;
  }
  if (status == "terminating") {
    return InstanceState::terminating;
  }
  // "preempted": Lambda took the instance back; it is gone and no longer bills (Lambda's
  // InstanceStatus enum, docs/providers.md): the record closes as gone.
  if (status == "terminated" || status == "preempted") {
    return InstanceState::terminated;
  }
  if (status == "unhealthy") {
    return InstanceState::failed;
  }
  return InstanceState::unknown;
}

std::string trouble_of(std::string_view status)
{
  if (status == "unhealthy" || status == "preempted") {
    return std::string(status);
  }
  return map_status(status) == InstanceState::unknown ? "unknown" : "";
}

std::optional<std::string> card_of(std::string_view gpu_description)
{
  // "<model> (<n> GB <form>)"
  const auto paren = gpu_description.find('(');
  const std::string model = normalize_key(gpu_description.substr(0, paren));
  std::uint64_t gb = 0;
  std::string form;  // "pcie", "sxm4", "sxm5", "" when not said
  if (paren != std::string_view::npos) {
    const auto inner = gpu_description.substr(paren + 1);
    const auto sp = inner.find(' ');
    gb = parse_u64(inner.substr(0, sp)).value_or(0);
    const std::string rest = normalize_key(inner);
    form = rest.find("pcie") != std::string::npos ? "pcie" : (rest.find("sxm") != std::string::npos ? "sxm" : "");
  }
  struct Row {
    const char* model;
    std::uint64_t gb;  // 0: any
    const char* form;  // "": any
    const char* card;
  };
  // Lambda's descriptions: "A100 (40 GB SXM4)", "A100 (40 GB PCIe)", "H100 (80 GB PCIe)", "H100 (80 GB SXM5)",
  // "GH200 (96 GB)". "Tesla V100 (16 GB)" names no form factor (SXM2 or PCIe): not mapped.
  static constexpr Row k_rows[] = {
      {"a10", 0, "", "a10"},
      {"a100", 40, "pcie", "a100-40gb-pcie"},
      {"a100", 40, "", "a100-40gb-sxm"},
      {"a100", 80, "pcie", "a100-80gb-pcie"},
      {"a100", 80, "", "a100-80gb-sxm"},
      {"h100", 80, "pcie", "h100-pcie"},
      {"h100", 80, "", "h100-sxm"},
      {"h200", 0, "", "h200"},
      {"gh200", 96, "", "gh200"},
      {"b200", 0, "", "b200"},
      {"a6000", 0, "", "a6000"},
      {"rtxa6000", 0, "", "a6000"},
      {"rtx6000ada", 0, "", "rtx-6000-ada"},
  };
  for (const Row& r : k_rows) {
    if (model == r.model && (r.gb == 0 || r.gb == gb) && (r.form[0] == '\0' || form == r.form)) {
      return std::string(r.card);
    }
  }
  return std::nullopt;
}

Result<std::vector<InstanceType>> parse_instance_types(std::string_view body)
{
  TRY_ASSIGN(json data, parse_data(body, "instance types"));
  if (!data.is_object()) {
    return fail(Errc::invalid_input, "lambda: instance types: `data` is not a map of types");
  }
  std::vector<InstanceType> out;
  for (const auto& [key, item] : data.items()) {
    if (!item.is_object() || !item.contains("instance_type") || !item["instance_type"].is_object()) {
      return fail(Errc::invalid_input, "lambda: instance type `" + key + "` lacks `instance_type`");
    }
    const json& t = item["instance_type"];
    InstanceType it;
    it.name = str(t, "name").empty() ? key : str(t, "name");
    it.description = str(t, "description");
    it.gpu_description = str(t, "gpu_description");
    if (!t.contains("price_cents_per_hour") || !plausible_cents(t["price_cents_per_hour"])) {
      return fail(Errc::invalid_input, "lambda: instance type `" + key + "` has no integer price_cents_per_hour from 0 to " +
                                           std::to_string(k_max_price_cents));
    }
    it.price_cents_per_hour = t["price_cents_per_hour"].get<std::int64_t>();
    if (t.contains("specs") && t["specs"].is_object() && t["specs"].contains("gpus") &&
        t["specs"]["gpus"].is_number_unsigned()) {
      it.gpus = t["specs"]["gpus"].get<std::uint32_t>();
    }
    if (item.contains("regions_with_capacity_available") && item["regions_with_capacity_available"].is_array()) {
      for (const auto& r : item["regions_with_capacity_available"]) {
        if (r.is_object() && r.contains("name") && r["name"].is_string()) {
          it.regions_with_capacity.push_back(r["name"].get<std::string>());
        }
      }
    }
    out.push_back(std::move(it));
  }
  return out;
}

Result<std::vector<Instance>> parse_instances(std::string_view body)
{
  TRY_ASSIGN(json data, parse_data(body, "instances"));
  if (!data.is_array()) {
    return fail(Errc::invalid_input, "lambda: instances: `data` is not a list");
  }
  std::vector<Instance> out;
  for (const auto& j : data) {
    TRY_ASSIGN(Instance in, instance_from(j));
    out.push_back(std::move(in));
  }
  return out;
}

Result<Instance> parse_instance(std::string_view body)
{
  TRY_ASSIGN(json data, parse_data(body, "instance"));
  return instance_from(data);
}

Result<std::vector<std::string>> parse_launch(std::string_view body)
{
  TRY_ASSIGN(json data, parse_data(body, "launch"));
  if (!data.is_object() || !data.contains("instance_ids") || !data["instance_ids"].is_array()) {
    return fail(Errc::invalid_input, "lambda: launch: the answer lacks `instance_ids`");
  }
  std::vector<std::string> ids;
  for (const auto& id : data["instance_ids"]) {
    if (id.is_string() && !id.get_ref<const std::string&>().empty()) {
      ids.push_back(id.get<std::string>());
    }
  }
  return ids;
}

Result<std::vector<SshKey>> parse_ssh_keys(std::string_view body)
{
  TRY_ASSIGN(json data, parse_data(body, "ssh keys"));
  if (!data.is_array()) {
    return fail(Errc::invalid_input, "lambda: ssh keys: `data` is not a list");
  }
  std::vector<SshKey> out;
  for (const auto& k : data) {
    if (k.is_object()) {
      out.push_back(SshKey{str(k, "id"), str(k, "name"), str(k, "public_key")});
    }
  }
  return out;
}

std::optional<ApiError> parse_error(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("error") || !j["error"].is_object()) {
    return std::nullopt;
  }
  const json& e = j["error"];
  return ApiError{str(e, "code"), str(e, "message"), str(e, "suggestion")};
}

std::string launch_body(std::string_view region, std::string_view type, std::string_view ssh_key_name,
                        std::string_view name)
{
  return json{{"region_name", region},
              {"instance_type_name", type},
              {"ssh_key_names", json::array({ssh_key_name})},
              {"name", name}}
      .dump();
}

std::string terminate_body(std::string_view id)
{
  return json{{"instance_ids", json::array({id})}}.dump();
}

std::string add_ssh_key_body(std::string_view name, std::string_view public_key)
{
  return json{{"name", name}, {"public_key", public_key}}.dump();
}

std::vector<Offer> offers_from(const std::vector<InstanceType>& types, std::string_view fetched_at)
{
  std::vector<Offer> out;
  for (const auto& t : types) {
    const auto card = card_of(t.gpu_description);
    if (!card || t.gpus == 0) {
      continue;
    }
    Offer o;
    o.provider = "lambda";
    o.card = *card;
    o.gpus = t.gpus;
    o.price_per_hour = MicroUsd{t.price_cents_per_hour * 10'000};
    o.region = t.regions_with_capacity.empty() ? std::string{} : t.regions_with_capacity.front();
    o.price_origin = "fetched " + std::string(fetched_at);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace gpurent::lambda
