// SPDX-License-Identifier: MIT
#include "sizing/checkpoint_format.hpp"

#include "common/text.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/param_count.hpp"
#include "sizing/precision.hpp"

namespace gpurent {

std::optional<WeightFormat> quant_method_format(std::string_view method, std::uint32_t bits, bool is_float) noexcept
{
  if (method == "fp8" || method == "fbgemm_fp8") {
    return WeightFormat::fp8;
  }
  if (method == "mxfp4") {
    return WeightFormat::mxfp4;
  }
  if (method == "modelopt_fp4" || method == "nvfp4") {
    return WeightFormat::nvfp4;
  }
  if (method == "gptq") {
    return bits == 8 ? WeightFormat::int8 : WeightFormat::gptq;
  }
  if (method == "awq") {
    return WeightFormat::awq;
  }
  if (method == "bitsandbytes") {
    return bits == 8 ? WeightFormat::int8 : WeightFormat::nf4;
  }
  if (method == "compressed-tensors") {
    if (bits == 8) {
      return is_float ? WeightFormat::fp8 : WeightFormat::int8;
    }
    if (bits == 4) {
      return is_float ? WeightFormat::nvfp4 : WeightFormat::int4;
    }
  }
  return std::nullopt;
}

namespace {

// The format the checkpoint's headers show, when they were read and show one.
std::optional<WeightFormat> header_format(const ModelArch& model) noexcept
{
  return model.checkpoint ? model.checkpoint->format : std::nullopt;
}

}  // namespace

WeightFormat checkpoint_format(const ModelArch& model) noexcept
{
  if (const auto stored = header_format(model)) {
    return *stored;
  }
  return quant_method_format(model.quant_method, model.quant_bits, model.quant_float).value_or(WeightFormat::bf16);
}

std::string checkpoint_format_source(const ModelArch& model)
{
  if (header_format(model)) {
    const CheckpointWeights& ck = *model.checkpoint;
    return ck.source + ": " + ck.format_label;
  }
  if (!model.quant_method.empty()) {
    return "config.json quantization_config: " + model.quant_method;
  }
  return {};
}

bool native_weights(const JobSpec& job) noexcept
{
  if (const auto stored = header_format(job.model)) {
    return is_quantized(*stored) && formats_match(job.weights, *stored);
  }
  return !job.model.quant_method.empty() && job.weights == checkpoint_format(job.model);
}

ModelArch for_checkpoint(const ModelArch& model, std::string_view hf_id)
{
  ModelArch m = model;
  for (const auto& q : model.quantized) {
    if (iequals(q.hf_id, trim(hf_id))) {
      m.quant_method = q.quant_method;
      m.quant_bits = q.quant_bits;
      m.quant_float = q.quant_method == "fp8" || q.quant_method == "fbgemm_fp8";
      m.mxfp4_experts = q.quant_method == "mxfp4";
      m.quant_block_n = q.block;
      m.quant_block_k = q.block;
      if (q.intermediate > 0 && q.intermediate != m.intermediate) {
        m.intermediate = q.intermediate;
        m.params = count_params(m).total;  // the padded rows are stored too
      }
    }
  }
  return m;
}

}  // namespace gpurent
