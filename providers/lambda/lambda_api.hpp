// SPDX-License-Identifier: MIT
#pragma once
// Lambda Cloud API v1.10.0 shapes <-> gpurent structs. Pure: no I/O.
// Success envelope {"data": …}; error envelope {"error": {"code","message","suggestion"?}}.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent::lambda {

struct InstanceType {
  std::string name;             // "gpu_1x_a100_sxm4"
  std::string description;
  std::string gpu_description;  // "A100 (40 GB SXM4)"
  std::int64_t price_cents_per_hour = 0;
  std::uint32_t gpus = 0;
  std::vector<std::string> regions_with_capacity;
};

struct ApiError {
  std::string code;  // branch on this, never on message
  std::string message;
  std::string suggestion;
};

struct SshKey {
  std::string id;
  std::string name;
  std::string public_key;
};

[[nodiscard]] Result<std::vector<InstanceType>> parse_instance_types(std::string_view body);
[[nodiscard]] Result<std::vector<Instance>> parse_instances(std::string_view body);
[[nodiscard]] Result<Instance> parse_instance(std::string_view body);
[[nodiscard]] Result<std::vector<std::string>> parse_launch(std::string_view body);
[[nodiscard]] Result<std::vector<SshKey>> parse_ssh_keys(std::string_view body);
[[nodiscard]] std::optional<ApiError> parse_error(std::string_view body);

[[nodiscard]] std::string launch_body(std::string_view region, std::string_view type, std::string_view ssh_key_name,
                                      std::string_view name);
[[nodiscard]] std::string terminate_body(std::string_view id);
[[nodiscard]] std::string add_ssh_key_body(std::string_view name, std::string_view public_key);

// booting -> pending, active -> running, terminating -> terminating, terminated -> terminated,
// unhealthy/preempted -> failed (the instance still exists: it may bill until terminated),
// anything else -> unknown.
[[nodiscard]] InstanceState map_status(std::string_view status) noexcept;
// "unhealthy", "preempted", "unknown" (a status outside the documented enum), else "".
[[nodiscard]] std::string trouble_of(std::string_view status);
// "A100 (40 GB SXM4)" -> "a100-40gb"; nullopt for a GPU the card catalogue lacks.
[[nodiscard]] std::optional<std::string> card_of(std::string_view gpu_description);
// Offers from instance types: one per type whose card we know, priced from price_cents_per_hour.
[[nodiscard]] std::vector<Offer> offers_from(const std::vector<InstanceType>& types, std::string_view fetched_at);

}  // namespace gpurent::lambda
