// SPDX-License-Identifier: MIT
#pragma once
// The built-in catalogue of popular open models, with the exact architecture of each
// published config.json (see docs/models.md for the list and the sources).
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sizing/model.hpp"

namespace gpurent {

// Every entry, in display order (family, then size). Built once, never changes.
[[nodiscard]] std::span<const ModelArch> model_catalog();

// Looks a model up by short name ("llama-3.1-8b"), alias, or any of its Hugging Face ids
// ("meta-llama/Llama-3.1-8B-Instruct", also as an https://huggingface.co/ URL), ignoring case
// and surrounding spaces.
[[nodiscard]] std::optional<ModelArch> find_model(std::string_view name_or_id);
// The same, without copying: nullptr when unknown. Also matches the ids of the entry's quantized
// checkpoints (ModelArch::quantized).
[[nodiscard]] const ModelArch* find_model_ptr(std::string_view name_or_id);

// The Hugging Face id the user named (one of the entry's ids or quantized checkpoints, in the
// catalogue's spelling); a short name or alias gives the entry's first id. Launch lines name it.
[[nodiscard]] std::string named_hf_id(const ModelArch& model, std::string_view name_or_id);

}  // namespace gpurent
