// SPDX-License-Identifier: MIT
// Fuzz target for what gpurent reads from the Hugging Face Hub (providers/hf_hub.hpp): a model
// resolved over a fake HttpClient whose answers come from the input: the config.json answer
// (status, body), the model.safetensors.index.json answer (status, body) and a Retry-After
// header. Any answers give a model or an error of the kind the status calls for, never an
// escaping exception, a crash or a sanitizer report; a resolved model has a positive parameter
// count, and the exact count from the index is used only within 10% of the architecture's.
// Input: byte 0 picks the config status, byte 1 the index status, then the config body, the
// separator "@@index@@", the index body ("@@retry@@" and a Retry-After value may follow).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "providers/hf_hub.hpp"
#include "sizing/model_config.hpp"

namespace {

constexpr long k_statuses[] = {200, 200, 200, 200, 401, 403, 404, 429, 500, 503, 302, 0};

long status_of(std::uint8_t b)
{
  return k_statuses[b % (sizeof(k_statuses) / sizeof(k_statuses[0]))];
}

struct FakeHub final : gpurent::HttpClient {
  gpurent::HttpResponse config;
  gpurent::HttpResponse index;
  int calls = 0;
  gpurent::Result<gpurent::HttpResponse> send(const gpurent::HttpRequest& request) override
  {
    ++calls;
    if (request.method != "GET" || calls > 2) {
      std::abort();  // two GETs at most: config.json, then the index
    }
    if (request.url.ends_with("/config.json")) {
      return config;
    }
    if (request.url.ends_with("/model.safetensors.index.json")) {
      return index;
    }
    std::abort();  // nothing else is asked
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size < 2) {
    return 0;
  }
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  FakeHub hub;
  hub.config.status = status_of(data[0]);
  hub.index.status = status_of(data[1]);
  const auto sep = text.find("@@index@@");
  hub.config.body = std::string(text.substr(0, sep));
  std::string_view rest = sep == std::string_view::npos ? std::string_view{} : text.substr(sep + 9);
  const auto retry = rest.find("@@retry@@");
  hub.index.body = std::string(rest.substr(0, retry));
  if (retry != std::string_view::npos) {
    hub.config.headers.emplace_back("retry-after", std::string(rest.substr(retry + 9)));
  }

  gpurent::ResolveOptions options;
  options.endpoint = "http://127.0.0.1:9";
  // config.json and the index only: the file list, the weights' files chosen from it and their
  // ranged header reads are fuzz_hf_listing's; the headers themselves fuzz_safetensors_header's
  // and fuzz_gguf_header's.
  options.read_weights = false;
  const std::string id = "fuzz-org/fuzz-model-x";
  const auto r = gpurent::resolve_model(id, options, &hub);
  if (!r) {
    const auto code = r.error().code;
    if (r.error().message.empty()) {
      std::abort();
    }
    switch (hub.config.status) {
    case 200:
      if (code != gpurent::Errc::invalid_input && code != gpurent::Errc::unauthorized) {
        std::abort();  // a bad config.json, or a gated index
      }
      break;
    case 401:
    case 403: if (code != gpurent::Errc::unauthorized) std::abort(); break;
    case 404: if (code != gpurent::Errc::not_found) std::abort(); break;
    case 429: if (code != gpurent::Errc::quota) std::abort(); break;
    default: if (code != gpurent::Errc::unavailable) std::abort(); break;
    }
    return 0;
  }
  if (hub.config.status != 200 || r->source_kind != "hub" || r->from_cache || r->arch.params == 0 ||
      r->arch.name != id) {
    std::abort();
  }
  // The count is the architecture's, or the index's exact count when it is within 10% of it.
  const auto derived = gpurent::parse_model_config(hub.config.body, "x");
  if (!derived) {
    std::abort();  // the resolved model came from this config
  }
  if (r->arch.params != derived->params) {
    const auto exact = gpurent::params_from_safetensors_index(hub.index.body, r->arch.dtype);
    if (hub.index.status != 200 || !exact || *exact != r->arch.params ||
        std::abs(static_cast<double>(*exact) / static_cast<double>(derived->params) - 1.0) > 0.10) {
      std::abort();
    }
  }
  for (const auto& w : r->warnings) {
    if (w.empty()) {
      std::abort();
    }
  }
  return 0;
}
