// SPDX-License-Identifier: MIT
// Fuzz target for the readers of RunPod's API answers (providers/runpod/runpod_api.hpp): pods
// (REST), the GraphQL gpuTypes answer (offers) and error bodies. Any body gives a value or an
// invalid_input error, never an escaping exception, a crash or a sanitizer report; a running
// pod has an address, offers carry a known card, 1-8 GPUs and positive prices.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz/provider_checks.hpp"
#include "providers/runpod/runpod_api.hpp"

using gpurent::fuzz::check_error;
using gpurent::fuzz::check_instance;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  const auto pod = gpurent::runpod::parse_pod(body);
  check_error(pod);
  if (pod) {
    check_instance(*pod);
  }
  const auto pods = gpurent::runpod::parse_pods(body);
  check_error(pods);
  if (pods) {
    for (const auto& p : *pods) {
      check_instance(p);
    }
  }
  const auto offers = gpurent::runpod::parse_gpu_types(body);
  check_error(offers);
  if (offers) {
    for (const auto& o : *offers) {
      if (o.card.empty() || o.gpus == 0 || o.gpus > 8 || o.price_per_hour.n <= 0 ||
          (o.spot_price_per_hour && o.spot_price_per_hour->n <= 0) || gpurent::runpod::gpu_type_ids(o.card).empty()) {
        std::abort();
      }
    }
  }
  if (gpurent::runpod::error_detail(body).size() > 400) {
    std::abort();  // the provider's message is cut to a line's worth
  }
  return 0;
}
