// SPDX-License-Identifier: MIT
// Fuzz target for the readers of Lambda Cloud's API answers (providers/lambda/lambda_api.hpp):
// any body gives a value or an invalid_input error, never an escaping exception, a crash or a
// sanitizer report; instances carry an id (a running one an address), offers a card, at least one
// GPU and a price >= 0.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz/provider_checks.hpp"
#include "providers/lambda/lambda_api.hpp"

using gpurent::fuzz::check_error;
using gpurent::fuzz::check_instance;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  const auto types = gpurent::lambda::parse_instance_types(body);
  check_error(types);
  if (types) {
    for (const auto& o : gpurent::lambda::offers_from(*types, "2026-12-01T00:00:00Z")) {
      if (o.card.empty() || o.gpus == 0 || o.price_per_hour.n < 0 || o.provider != "lambda") {
        std::abort();
      }
    }
  }
  const auto instances = gpurent::lambda::parse_instances(body);
  check_error(instances);
  if (instances) {
    for (const auto& in : *instances) {
      check_instance(in);
    }
  }
  const auto instance = gpurent::lambda::parse_instance(body);
  check_error(instance);
  if (instance) {
    check_instance(*instance);
  }
  check_error(gpurent::lambda::parse_launch(body));
  check_error(gpurent::lambda::parse_ssh_keys(body));
  (void)gpurent::lambda::parse_error(body);
  return 0;
}
