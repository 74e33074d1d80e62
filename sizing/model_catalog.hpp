// SPDX-License-Identifier: MIT
#pragma once
// The built-in catalogue of popular open models, with the exact architecture of each
// published config.json (data/models.json, compiled in at build; docs/models.md lists them), and
// the models of the config file's [models.<name>] tables.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sizing/model.hpp"

namespace gpurent {

// Every entry, in display order (family, then size), with the user's models installed by
// install_user_models (one with a built-in name replaces that entry; the others come last).
[[nodiscard]] std::span<const ModelArch> model_catalog();
// The built-in entries only (data/models.json). Built once, never changes.
[[nodiscard]] std::span<const ModelArch> builtin_model_catalog();

// A model of the config file's [models.<name>] table (`keys_json`: its keys as a JSON object, with
// data/models.json's names): over the built-in entry of that name when there is one, else a new
// model. `params` left out is counted from the architecture; names that reach another built-in
// entry are refused. Errors name the model and key.
[[nodiscard]] Result<ModelArch> user_model(std::string_view name, std::string_view keys_json);
// Sets the user's models for the rest of the process (the CLI calls it with the config's tables
// before a command runs; tests call it with {} to reset). Spans and pointers from model_catalog()
// and find_model_ptr stay valid unless the user's models change.
void install_user_models(std::vector<ModelArch> models);

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
