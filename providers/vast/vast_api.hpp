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

// The disk gpurent asks for (GB): searched with as `allocated_storage`, so that an offer's
// `dph_total` already includes it, and created with as `disk`.
inline constexpr std::uint32_t k_disk_gb = 20;
// Vast prices storage per GB per month of 720 hours (storage_cost 0.149333 $/GB/month x 10 GB
// = storage_total_cost 0.0020741 $/h in the show-instance example of the API reference).
inline constexpr std::int64_t k_storage_month_h = 720;

struct Bundle {  // one offer from POST /bundles/
  std::int64_t id = 0;
  std::string gpu_name;
  std::uint32_t num_gpus = 0;
  std::uint64_t gpu_ram_mb = 0;
  MicroUsd dph_total;          // $/h, whole machine slice, storage for `allocated_storage` included
  MicroUsd storage_per_hour;   // storage_total_cost, else storage_cost x allocated GB / 720; 0: unknown
  std::optional<MicroUsd> min_bid;
  std::string geolocation;
};

// Vast gpu_name ("RTX 4090", "A100 SXM4" + its RAM) -> Card::id.
[[nodiscard]] std::optional<std::string> card_of(std::string_view gpu_name, std::uint64_t gpu_ram_mb);
// The Vast gpu_names that are that card.
[[nodiscard]] std::vector<std::string> gpu_names(std::string_view card);

// `disk_gb` > 0 adds "allocated_storage" (Vast's default is 8 GB), which dph_total then includes.
[[nodiscard]] std::string search_body(const std::vector<std::string>& names, std::uint32_t gpus, bool bid,
                                      std::uint32_t limit, std::uint32_t disk_gb = 0);
// `allocated_gb`: the allocated_storage searched with (Vast's default 8), for storage_per_hour
// when an offer gives storage_cost but not storage_total_cost.
[[nodiscard]] Result<std::vector<Bundle>> parse_bundles(std::string_view body, std::uint32_t allocated_gb = 8);
[[nodiscard]] std::vector<Offer> offers_from(const std::vector<Bundle>& bundles);

// The SSH key is not in it: it is registered on the account (POST /ssh/), which Vast adds to the
// account's instances.
[[nodiscard]] std::string create_body(std::string_view image, std::string_view label, std::uint32_t disk_gb,
                                      std::optional<MicroUsd> bid);
// {"success":true,"new_contract":<id>} -> the instance id.
[[nodiscard]] Result<std::string> parse_create(std::string_view body);
// GET /instances/{id}/: {"instances": {…}} (a single object) or {"instances": null} (gone).
[[nodiscard]] Result<std::optional<Instance>> parse_instance(std::string_view body);
// GET /instances/ (deprecated) and a page of GET /api/v1/instances/: {"instances": […], …}.
[[nodiscard]] Result<std::vector<Instance>> parse_instances(std::string_view body);
struct InstancePage {
  std::vector<Instance> instances;
  std::string next_token;  // empty: the last page
};
// A page of GET /api/v1/instances/: {"instances": […], "next_token": "…" | null, …}.
[[nodiscard]] Result<InstancePage> parse_instance_page(std::string_view body);
// The query of GET /api/v1/instances/ (JSON values, URL-encoded as vast-cli sends them):
// limit=25, select_filters={}, order_by=[{"col":"id","dir":"asc"}], and after_token when given.
[[nodiscard]] std::string instances_query(std::string_view after_token);
// GET /ssh/: an array of {id, user_id, key, created_at, deleted_at}; the public keys not deleted.
[[nodiscard]] Result<std::vector<std::string>> parse_ssh_keys(std::string_view body);
[[nodiscard]] std::string ssh_key_body(std::string_view public_key);  // {"ssh_key": "…"}
[[nodiscard]] std::string state_body(std::string_view state);  // "stopped" | "running"
[[nodiscard]] std::string error_detail(std::string_view body);

// actual_status (show-instance reference): null/loading/created/scheduling/rebooting -> pending;
// running -> running (pending without an SSH address); stopped/exited -> stopped; offline ->
// offline (Vast bills nothing while the host is disconnected); frozen, unknown and anything
// else -> unknown.
[[nodiscard]] InstanceState map_status(const std::optional<std::string>& actual_status) noexcept;
// The trouble word for a status: "crashed" for `exited` unless intended_status is `stopped`
// ("Container process exited unexpectedly"), "offline", "frozen" (paused, GPU still billed),
// "unknown" (no recent heartbeat, or a status gpurent does not know), else "".
[[nodiscard]] std::string trouble_of(const std::optional<std::string>& actual_status, std::string_view intended_status);

}  // namespace gpurent::vast
