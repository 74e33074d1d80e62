// SPDX-License-Identifier: MIT
#include "providers/runpod/runpod_api.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/rounding.hpp"
#include "common/text.hpp"

namespace gpurent::runpod {
namespace {

using nlohmann::json;

struct Row {
  const char* gpu_type_id;
  const char* card;
};
// From the gpuTypeIds enum of RunPod's OpenAPI document ("Runpod API" 0.1.0,
// https://docs.runpod.io/api-reference/openapi.json).
constexpr Row k_rows[] = {
    {"NVIDIA GeForce RTX 4090", "rtx-4090"},
    {"NVIDIA GeForce RTX 5090", "rtx-5090"},
    {"NVIDIA GeForce RTX 3090", "rtx-3090"},
    {"NVIDIA L4", "l4"},
    {"NVIDIA L40S", "l40s"},
    {"NVIDIA L40", "l40"},
    {"NVIDIA A40", "a40"},
    {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
    {"NVIDIA RTX A6000", "a6000"},
    {"NVIDIA A100 80GB PCIe", "a100-80gb-pcie"},
    {"NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"},
    {"NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"},
    {"NVIDIA H100 80GB HBM3", "h100-sxm"},
    {"NVIDIA H100 PCIe", "h100-pcie"},
    {"NVIDIA H100 NVL", "h100-nvl"},
    {"NVIDIA H200", "h200"},
    {"NVIDIA B200", "b200"},
    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
    {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000"},
    {"Tesla V100-SXM2-16GB", "v100-16gb-sxm"},  // the PCIe and FHHL V100s are not cards here
    {"Tesla V100-SXM2-32GB", "v100-32gb-sxm"},
};

std::string str(const json& j, const char* key)
{
  const auto it = j.find(key);
  return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string{};
}

// RunPod sends money as a number or as a string ("0.74"): either way to micro-USD.
std::optional<MicroUsd> money(const json& j, const char* key)
{
  const auto it = j.find(key);
  if (it == j.end()) {
    return std::nullopt;
  }
  double v = 0;
  if (it->is_number()) {
    v = it->get<double>();
  } else if (it->is_string()) {
    try {
      v = std::stod(it->get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(v) || v < 0 || v > 1e5) {
    return std::nullopt;
  }
  return MicroUsd{round_to_i64(v * 1e6)};
}

constexpr std::uint64_t k_max_volume_gb = 1'000'000;

}  // namespace

MicroUsd stopped_volume_per_hour(std::uint64_t volume_gb)
{
  // $0.20 per GB-month, a month being 730 h (8760 / 12; RunPod bills storage per second and
  // does not say how a month converts), rounded up to the micro-dollar.
  constexpr std::int64_t per_gb_month = 200'000;
  constexpr std::int64_t month_h = 730;
  return MicroUsd{(per_gb_month * static_cast<std::int64_t>(volume_gb) + month_h - 1) / month_h};
}

namespace {

Result<Instance> pod_from(const json& j)
{
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || j["id"].get_ref<const std::string&>().empty()) {
    return fail(Errc::invalid_input, "runpod: a pod lacks `id`; RunPod's API may have changed");
  }
  Instance in;
  in.id = j["id"].get<std::string>();
  in.name = str(j, "name");
  in.raw_state = str(j, "desiredStatus");
  in.user = "root";
  const std::string ip = j.contains("publicIp") && j["publicIp"].is_string() ? j["publicIp"].get<std::string>() : "";
  std::optional<std::uint16_t> port;
  if (j.contains("portMappings") && j["portMappings"].is_object() && j["portMappings"].contains("22") &&
      j["portMappings"]["22"].is_number_unsigned()) {
    const auto p = j["portMappings"]["22"].get<std::uint64_t>();
    if (p > 0 && p < 65536) {
      port = static_cast<std::uint16_t>(p);
    }
  }
  const std::string change = str(j, "lastStatusChange");
  if (in.raw_state == "RUNNING") {
    in.state = (!ip.empty() && port) ? InstanceState::running : InstanceState::pending;
  } else if (in.raw_state == "EXITED") {
    in.state = InstanceState::stopped;
    if (const auto code = exit_code_in(change); code && *code != 0) {
      in.trouble = "crashed";
      in.trouble_detail = "RunPod: the pod EXITED with code " + std::to_string(*code) + " (" + change + ")";
    }
  } else if (in.raw_state == "TERMINATED") {
    in.state = InstanceState::terminated;
  } else {
    in.state = InstanceState::unknown;
    in.trouble = "unknown";
    in.trouble_detail = "RunPod reports desiredStatus '" + in.raw_state + "', which gpurent does not know" +
                        (change.empty() ? std::string{} : " (" + change + ")");
  }
  in.host = ip;
  in.port = port.value_or(22);
  if (auto c = money(j, "costPerHr")) {
    in.price_per_hour = *c;
  }
  // A stopped (EXITED) pod keeps its volume disk, billed at $0.20/GB-month; its container disk
  // is erased and not charged (docs.runpod.io/pods/storage; docs/lifecycle.md).
  if (j.contains("volumeInGb") && j["volumeInGb"].is_number_unsigned()) {
    const auto gb = j["volumeInGb"].get<std::uint64_t>();
    if (gb <= k_max_volume_gb) {
      in.stopped_per_hour = stopped_volume_per_hour(gb);
    }
  }
  if (j.contains("gpu") && j["gpu"].is_object() && j["gpu"].contains("count") && j["gpu"]["count"].is_number_unsigned()) {
    in.gpus = j["gpu"]["count"].get<std::uint32_t>();
  }
  std::string type;
  if (j.contains("machine") && j["machine"].is_object()) {
    type = str(j["machine"], "gpuTypeId");
  }
  if (type.empty() && j.contains("gpu") && j["gpu"].is_object()) {
    type = str(j["gpu"], "id");
  }
  if (auto card = card_of(type)) {
    in.card = *card;
  }
  return in;
}

}  // namespace

std::optional<int> exit_code_in(std::string_view text)
{
  const std::string t = to_lower(text);
  for (std::size_t at = t.find("code"); at != std::string::npos; at = t.find("code", at + 4)) {
    const std::size_t from = at >= 16 ? at - 16 : 0;
    if (t.substr(from, at - from).find("exit") == std::string::npos) {
      continue;
    }
    std::size_t i = at + 4;
    while (i < t.size() && (t[i] == ' ' || t[i] == ':' || t[i] == '=')) {
      ++i;
    }
    const bool negative = i < t.size() && t[i] == '-';
    const std::size_t digits = negative ? i + 1 : i;
    std::size_t end = digits;
    while (end < t.size() && end - digits < 6 && t[end] >= '0' && t[end] <= '9') {
      ++end;
    }
    if (end == digits) {
      continue;
    }
    const auto n = parse_u64(std::string_view(t).substr(digits, end - digits));
    if (n) {
      return negative ? -static_cast<int>(*n) : static_cast<int>(*n);
    }
  }
  return std::nullopt;
}

std::optional<std::string> card_of(std::string_view gpu_type_id)
{
  for (const Row& r : k_rows) {
    if (gpu_type_id == r.gpu_type_id) {
      return std::string(r.card);
    }
  }
  return std::nullopt;
}

std::vector<std::string> gpu_type_ids(std::string_view card)
{
  std::vector<std::string> out;
  for (const Row& r : k_rows) {
    if (card == r.card) {
      out.emplace_back(r.gpu_type_id);
    }
  }
  return out;
}

Result<Instance> parse_pod(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    return fail(Errc::invalid_input, "runpod: the answer is not JSON; check GPURENT_RUNPOD_API_URL");
  }
  return pod_from(j);
}

Result<std::vector<Instance>> parse_pods(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    return fail(Errc::invalid_input, "runpod: list pods: the answer is not a JSON array; check GPURENT_RUNPOD_API_URL");
  }
  std::vector<Instance> out;
  for (const auto& p : j) {
    TRY_ASSIGN(Instance in, pod_from(p));
    out.push_back(std::move(in));
  }
  return out;
}

std::string error_detail(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return {};
  }
  for (const char* key : {"error", "message"}) {
    if (j.contains(key) && j[key].is_string()) {
      return j[key].get<std::string>().substr(0, 300);
    }
  }
  return {};
}

std::string create_body(const CreatePod& c)
{
  return json{{"name", c.name},
              {"imageName", c.image},
              {"computeType", "GPU"},
              {"cloudType", "SECURE"},
              {"gpuTypeIds", c.gpu_type_ids},
              {"gpuCount", c.gpus},
              {"interruptible", c.interruptible},
              {"ports", json::array({"22/tcp"})},
              {"supportPublicIp", true},
              {"containerDiskInGb", 20},
              {"volumeInGb", 20},
              {"volumeMountPath", "/workspace"},
              {"env", json{{"PUBLIC_KEY", c.public_key}}}}
      .dump();
}

std::string gpu_types_body()
{
  return json{{"query", k_gpu_types_query}}.dump();
}

Result<std::vector<Offer>> parse_gpu_types(std::string_view body)
{
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_object() ||
      !j["data"].contains("gpuTypes") || !j["data"]["gpuTypes"].is_array()) {
    return fail(Errc::invalid_input, "runpod: gpuTypes: the answer lacks data.gpuTypes");
  }
  std::vector<Offer> out;
  for (const auto& t : j["data"]["gpuTypes"]) {
    if (!t.is_object()) {
      continue;
    }
    const auto card = card_of(str(t, "id"));
    const auto price = money(t, "securePrice");
    if (!card || !price || price->n <= 0) {
      continue;
    }
    const auto spot = money(t, "secureSpotPrice");
    for (const std::uint32_t n : {1U, 2U, 4U, 8U}) {
      Offer o;
      o.provider = "runpod";
      o.card = *card;
      o.gpus = n;
      o.price_per_hour = MicroUsd{price->n * n};
      if (spot && spot->n > 0) {
        o.spot_price_per_hour = MicroUsd{spot->n * n};
      }
      o.price_origin = "fetched";
      out.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace gpurent::runpod
