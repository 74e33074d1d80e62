// SPDX-License-Identifier: MIT
#include "cli/model_options.hpp"

#include "cli/services.hpp"

namespace gpurent {

ResolveOptions resolve_options_from(const Services& s, bool offline)
{
  ResolveOptions o;
  o.offline = offline;
  if (auto endpoint = s.getenv("HF_ENDPOINT")) {
    while (!endpoint->empty() && endpoint->back() == '/') {
      endpoint->pop_back();
    }
    if (!endpoint->empty()) {
      o.endpoint = *endpoint;
    }
  }
  o.token = s.getenv("HF_TOKEN");
  if (!o.token) {
    o.token = s.getenv("HUGGING_FACE_HUB_TOKEN");
  }
  if (const auto xdg = s.getenv("XDG_CACHE_HOME")) {
    o.cache_dir = std::filesystem::path(*xdg) / "gpurent" / "hf";
  } else if (const auto home = s.getenv("HOME")) {
    o.cache_dir = std::filesystem::path(*home) / ".cache" / "gpurent" / "hf";
  }
  return o;
}

}  // namespace gpurent
