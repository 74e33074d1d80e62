// SPDX-License-Identifier: MIT
// Fuzz target for the readers of Vast.ai's list answers (providers/vast/vast_api.hpp): a page of
// GET /api/v1/instances/ (parse_instance_page: the instances and the next page's token) and
// GET /ssh/ (parse_ssh_keys: the account's public keys not deleted). Any body gives a value or an
// invalid_input error, never an escaping exception, a crash or a sanitizer report; a page holds
// what parse_instances reads of the same body, each instance with an id and a port; the next
// token goes into the next query URL-encoded (no raw '&', '#' or space); keys are never empty.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/provider_checks.hpp"
#include "providers/vast/vast_api.hpp"

using gpurent::fuzz::check_error;
using gpurent::fuzz::check_instance;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  const auto page = gpurent::vast::parse_instance_page(body);
  check_error(page);
  const auto list = gpurent::vast::parse_instances(body);
  if (page.has_value() != list.has_value() || (page && page->instances.size() != list->size())) {
    std::abort();
  }
  if (page) {
    for (const auto& in : page->instances) {
      check_instance(in);
    }
    if (!page->next_token.empty()) {
      const std::string query = gpurent::vast::instances_query(page->next_token);
      const auto at = query.find("&after_token=");
      if (at == std::string::npos ||
          query.find_first_of("&# \n", at + 13) != std::string::npos) {
        std::abort();
      }
    }
  }

  const auto keys = gpurent::vast::parse_ssh_keys(body);
  check_error(keys);
  if (keys) {
    for (const auto& k : *keys) {
      if (k.empty()) {
        std::abort();
      }
    }
  }
  return 0;
}
