// SPDX-License-Identifier: MIT
// Fuzz target for the readers of Vast.ai's API answers (providers/vast/vast_api.hpp): offer
// bundles (and the offers made from them), instances (one, none or a list), the create answer
// and error bodies. Any body gives a value or an invalid_input error, never an escaping
// exception, a crash or a sanitizer report; instances carry an id, a running one an address,
// offers a known card, at least one GPU and a price >= 0, one offer per card and GPU count.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "fuzz/provider_checks.hpp"
#include "providers/vast/vast_api.hpp"

using gpurent::fuzz::check_error;
using gpurent::fuzz::check_instance;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  const auto bundles = gpurent::vast::parse_bundles(body);
  check_error(bundles);
  if (bundles) {
    std::set<std::pair<std::string, std::uint32_t>> seen;
    for (const auto& o : gpurent::vast::offers_from(*bundles)) {
      if (o.card.empty() || o.gpus == 0 || o.price_per_hour.n < 0 || gpurent::vast::gpu_names(o.card).empty() ||
          !seen.emplace(o.card, o.gpus).second) {
        std::abort();
      }
    }
  }
  const auto one = gpurent::vast::parse_instance(body);
  check_error(one);
  if (one && *one) {
    check_instance(**one);
  }
  const auto list = gpurent::vast::parse_instances(body);
  check_error(list);
  if (list) {
    for (const auto& in : *list) {
      check_instance(in);
    }
  }
  const auto created = gpurent::vast::parse_create(body);
  check_error(created);
  if (created && created->empty()) {
    std::abort();
  }
  if (gpurent::vast::error_detail(body).size() > 3 * 200 + 4) {
    std::abort();  // each of the three messages is cut to 200 bytes
  }
  return 0;
}
