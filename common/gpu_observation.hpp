// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent doctor` saw of a server's GPUs: the output of the doctor parsers
// (sync/doctor_parse.hpp, to_observation) and what the StateStore keeps for the idle warning
// (providers/state_store.hpp). Plain data, shared by both sides so neither includes the other.
#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <vector>

namespace gpurent {

using TimePoint = std::chrono::system_clock::time_point;

// One GPU as `gpurent doctor` saw it.
struct GpuSample {
  int index = 0;
  std::uint64_t memory_used_mib = 0;
  std::uint64_t memory_total_mib = 0;
  std::optional<std::uint32_t> utilization_pct;  // nvidia-smi utilization.gpu; nullopt when not reported
  auto operator<=>(const GpuSample&) const = default;
};

// What one `gpurent doctor NAME` run saw on a tracked server: the input of the idle warning.
struct DoctorObservation {
  std::int64_t id = 0;
  std::int64_t server_id = 0;
  TimePoint at{};
  std::vector<GpuSample> gpus;
  // Processes nvidia-smi lists as holding GPU memory (--query-compute-apps); nullopt when that
  // query failed.
  std::optional<std::uint32_t> compute_processes;
};

}  // namespace gpurent
