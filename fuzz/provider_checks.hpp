// SPDX-License-Identifier: MIT
#pragma once
// Checks shared by the provider answer targets (fuzz_lambda_api, fuzz_runpod_api, fuzz_vast_api).
#include <cstdlib>

#include "common/result.hpp"
#include "providers/provider.hpp"

namespace gpurent::fuzz {

// A parser of an answer gives a value or an invalid_input error with a message.
template <class T>
void check_error(const Result<T>& r)
{
  if (!r && (r.error().code != Errc::invalid_input || r.error().message.empty())) {
    std::abort();
  }
}

// An instance has an id (an empty one reads as "no answer yet" in the state store), a port and
// no negative price; a running one has an address SSH can reach.
inline void check_instance(const Instance& in)
{
  if (in.id.empty() || in.port == 0 || in.price_per_hour.n < 0) {
    std::abort();
  }
  if (in.state == InstanceState::running && in.host.empty()) {
    std::abort();
  }
}

}  // namespace gpurent::fuzz
