// SPDX-License-Identifier: MIT
#pragma once
// The model catalogue as data: data/models.json's shape, read strictly and written back.
// The reader is compiled into its own library (gpurent_model_data, sizing/CMakeLists.txt): the
// build's generator (sizing/gen/gen_model_catalog.cpp) reads data/models.json with it and writes
// the catalogue's initialisers, compiled into gpurent_sizing, so `plan` parses no JSON at start-up.
// gpurent_sizing uses it again for the config file's [models.<name>] tables.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sizing/model.hpp"

namespace gpurent {

// The whole file: {"note": "...", "models": [ {...}, ... ]}. Every entry needs its `source` and
// its `params`; names, aliases and ids must be unique (case ignored). Errors name the entry and
// the key ("model llama-3.1-8b.layers: must be a whole number ...").
[[nodiscard]] Result<std::vector<ModelArch>> models_from_json(std::string_view text);

// One model's keys as JSON (the config's [models.<name>] table): over `base` when given (a
// built-in model of that name, its keys replaced one by one), else a new model. `params` may be
// left out (0: the caller counts it) and `source` too (it names the config table).
[[nodiscard]] Result<ModelArch> user_model_from_json(std::string_view name, std::string_view keys_json,
                                                     const ModelArch* base);

// The file's text for `models`, two-space indented, with `note` on top. Fields equal to their
// defaults are left out (global_layers when it equals layers); `all_fields` writes every one (the
// tests compare catalogues that way). Fields outside the catalogue (checkpoint, adapter,
// approximate) are not written.
[[nodiscard]] std::string models_to_json(std::span<const ModelArch> models, std::string_view note,
                                         bool all_fields = false);

// The built-in catalogue: defined by the source the build generates from data/models.json (in
// gpurent_sizing, not in this reader's library); sizing/model_catalog.cpp keeps it.
[[nodiscard]] std::vector<ModelArch> generated_model_catalog();

}  // namespace gpurent
