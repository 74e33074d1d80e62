// SPDX-License-Identifier: MIT
// Fuzz target for the config.json reader and the safetensors-index reader: any bytes give a
// model whose sizes are within the validated bounds, or one invalid_input error; never a crash,
// an escaping exception or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "providers/hf_hub.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_config.hpp"
#include "sizing/param_count.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto m = gpurent::parse_model_config(text, "fuzz");
  if (m) {
    if (m->layers == 0 || m->layers > 1000 || m->hidden == 0 || m->hidden > 1'000'000 || m->vocab == 0 ||
        m->vocab > 10'000'000 || m->global_layers > m->layers || m->kv_heads == 0 || m->heads % m->kv_heads != 0) {
      std::abort();
    }
    if (gpurent::count_params(*m).total != m->params) {
      std::abort();
    }
    // An FP8 block is both sides or neither; every degree the layout check accepts has no refusal.
    if ((m->quant_block_n == 0) != (m->quant_block_k == 0)) {
      std::abort();
    }
    for (std::uint32_t tp = 1; tp <= 16; ++tp) {
      const bool ok = gpurent::tensor_parallel_ok(*m, tp, gpurent::WeightFormat::fp8);
      if (ok != gpurent::tensor_parallel_refusal(*m, tp, gpurent::WeightFormat::fp8).empty()) {
        std::abort();
      }
    }
  } else if (m.error().code != gpurent::Errc::invalid_input || m.error().message.empty()) {
    std::abort();
  }
  const auto p = gpurent::params_from_safetensors_index(text, "bfloat16");
  if (!p && p.error().code != gpurent::Errc::invalid_input) {
    std::abort();
  }
  return 0;
}
