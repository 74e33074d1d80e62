// SPDX-License-Identifier: MIT
#pragma once
// RunPod REST v1 (https://rest.runpod.io/v1) and the GraphQL gpuTypes query <-> gpurent structs.
// Pure: no I/O.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent::runpod {

// RunPod gpuTypeId ("NVIDIA GeForce RTX 4090") -> Card::id, nullopt when not in our catalogue.
[[nodiscard]] std::optional<std::string> card_of(std::string_view gpu_type_id);
// Every RunPod gpuTypeId for a Card::id (in RunPod's order of preference).
[[nodiscard]] std::vector<std::string> gpu_type_ids(std::string_view card);

// RUNNING with a public IP and port 22 mapped -> running; RUNNING otherwise -> pending;
// EXITED -> stopped (trouble "crashed" when lastStatusChange gives a non-zero exit code);
// TERMINATED -> terminated; anything else -> unknown (trouble "unknown").
[[nodiscard]] Result<Instance> parse_pod(std::string_view body);
[[nodiscard]] Result<std::vector<Instance>> parse_pods(std::string_view body);  // a bare array
[[nodiscard]] std::string error_detail(std::string_view body);                  // the provider's message, or ""
// The exit code named in a lastStatusChange text ("... exit code 137", "exited with code: 1"),
// nullopt when it names none. RunPod documents the field only as a description of the last event.
[[nodiscard]] std::optional<int> exit_code_in(std::string_view text);
// What a stopped (EXITED) pod's volume disk of `volume_gb` bills per hour: $0.20/GB-month.
// parse_pod sets Instance::stopped_per_hour from the pod's volumeInGb.
[[nodiscard]] MicroUsd stopped_volume_per_hour(std::uint64_t volume_gb);

struct CreatePod {
  std::string name;
  std::string image;
  std::vector<std::string> gpu_type_ids;
  std::uint32_t gpus = 1;
  bool interruptible = false;
  std::string public_key;
};
[[nodiscard]] std::string create_body(const CreatePod& c);

inline constexpr const char* k_gpu_types_query =
    "query GpuTypes { gpuTypes { id displayName memoryInGb securePrice secureSpotPrice } }";
[[nodiscard]] std::string gpu_types_body();
// Offers for 1, 2, 4 and 8 GPUs of each known card with a secure price (prices are per GPU).
[[nodiscard]] Result<std::vector<Offer>> parse_gpu_types(std::string_view body);

}  // namespace gpurent::runpod
