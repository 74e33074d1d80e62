// SPDX-License-Identifier: MIT
#pragma once
// Internal to providers/vast/vast_*.cpp (not a public interface; vast_api.hpp is): the readers of
// JSON fields that the offers and the instances share.
//   vast_api.cpp        these readers, the card table, searching offers (bundles)
//   vast_instances.cpp  instances (create, get, list, states), SSH keys, error details
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/units.hpp"

namespace gpurent::vast::detail {

// The string at `key`; "" when absent or not a string.
[[nodiscard]] std::string str(const nlohmann::json& j, const char* key);
// USD at `key` to the micro-dollar; nullopt when absent, not a number, negative or over $100000.
[[nodiscard]] std::optional<MicroUsd> money(const nlohmann::json& j, const char* key);
// GPU RAM in MB (Vast sends a number, sometimes fractional); 0 when absent or out of any
// plausible range (a cast of such a double to an integer is undefined behaviour).
[[nodiscard]] std::uint64_t ram_mb(const nlohmann::json& j);
// Storage per hour: the instance's own pricing breakdown (`instance.diskHour`), else
// storage_total_cost, else storage_cost ($/GB/month) x the disk in GB / 720.
[[nodiscard]] MicroUsd storage_of(const nlohmann::json& j, double disk_gb);

}  // namespace gpurent::vast::detail
