// SPDX-License-Identifier: MIT
// Fuzz target for the model catalogue's reader (sizing/model_data.cpp): data/models.json's
// shape, and a user's [models.<name>] table as JSON over a built-in model or as a new one. Any
// bytes give models or one error; every file read writes back (sizing/model_data.hpp's writer)
// to text that reads again into the same models, and every model read passes the shape checks
// the estimate relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sizing/model_catalog.hpp"
#include "sizing/model_data.hpp"

namespace {

void check(const gpurent::ModelArch& m)
{
  if (m.name.empty() || m.layers == 0 || m.heads == 0 || m.kv_heads == 0 || m.kv_heads > m.heads ||
      m.global_layers > m.layers || m.experts_active > m.experts) {
    std::abort();
  }
}

void check_error(const gpurent::Error& e)
{
  if (e.message.empty() || e.code != gpurent::Errc::invalid_input) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto models = gpurent::models_from_json(text)) {
    for (const auto& m : *models) {
      check(m);
    }
    const std::string written = gpurent::models_to_json(*models, "fuzz");
    const auto again = gpurent::models_from_json(written);
    if (!again || gpurent::models_to_json(*again, "fuzz", true) != gpurent::models_to_json(*models, "fuzz", true)) {
      std::abort();
    }
  } else {
    check_error(models.error());
  }
  // The same bytes as a user's table over a built-in model and as a new model.
  for (const char* name : {"llama-3.1-8b", "my-model"}) {
    if (const auto m = gpurent::user_model(name, text)) {
      check(*m);
      if (m->params == 0) {
        std::abort();
      }
    } else {
      check_error(m.error());
    }
  }
  return 0;
}
