// SPDX-License-Identifier: MIT
// Catalogue facts about how each model is published and run, beside its architecture: the
// checkpoint's own format (config.json quantization_config), official quantized checkpoints of
// the same architecture, the ollama library tag and its default quantization, and the torchtune
// config family. Sources: docs/models.md "Deployment facts".
#include <string>
#include <string_view>
#include <vector>

#include "sizing/model_catalog_parts.hpp"
#include "sizing/quant_skip.hpp"

namespace gpurent::catalog {
namespace {

struct Deploy {
  std::string_view name;
  std::string_view quant_method;  // the checkpoint's own format ("" = 16-bit)
  std::string_view ollama_tag;
  std::string_view ollama_quant;
  std::string_view torchtune;     // "<dir>/<size>"
  std::string_view tune_kinds;    // config suffixes that exist for it, space-separated
};

constexpr std::string_view k_tt_small = "full full_single_device lora lora_single_device qlora_single_device";
constexpr std::string_view k_tt_qwen = "full full_single_device lora lora_single_device";

constexpr Deploy k_deploy[] = {
    {"gemma-2-2b", "", "gemma2:2b", "Q4_0", "gemma2/2B", "full lora lora_single_device qlora_single_device"},
    {"gemma-2-9b", "", "gemma2:9b", "Q4_0", "gemma2/9B", "full lora lora_single_device qlora_single_device"},
    {"gemma-2-27b", "", "gemma2:27b", "Q4_0", "gemma2/27B", "full lora lora_single_device qlora_single_device"},
    {"gemma-3-1b", "", "gemma3:1b", "Q4_K_M", "", ""},
    {"gemma-3-4b", "", "gemma3:4b", "Q4_K_M", "", ""},
    {"gemma-3-12b", "", "gemma3:12b", "Q4_K_M", "", ""},
    {"gemma-3-27b", "", "gemma3:27b", "Q4_K_M", "", ""},
    {"llama-2-7b", "", "llama2:7b", "Q4_0", "llama2/7B", "full full_low_memory lora lora_single_device qlora qlora_single_device"},
    {"llama-2-13b", "", "llama2:13b", "Q4_0", "llama2/13B", "full lora qlora_single_device"},
    {"llama-2-70b", "", "llama2:70b", "Q4_0", "llama2/70B", "lora qlora"},
    {"llama-3-8b", "", "llama3:8b", "Q4_0", "llama3/8B", k_tt_small},
    {"llama-3-70b", "", "llama3:70b", "Q4_0", "llama3/70B", "full lora"},
    {"llama-3.1-8b", "", "llama3.1:8b", "Q4_K_M", "llama3_1/8B", k_tt_small},
    {"llama-3.1-70b", "", "llama3.1:70b", "Q4_K_M", "llama3_1/70B", "full lora"},
    {"llama-3.1-405b", "", "llama3.1:405b", "Q4_K_M", "llama3_1/405B", "qlora"},
    {"llama-3.2-1b", "", "llama3.2:1b", "Q8_0", "llama3_2/1B", k_tt_small},
    {"llama-3.2-3b", "", "llama3.2:3b", "Q4_K_M", "llama3_2/3B", k_tt_small},
    {"llama-3.3-70b", "", "llama3.3:70b", "Q4_K_M", "llama3_3/70B", "full lora qlora"},
    {"mistral-7b-v0.1", "", "", "", "mistral/7B", "full full_low_memory lora lora_single_device qlora_single_device"},
    {"mistral-7b", "", "mistral:7b", "Q4_0", "", ""},
    {"mistral-small-24b", "", "mistral-small:24b", "Q4_K_M", "", ""},
    {"mixtral-8x7b", "", "mixtral:8x7b", "Q4_0", "", ""},
    {"mixtral-8x22b", "", "mixtral:8x22b", "Q4_0", "", ""},
    {"gpt-oss-20b", "mxfp4", "gpt-oss:20b", "MXFP4", "", ""},
    {"gpt-oss-120b", "mxfp4", "gpt-oss:120b", "MXFP4", "", ""},
    {"deepseek-v2-lite", "", "deepseek-v2:16b", "Q4_0", "", ""},
    {"deepseek-v3", "fp8", "deepseek-v3:671b", "Q4_K_M", "", ""},
    {"deepseek-r1", "fp8", "deepseek-r1:671b", "Q4_K_M", "", ""},
    {"phi-3-mini", "", "phi3:mini", "Q4_0", "phi3/mini", "full full_low_memory lora lora_single_device qlora_single_device"},
    {"phi-3-mini-128k", "", "", "", "", ""},
    {"phi-3-medium", "", "phi3:medium", "Q4_0", "", ""},
    {"phi-3.5-mini", "", "phi3.5:3.8b", "Q4_0", "", ""},
    {"phi-4", "", "phi4:14b", "Q4_K_M", "phi4/14B", "full full_low_memory lora lora_single_device qlora_single_device"},
    {"qwen2.5-0.5b", "", "qwen2.5:0.5b", "Q4_K_M", "qwen2_5/0.5B", k_tt_qwen},
    {"qwen2.5-1.5b", "", "qwen2.5:1.5b", "Q4_K_M", "qwen2_5/1.5B", k_tt_qwen},
    {"qwen2.5-3b", "", "qwen2.5:3b", "Q4_K_M", "qwen2_5/3B", k_tt_qwen},
    {"qwen2.5-7b", "", "qwen2.5:7b", "Q4_K_M", "qwen2_5/7B", k_tt_qwen},
    {"qwen2.5-14b", "", "qwen2.5:14b", "Q4_K_M", "qwen2_5/14B", "lora_single_device"},
    {"qwen2.5-32b", "", "qwen2.5:32b", "Q4_K_M", "qwen2_5/32B", "lora"},
    {"qwen2.5-72b", "", "qwen2.5:72b", "Q4_K_M", "qwen2_5/72B", "lora"},
    {"qwen3-0.6b", "", "qwen3:0.6b", "Q4_K_M", "qwen3/0.6B", k_tt_qwen},
    {"qwen3-1.7b", "", "qwen3:1.7b", "Q4_K_M", "qwen3/1.7B", k_tt_qwen},
    {"qwen3-4b", "", "qwen3:4b", "Q4_K_M", "qwen3/4B", k_tt_qwen},
    {"qwen3-8b", "", "qwen3:8b", "Q4_K_M", "qwen3/8B", k_tt_qwen},
    {"qwen3-14b", "", "qwen3:14b", "Q4_K_M", "qwen3/14B", "lora_single_device"},
    {"qwen3-32b", "", "qwen3:32b", "Q4_K_M", "qwen3/32B", "lora"},
    {"qwen3-30b-a3b", "", "qwen3:30b", "Q4_K_M", "", ""},
    {"qwen3-235b-a22b", "", "qwen3:235b", "Q4_K_M", "", ""},
};

// Official quantized checkpoints: Qwen publishes -AWQ, -GPTQ-Int4 and -GPTQ-Int8 of every
// Qwen2.5 Instruct size and -FP8 of every Qwen3 size; Meta publishes Llama-3.1-405B in FP8
// (fbgemm_fp8); hugging-quants publishes AWQ/GPTQ INT4 of Llama-3.1 Instruct.
void add_quantized(ModelArch& m)
{
  std::uint32_t padded = 0;
  std::uint32_t block = 0;
  const auto add = [&m, &padded, &block](std::string id, std::string method, std::uint32_t bits) {
    m.quantized.push_back({std::move(id), std::move(method), bits, padded, block, {}, 0, 0});
  };
  const std::string& base = m.hf_ids.empty() ? m.name : m.hf_ids.front();
  if (m.name.starts_with("qwen2.5-")) {
    // Qwen2.5-72B's quantized checkpoints pad intermediate_size 29568 -> 29696 (232 groups of
    // 128) so that tensor parallel 2, 4 and 8 get whole quantization groups.
    padded = m.name == "qwen2.5-72b" ? 29696 : 0;
    add(base + "-Instruct-AWQ", "awq", 4);
    add(base + "-Instruct-GPTQ-Int4", "gptq", 4);
    add(base + "-Instruct-GPTQ-Int8", "gptq", 8);
    padded = 0;
  } else if (m.name.starts_with("qwen3-")) {
    // Qwen3's -FP8 checkpoints are fine-grained FP8: "weight_block_size": [128, 128].
    block = 128;
    add(base + "-FP8", "fp8", 8);
    block = 0;
  } else if (m.name == "llama-3.1-405b") {
    // Meta keeps the first and last decoder layers, every layer's attention and lm_head in bf16
    // (its config.json modules_to_not_convert, as transformers' quantize_fp8_llama.py writes it:
    // "we don't quantize the first and last layers as well as the lm_head. Also, we don't
    // quantize the self_attn layers"): only the MLPs of layers 1-124 are FP8. Its list names
    // model.layers.{1..124}.self_attn one by one; "self_attn" names the same modules.
    const std::vector<std::string> skip{"model.layers.0", "model.layers." + std::to_string(m.layers - 1), "lm_head",
                                        "self_attn"};
    const UnquantizedLinears kept = unquantized_linears(m, skip);
    for (const char* id : {"meta-llama/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B-FP8"}) {
      add(id, "fbgemm_fp8", 8);
      m.quantized.back().skip = skip;
      m.quantized.back().skip_linear = kept.linear;
      m.quantized.back().skip_experts = kept.experts;
    }
  }
  if (m.name == "llama-3.1-8b" || m.name == "llama-3.1-70b" || m.name == "llama-3.1-405b") {
    const std::string size = m.name.substr(std::string_view("llama-3.1-").size());
    std::string upper = size;
    for (char& c : upper) {
      c = c == 'b' ? 'B' : c;
    }
    add("hugging-quants/Meta-Llama-3.1-" + upper + "-Instruct-AWQ-INT4", "awq", 4);
    add("hugging-quants/Meta-Llama-3.1-" + upper + "-Instruct-GPTQ-INT4", "gptq", 4);
  }
}

}  // namespace

void add_deploy_facts(std::vector<ModelArch>& models)
{
  for (ModelArch& m : models) {
    for (const Deploy& d : k_deploy) {
      if (d.name != m.name) {
        continue;
      }
      m.quant_method = std::string(d.quant_method);
      m.ollama_tag = std::string(d.ollama_tag);
      m.ollama_quant = std::string(d.ollama_quant);
      m.torchtune = std::string(d.torchtune);
      m.torchtune_kinds = std::string(d.tune_kinds);
      if (!d.quant_method.empty()) {
        m.quant_bits = d.quant_method == "mxfp4" ? 4 : 8;
        m.quant_float = true;
      }
      if (d.quant_method == "fp8") {
        // The FP8 checkpoints of this table (DeepSeek-V3/R1) declare "weight_block_size": [128, 128].
        m.quant_block_n = 128;
        m.quant_block_k = 128;
      }
    }
    add_quantized(m);
  }
}

}  // namespace gpurent::catalog
