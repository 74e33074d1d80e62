// SPDX-License-Identifier: MIT
#pragma once
// Internal to the model catalogue: each sizing/catalog_<family>.cpp appends its entries.
#include <cstdint>
#include <vector>

#include "sizing/model.hpp"

namespace gpurent::catalog {

void add_llama_models(std::vector<ModelArch>& out);
void add_mistral_models(std::vector<ModelArch>& out);
void add_qwen_models(std::vector<ModelArch>& out);
void add_gemma_models(std::vector<ModelArch>& out);
void add_moe_models(std::vector<ModelArch>& out);
void add_phi_models(std::vector<ModelArch>& out);
// Checkpoint formats, quantized checkpoints, ollama tags, torchtune configs (catalog_deploy.cpp).
void add_deploy_facts(std::vector<ModelArch>& models);

}  // namespace gpurent::catalog
