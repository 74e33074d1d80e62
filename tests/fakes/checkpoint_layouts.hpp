// SPDX-License-Identifier: MIT
#pragma once
// The tensor layouts of real published checkpoints, with real dimensions (tensor names, dtypes
// and shapes as the Hub's files list them), and the parameter counts they must give:
//   hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4  (AutoGPTQ: qweight [in/8, out], g_idx)
//   Qwen/Qwen2.5-7B-Instruct-AWQ                           (AutoAWQ GEMM: qweight [in, out/8])
//   Qwen/Qwen3-8B-FP8                                      (F8_E4M3 + 128x128 weight_scale_inv)
//   openai/gpt-oss-20b                                     (MXFP4 *_blocks/*_scales experts)
//   unsloth/llama-3-8b-bnb-4bit                            (bitsandbytes NF4, double quantization)
//   mistralai/Mistral-Small-3.1-24B-Instruct-2503          (mistral3: Pixtral vision tower + projector)
//   llama.cpp Q4_K_M of Llama-3.1-8B and of Mixtral-8x7B   (llama_tensor_get_type's mixing rules)
#include <string>
#include <vector>

#include "tests/fakes/checkpoint_builder.hpp"

namespace gpurent::test {

struct Layout {
  std::vector<StTensor> tensors;
  U params = 0;               // logical parameters (the published count)
  U outside_text_params = 0;  // vision tower + projector
  std::string config;         // its config.json
};

struct Dims {
  U layers, hidden, inter, heads, kv, head_dim, vocab;
};

// Adds one linear module's tensors; the callback decides the storage.
template <class Linear>
void decoder(std::vector<StTensor>& out, const std::string& prefix, const Dims& d, const std::string& norm_dtype,
             Linear linear, bool qkv_bias = false, bool qk_norm = false)
{
  for (U i = 0; i < d.layers; ++i) {
    const std::string p = prefix + "layers." + std::to_string(i) + ".";
    linear(p + "self_attn.q_proj", d.hidden, d.heads * d.head_dim);
    linear(p + "self_attn.k_proj", d.hidden, d.kv * d.head_dim);
    linear(p + "self_attn.v_proj", d.hidden, d.kv * d.head_dim);
    linear(p + "self_attn.o_proj", d.heads * d.head_dim, d.hidden);
    if (qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", norm_dtype, {d.heads * d.head_dim}});
      out.push_back({p + "self_attn.k_proj.bias", norm_dtype, {d.kv * d.head_dim}});
      out.push_back({p + "self_attn.v_proj.bias", norm_dtype, {d.kv * d.head_dim}});
    }
    if (qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", norm_dtype, {d.head_dim}});
      out.push_back({p + "self_attn.k_norm.weight", norm_dtype, {d.head_dim}});
    }
    linear(p + "mlp.gate_proj", d.hidden, d.inter);
    linear(p + "mlp.up_proj", d.hidden, d.inter);
    linear(p + "mlp.down_proj", d.inter, d.hidden);
    out.push_back({p + "input_layernorm.weight", norm_dtype, {d.hidden}});
    out.push_back({p + "post_attention_layernorm.weight", norm_dtype, {d.hidden}});
  }
  out.push_back({prefix + "embed_tokens.weight", norm_dtype, {d.vocab, d.hidden}});
  out.push_back({prefix + "norm.weight", norm_dtype, {d.hidden}});
}

inline std::string llama_config(const Dims& d, const std::string& extra)
{
  return R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":)" + std::to_string(d.hidden) +
         R"(,"intermediate_size":)" + std::to_string(d.inter) + R"(,"num_hidden_layers":)" + std::to_string(d.layers) +
         R"(,"num_attention_heads":)" + std::to_string(d.heads) + R"(,"num_key_value_heads":)" + std::to_string(d.kv) +
         R"(,"max_position_embeddings":131072,"vocab_size":)" + std::to_string(d.vocab) +
         R"(,"tie_word_embeddings":false,"torch_dtype":"float16")" + extra + "}";
}

constexpr Dims k_llama31_8b{32, 4096, 14336, 32, 8, 128, 128256};
constexpr U k_llama31_8b_params = 8'030'261'248;

inline Layout llama31_8b_gptq_int4()
{
  Layout l;
  decoder(l.tensors, "model.", k_llama31_8b, "F16", [&](const std::string& n, U in, U out) {
    l.tensors.push_back({n + ".qweight", "I32", {in * 4 / 32, out}});
    l.tensors.push_back({n + ".qzeros", "I32", {in / 128, out * 4 / 32}});
    l.tensors.push_back({n + ".scales", "F16", {in / 128, out}});
    l.tensors.push_back({n + ".g_idx", "I32", {in}});
  });
  l.tensors.push_back({"lm_head.weight", "F16", {k_llama31_8b.vocab, k_llama31_8b.hidden}});
  l.params = k_llama31_8b_params;
  l.config = llama_config(k_llama31_8b, R"(,"quantization_config":{"bits":4,"group_size":128,"desc_act":true,)"
                                        R"("quant_method":"gptq","sym":true})");
  return l;
}

inline Layout qwen25_7b_awq()
{
  Layout l;
  const Dims d{28, 3584, 18944, 28, 4, 128, 152064};
  decoder(
      l.tensors, "model.", d, "F16",
      [&](const std::string& n, U in, U out) {
        l.tensors.push_back({n + ".qweight", "I32", {in, out * 4 / 32}});
        l.tensors.push_back({n + ".qzeros", "I32", {in / 128, out * 4 / 32}});
        l.tensors.push_back({n + ".scales", "F16", {in / 128, out}});
      },
      true);
  l.tensors.push_back({"lm_head.weight", "F16", {d.vocab, d.hidden}});
  l.params = 7'615'616'512;
  l.config = R"({"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":3584,"intermediate_size":18944,)"
             R"("num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"max_position_embeddings":32768,)"
             R"("vocab_size":152064,"tie_word_embeddings":false,"torch_dtype":"float16","use_sliding_window":false,)"
             R"("quantization_config":{"bits":4,"group_size":128,"modules_to_not_convert":null,"quant_method":"awq",)"
             R"("version":"gemm","zero_point":true}})";
  return l;
}

inline Layout qwen3_8b_fp8()
{
  Layout l;
  const Dims d{36, 4096, 12288, 32, 8, 128, 151936};
  decoder(
      l.tensors, "model.", d, "BF16",
      [&](const std::string& n, U in, U out) {
        l.tensors.push_back({n + ".weight", "F8_E4M3", {out, in}});
        l.tensors.push_back({n + ".weight_scale_inv", "F32", {(out + 127) / 128, (in + 127) / 128}});
      },
      false, true);
  l.tensors.push_back({"lm_head.weight", "BF16", {d.vocab, d.hidden}});
  l.params = 8'190'735'360;
  l.config = R"({"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","hidden_size":4096,"intermediate_size":12288,)"
             R"("num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,)"
             R"("max_position_embeddings":40960,"vocab_size":151936,"tie_word_embeddings":false,"torch_dtype":"bfloat16",)"
             R"("quantization_config":{"activation_scheme":"dynamic","fmt":"e4m3","quant_method":"fp8",)"
             R"("weight_block_size":[128,128]}})";
  return l;
}

inline Layout gpt_oss_20b()
{
  Layout l;
  const U h = 2880, e = 32, inter = 2880;
  for (U i = 0; i < 24; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) {
      const U out = std::string(proj) == "q_proj" ? 64 * 64 : 8 * 64;
      l.tensors.push_back({p + "self_attn." + proj + ".weight", "BF16", {out, h}});
      l.tensors.push_back({p + "self_attn." + proj + ".bias", "BF16", {out}});
    }
    l.tensors.push_back({p + "self_attn.o_proj.weight", "BF16", {h, 64 * 64}});
    l.tensors.push_back({p + "self_attn.o_proj.bias", "BF16", {h}});
    l.tensors.push_back({p + "self_attn.sinks", "BF16", {64}});
    l.tensors.push_back({p + "mlp.router.weight", "BF16", {e, h}});
    l.tensors.push_back({p + "mlp.router.bias", "BF16", {e}});
    l.tensors.push_back({p + "mlp.experts.gate_up_proj_blocks", "U8", {e, 2 * inter, h / 32, 16}});
    l.tensors.push_back({p + "mlp.experts.gate_up_proj_scales", "U8", {e, 2 * inter, h / 32}});
    l.tensors.push_back({p + "mlp.experts.gate_up_proj_bias", "BF16", {e, 2 * inter}});
    l.tensors.push_back({p + "mlp.experts.down_proj_blocks", "U8", {e, h, inter / 32, 16}});
    l.tensors.push_back({p + "mlp.experts.down_proj_scales", "U8", {e, h, inter / 32}});
    l.tensors.push_back({p + "mlp.experts.down_proj_bias", "BF16", {e, h}});
    l.tensors.push_back({p + "input_layernorm.weight", "BF16", {h}});
    l.tensors.push_back({p + "post_attention_layernorm.weight", "BF16", {h}});
  }
  l.tensors.push_back({"model.embed_tokens.weight", "BF16", {201088, h}});
  l.tensors.push_back({"model.norm.weight", "BF16", {h}});
  l.tensors.push_back({"lm_head.weight", "BF16", {201088, h}});
  l.params = 20'914'757'184;
  return l;  // config: tests/data/models/gpt-oss-20b.json
}

inline Layout llama3_8b_bnb_nf4()
{
  Layout l;
  decoder(l.tensors, "model.", k_llama31_8b, "BF16", [&](const std::string& n, U in, U out) {
    const U w = in * out;
    l.tensors.push_back({n + ".weight", "U8", {w / 2, 1}});
    l.tensors.push_back({n + ".weight.absmax", "U8", {w / 64}});
    l.tensors.push_back({n + ".weight.nested_absmax", "F32", {(w / 64 + 255) / 256}});
    l.tensors.push_back({n + ".weight.nested_quant_map", "F32", {256}});
    l.tensors.push_back({n + ".weight.quant_map", "F32", {16}});
    l.tensors.push_back({n + ".weight.quant_state.bitsandbytes__nf4", "U8", {137}});
  });
  l.tensors.push_back({"lm_head.weight", "BF16", {k_llama31_8b.vocab, k_llama31_8b.hidden}});
  l.params = k_llama31_8b_params;
  l.config = llama_config(k_llama31_8b, R"(,"quantization_config":{"_load_in_4bit":true,"bnb_4bit_quant_type":"nf4",)"
                                        R"("bnb_4bit_use_double_quant":true,"load_in_4bit":true,)"
                                        R"("quant_method":"bitsandbytes"})");
  return l;
}

// mistral3: a Mistral Small text decoder under language_model., a Pixtral vision tower, a projector.
inline Layout mistral_small_31_vision()
{
  Layout l;
  const Dims text{40, 5120, 32768, 32, 8, 128, 131072};
  decoder(l.tensors, "language_model.model.", text, "BF16", [&](const std::string& n, U in, U out) {
    l.tensors.push_back({n + ".weight", "BF16", {out, in}});
  });
  l.tensors.push_back({"language_model.lm_head.weight", "BF16", {text.vocab, text.hidden}});
  const U vh = 1024, vi = 4096;
  U vision = 0;
  const auto add = [&](std::string n, std::vector<U> shape) {
    vision += elements(shape);
    l.tensors.push_back({std::move(n), "BF16", std::move(shape)});
  };
  add("vision_tower.patch_conv.weight", {vh, 3, 14, 14});
  add("vision_tower.ln_pre.weight", {vh});
  for (U i = 0; i < 24; ++i) {
    const std::string p = "vision_tower.transformer.layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      add(p + "attention." + proj + ".weight", {vh, vh});
    }
    add(p + "feed_forward.gate_proj.weight", {vi, vh});
    add(p + "feed_forward.up_proj.weight", {vi, vh});
    add(p + "feed_forward.down_proj.weight", {vh, vi});
    add(p + "attention_norm.weight", {vh});
    add(p + "ffn_norm.weight", {vh});
  }
  add("multi_modal_projector.norm.weight", {vh});
  add("multi_modal_projector.patch_merger.merging_layer.weight", {vh, vh * 4});
  add("multi_modal_projector.linear_1.weight", {text.hidden, vh});
  add("multi_modal_projector.linear_2.weight", {text.hidden, text.hidden});
  l.outside_text_params = vision;
  l.params = 23'572'403'200 + vision;
  l.config = R"({"architectures":["Mistral3ForConditionalGeneration"],"model_type":"mistral3",)"
             R"("text_config":{"model_type":"mistral","hidden_size":5120,"intermediate_size":32768,"num_hidden_layers":40,)"
             R"("num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"max_position_embeddings":131072,)"
             R"("vocab_size":131072,"sliding_window":null,"torch_dtype":"bfloat16"},)"
             R"("vision_config":{"model_type":"pixtral","hidden_size":1024,"num_hidden_layers":24},)"
             R"("torch_dtype":"bfloat16"})";
  return l;
}

// llama.cpp quantize's use_more_bits (src/llama-quant.cpp).
inline bool use_more_bits(U i, U n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// The tensors of a llama-architecture Q4_K_M file, typed as llama_tensor_get_type types them.
inline std::vector<GgTensor> llama_q4_k_m_tensors(const Dims& d, U experts)
{
  std::vector<GgTensor> t;
  t.push_back({"token_embd.weight", "Q4_K", {d.hidden, d.vocab}});
  if (experts == 0) {
    t.push_back({"rope_freqs.weight", "F32", {d.head_dim / 2}});
  }
  for (U i = 0; i < d.layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    t.push_back({p + "attn_norm.weight", "F32", {d.hidden}});
    if (experts > 0) {
      t.push_back({p + "ffn_gate_inp.weight", "F32", {d.hidden, experts}});
      t.push_back({p + "ffn_down_exps.weight", use_more_bits(i, d.layers) ? "Q6_K" : "Q4_K", {d.inter, d.hidden, experts}});
      t.push_back({p + "ffn_gate_exps.weight", "Q4_K", {d.hidden, d.inter, experts}});
      t.push_back({p + "ffn_up_exps.weight", "Q4_K", {d.hidden, d.inter, experts}});
    } else {
      t.push_back({p + "ffn_down.weight", use_more_bits(i, d.layers) ? "Q6_K" : "Q4_K", {d.inter, d.hidden}});
      t.push_back({p + "ffn_gate.weight", "Q4_K", {d.hidden, d.inter}});
      t.push_back({p + "ffn_up.weight", "Q4_K", {d.hidden, d.inter}});
    }
    t.push_back({p + "ffn_norm.weight", "F32", {d.hidden}});
    // The 8-expert model bumps attn_k and attn_v to Q8_0 and attn_output to Q5_K.
    t.push_back({p + "attn_k.weight", experts == 8 ? "Q8_0" : "Q4_K", {d.hidden, d.kv * d.head_dim}});
    t.push_back({p + "attn_output.weight", experts == 8 ? "Q5_K" : "Q4_K", {d.heads * d.head_dim, d.hidden}});
    t.push_back({p + "attn_q.weight", "Q4_K", {d.hidden, d.heads * d.head_dim}});
    t.push_back({p + "attn_v.weight", experts == 8 ? "Q8_0" : use_more_bits(i, d.layers) ? "Q6_K" : "Q4_K",
                 {d.hidden, d.kv * d.head_dim}});
  }
  t.push_back({"output_norm.weight", "F32", {d.hidden}});
  t.push_back({"output.weight", "Q6_K", {d.hidden, d.vocab}});
  return t;
}

inline std::vector<GgufKv> llama_gguf_metadata(const Dims& d, U experts, U vocab_strings, std::string name)
{
  std::vector<GgufKv> kv{
      {"general.architecture", gv_str("llama")},
      {"general.name", gv_str(std::move(name))},
      {"general.file_type", gv_u32(15)},  // MOSTLY_Q4_K_M
      {"llama.block_count", gv_u32(static_cast<std::uint32_t>(d.layers))},
      {"llama.context_length", gv_u32(experts > 0 ? 32768 : 131072)},
      {"llama.embedding_length", gv_u32(static_cast<std::uint32_t>(d.hidden))},
      {"llama.feed_forward_length", gv_u32(static_cast<std::uint32_t>(d.inter))},
      {"llama.attention.head_count", gv_u32(static_cast<std::uint32_t>(d.heads))},
      {"llama.attention.head_count_kv", gv_u32(static_cast<std::uint32_t>(d.kv))},
      {"llama.rope.freq_base", gv_f32(500000.0F)},
      {"llama.attention.layer_norm_rms_epsilon", gv_f32(1e-5F)},
      {"llama.rope.dimension_count", gv_u32(static_cast<std::uint32_t>(d.head_dim))},
      {"general.quantization_version", gv_u32(2)},
      {"tokenizer.ggml.model", gv_str("gpt2")},
  };
  if (experts > 0) {
    kv.push_back({"llama.expert_count", gv_u32(static_cast<std::uint32_t>(experts))});
    kv.push_back({"llama.expert_used_count", gv_u32(2)});
  }
  if (vocab_strings > 0) {
    std::vector<std::string> tokens;
    std::vector<std::int32_t> types;
    for (U i = 0; i < vocab_strings; ++i) {
      tokens.push_back("tok" + std::to_string(i));
      types.push_back(1);
    }
    kv.push_back({"tokenizer.ggml.tokens", gv_strs(std::move(tokens))});
    kv.push_back({"tokenizer.ggml.token_type", gv_i32s(types)});
  } else {
    kv.push_back({"llama.vocab_size", gv_u32(static_cast<std::uint32_t>(d.vocab))});
  }
  return kv;
}

// Meta-Llama-3.1-8B Q4_K_M: 4,912,898,304 bytes of tensors, 4.8944 bits per weight (the llama.cpp
// quantize README's table).
inline GgufHeader llama31_8b_q4_k_m(bool tokenizer)
{
  return gguf_header(llama_gguf_metadata(k_llama31_8b, 0, tokenizer ? k_llama31_8b.vocab : 0, "Meta Llama 3.1 8B Instruct"),
                     llama_q4_k_m_tensors(k_llama31_8b, 0));
}
constexpr U k_llama31_8b_q4_k_m_bytes = 4'912'898'304;

constexpr Dims k_mixtral_8x7b{32, 4096, 14336, 32, 8, 128, 32000};
inline GgufHeader mixtral_8x7b_q4_k_m()
{
  return gguf_header(llama_gguf_metadata(k_mixtral_8x7b, 8, 0, "Mixtral 8x7B Instruct v0.1"),
                     llama_q4_k_m_tensors(k_mixtral_8x7b, 8));
}

}  // namespace gpurent::test
