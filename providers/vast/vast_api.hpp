// SPDX-License-Identifier: MIT
#pragma once
// Vast.ai API v0 (https://console.vast.ai/api/v0) <-> gpurent structs. Pure: no I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent::vast {

struct Bundle {  // one offer from POST /bundles/
  std::int64_t id = 0;
  std::string gpu_name;
  std::uint32_t num_gpus = 0;
  std::uint64_t gpu_ram_mb = 0;
  MicroUsd dph_total;          // $/h, whole machine slice
  std::optional<MicroUsd> min_bid;
  std::string geolocation;
};

// Vast gpu_name ("RTX 4090", "A100 SXM4" + its RAM) -> Card::id.
[[nodiscard]] std::optional<std::string> card_of(std::string_view gpu_name, std::uint64_t gpu_ram_mb);
// The Vast gpu_names that are that card.
[[nodiscard]] std::vector<std::string> gpu_names(std::string_view card);

[[nodiscard]] std::string search_body(const std::vector<std::string>& names, std::uint32_t gpus, bool bid,
                                      std::uint32_t limit);
[[nodiscard]] Result<std::vector<Bundle>> parse_bundles(std::string_view body);
[[nodiscard]] std::vector<Offer> offers_from(const std::vector<Bundle>& bundles);

[[nodiscard]] std::string create_body(std::string_view image, std::string_view label, std::string_view public_key,
                                      std::optional<MicroUsd> bid);
// {"success":true,"new_contract":<id>} -> the instance id.
[[nodiscard]] Result<std::string> parse_create(std::string_view body);
// GET /instances/{id}/: {"instances": {…}} (a single object) or {"instances": null} (gone).
[[nodiscard]] Result<std::optional<Instance>> parse_instance(std::string_view body);
// GET /instances/: {"instances_found": N, "instances": […]}.
[[nodiscard]] Result<std::vector<Instance>> parse_instances(std::string_view body);
[[nodiscard]] std::string state_body(std::string_view state);  // "stopped" | "running"
[[nodiscard]] std::string error_detail(std::string_view body);

// actual_status: null/loading/created -> pending; running -> running (pending without an SSH
// address); exited/stopped -> stopped; offline -> failed; anything else -> unknown.
[[nodiscard]] InstanceState map_status(const std::optional<std::string>& actual_status) noexcept;

}  // namespace gpurent::vast
