// SPDX-License-Identifier: MIT
// The engines' hardware rules (docs/hardware.md has each with its source). Where a rule changed
// between releases, the current release's behaviour is the rule; docs/hardware.md says which.
#include "sizing/hardware_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sizing/checkpoint_format.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

std::string cc_text(std::uint32_t cc) { return fmt::format("{}.{}", cc / 10, cc % 10); }

// Collects the rules that apply; the verdict is the worst status among them.
class Verdict {
public:
  // Rules are joined as sentences; a "; " inside one becomes ", " (an error message's hint starts
  // at its first "; ", cli/errors.cpp).
  void add(RunStatus s, std::string why)
  {
    m_runs.status = std::max(m_runs.status, s, [](RunStatus a, RunStatus b) { return run_rank(a) < run_rank(b); });
    for (auto at = why.find("; "); at != std::string::npos; at = why.find("; ", at)) {
      why[at] = ',';
    }
    m_runs.why += (m_runs.why.empty() ? "" : ". ") + why;
  }
  void flag(std::string_view engine, std::string_view flags)
  {
    auto& f = m_runs.flags[std::string(engine)];
    f += (f.empty() ? "" : " ") + std::string(flags);
  }
  [[nodiscard]] RunStatus status() const { return m_runs.status; }
  [[nodiscard]] RunVerdict done(std::string_view native_why)
  {
    if (m_runs.why.empty()) {
      m_runs.why = std::string(native_why);
    }
    return std::move(m_runs);
  }

private:
  RunVerdict m_runs;
};

// Models whose config refuses fp16 in vLLM (`_resolve_auto_dtype`: gemma2, gemma3, glm4, plamo2):
// on a card without bf16 they run in fp32.
bool refuses_fp16(const ModelArch& m)
{
  static constexpr std::array<std::string_view, 5> k_families{"gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"};
  return std::find(k_families.begin(), k_families.end(), m.family) != k_families.end();
}

bool moe(const JobSpec& j) { return j.model.experts > 0; }

// bf16 needs CC 8.0. Serving engines run fp16 instead (or fp32 for models that refuse fp16).
void sixteen_bit_serving(JobSpec& j, std::uint32_t cc, Verdict& v, std::string_view engine, std::string_view dtype_flag)
{
  if (cc >= 80 || j.weights == WeightFormat::fp16 || j.weights == WeightFormat::fp32) {
    return;
  }
  if (j.weights != WeightFormat::bf16) {
    // Quantized weights compute in the checkpoint's 16-bit dtype (bf16 for most): the line names
    // float16, as for a 16-bit checkpoint (docs/hardware.md "vLLM bf16 on Turing").
    if (!refuses_fp16(j.model) && v.status() != RunStatus::refused) {
      // The quantized kernels run fp16 activations natively (AWQ has no other): the status stays
      // what the format's own rule says, the line names the dtype.
      j.fp16_compute = true;
      v.add(RunStatus::native, fmt::format("no bf16 on CC {} (needs 8.0): {} computes in fp16 around the {} weights "
                                             "(platforms/cuda.py supported_dtypes)",
                                             cc_text(cc), engine, to_string(j.weights)));
      v.flag(engine, fmt::format("{} float16", dtype_flag));
    }
    return;
  }
  if (refuses_fp16(j.model)) {
    j.weights = WeightFormat::fp32;
    v.add(RunStatus::fallback, fmt::format("{} has no bf16 on CC {} and {} refuses fp16, so it runs in fp32: 4 bytes "
                                           "per parameter (vLLM config _resolve_auto_dtype, vllm#1157)",
                                           engine, cc_text(cc), j.model.family));
    v.flag(engine, fmt::format("{} float32", dtype_flag));
    return;
  }
  j.weights = WeightFormat::fp16;
  v.add(RunStatus::fallback, fmt::format("no bf16 on CC {} (needs 8.0): {} runs fp16 instead (platforms/cuda.py "
                                         "supported_dtypes)",
                                         cc_text(cc), engine));
  v.flag(engine, fmt::format("{} float16", dtype_flag));
}

void fp8_kv(JobSpec& j, std::uint32_t cc, Verdict& v, std::string_view engine)
{
  if (cc >= 89 || resolve_kv_dtype(j) != KvDtype::fp8) {
    return;
  }
  j.kv_fp8_e5m2 = true;
  v.add(RunStatus::fallback, fmt::format("an FP8 (e4m3) KV cache needs CC 8.9 in {}'s attention kernels; on CC {} the "
                                         "cache is kept as fp8_e5m2 (same size) (vllm PR #35720, #50882)",
                                         engine, cc_text(cc)));
  v.flag(engine, "--kv-cache-dtype fp8_e5m2");
}

// The serving engines' dtype rules (bf16, FP8 KV) after their format rules, and the verdict.
RunVerdict serving_dtypes(JobSpec& j, std::uint32_t cc, Verdict& v, std::string_view key, std::string_view name)
{
  sixteen_bit_serving(j, cc, v, key, "--dtype");
  fp8_kv(j, cc, v, key);
  return v.done(fmt::format("{} runs {} natively on CC {}", name, to_string(j.weights), cc_text(cc)));
}

// Blackwell: sm_100 (B200) and sm_120 (RTX 5090, RTX PRO 6000) have FP4 tensor cores.
bool blackwell(std::uint32_t cc) { return cc == 100 || cc >= 120; }

RunVerdict vllm_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  if (cc < 75) {
    v.add(RunStatus::refused, fmt::format("vLLM needs compute capability 7.5 or newer (its GPU install page); this card "
                                          "is {}",
                                          cc_text(cc)));
    return v.done("");
  }
  switch (j.weights) {
  case WeightFormat::fp8:
    if (cc >= 89) {
      break;
    }
    if (moe(j)) {
      j.moe_marlin = true;
      v.add(RunStatus::fallback, fmt::format("vLLM's FP8 MoE kernels need CC 8.9; on CC {} its automatic choice fails "
                                             "(\"fp8e4nv not supported\"), --moe-backend marlin runs the experts "
                                             "weight-only: FP8 memory, 16-bit speed (vllm#17581, #54318)",
                                             cc_text(cc)));
      v.flag("vllm", "--moe-backend marlin");
    } else {
      v.add(RunStatus::fallback, fmt::format("FP8 math needs CC 8.9; on CC {} vLLM runs the FP8 weights weight-only "
                                             "through Marlin: FP8 memory, 16-bit speed (fp8.py, docs llm_compressor/fp8)",
                                             cc_text(cc)));
    }
    break;
  case WeightFormat::mxfp4:
    if (cc < 80) {
      v.add(RunStatus::refused, fmt::format("vLLM's MXFP4 kernels need CC 8.0 (\"Turing does not support Marlin MXFP4\", "
                                            "mxfp4.py); this card is {}",
                                            cc_text(cc)));
    }
    break;
  case WeightFormat::nvfp4:
    if (!blackwell(cc)) {
      v.add(RunStatus::fallback, fmt::format("NVFP4 math needs Blackwell (CC 10.0/12.0); on CC {} vLLM runs it "
                                             "weight-only through Marlin W4A16: 4-bit memory, 16-bit speed (modelopt.py)",
                                             cc_text(cc)));
    }
    break;
  default: break;
  }
  return serving_dtypes(j, cc, v, "vllm", "vLLM");
}

RunVerdict sglang_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  if (is_gguf(j.weights)) {
    v.add(RunStatus::refused, "SGLang does not load GGUF files: use --engine llama.cpp, ollama or vllm");
    return v.done("");
  }
  if (cc < 75) {
    v.add(RunStatus::refused, fmt::format("SGLang's lowest attention backend (Triton) targets CC 7.5 (sglang#5064); "
                                          "this card is {}",
                                          cc_text(cc)));
    return v.done("");
  }
  switch (j.weights) {
  case WeightFormat::fp8:
    if (cc >= 89) {
      break;
    }
    if (moe(j)) {
      v.add(RunStatus::refused, fmt::format("SGLang's FP8 MoE kernels need CC 8.9 (\"fp8e4nv not supported\" on CC {}; "
                                            "no Marlin MoE path: sglang#5871, PR #9754)",
                                            cc_text(cc)));
    } else if (cc >= 80) {
      v.add(RunStatus::fallback, fmt::format("FP8 math needs CC 8.9; on CC {} SGLang runs FP8 weights weight-only through "
                                             "Marlin: FP8 memory, 16-bit speed",
                                             cc_text(cc)));
    } else {
      v.add(RunStatus::refused, fmt::format("SGLang's FP8 paths need CC 8.0 (Marlin) or 8.9; this card is {}", cc_text(cc)));
    }
    break;
  case WeightFormat::mxfp4:
    if (cc == 120) {
      v.add(RunStatus::fallback, "SGLang's MXFP4 MoE on sm_120 had open failures (sglang#9707, #13061): prefer vLLM or "
                                 "a Hopper/B200 card");
    } else if (cc < 80) {
      v.add(RunStatus::refused, fmt::format("SGLang's MXFP4 needs CC 8.0 (mxfp4.py Mxfp4Config.get_min_capability, its "
                                            "Triton MoE kernels); this card is {}",
                                            cc_text(cc)));
    }
    break;
  case WeightFormat::nvfp4:
    if (!blackwell(cc)) {
      v.add(RunStatus::refused, fmt::format("SGLang runs NVFP4 (ModelOpt FP4) only on Blackwell (CC 10.0/12.0); this card "
                                            "is {}",
                                            cc_text(cc)));
    }
    break;
  default: break;
  }
  return serving_dtypes(j, cc, v, "sglang", "SGLang");
}

// TensorRT-LLM's PyTorch backend (trtllm-serve; tests/data/trtllm/support.md): Ampere and newer,
// FP8 from Ada (SM89), NVFP4 on Blackwell, MXFP4 (gpt-oss) weight-only on Hopper and natively on
// Blackwell; Hugging Face checkpoints (ModelOpt, fp8, mxfp4, nvfp4, compressed-tensors
// quantization configs), no GGUF, no AutoAWQ/AutoGPTQ or bitsandbytes checkpoints.
RunVerdict trtllm_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  if (is_gguf(j.weights)) {
    v.add(RunStatus::refused, "TensorRT-LLM loads Hugging Face checkpoints (.safetensors/.bin/.pth, "
                              "checkpoint-loading.md), not GGUF files: use --engine llama.cpp, ollama or vllm");
    return v.done("");
  }
  if (cc < 80) {
    v.add(RunStatus::refused, fmt::format("TensorRT-LLM's support matrix starts at Ampere (SM80): \"If a GPU "
                                          "architecture is not listed, the TensorRT-LLM team does not develop or test "
                                          "the software on the architecture\" (support-matrix.md); this card is CC {}",
                                          cc_text(cc)));
    return v.done("");
  }
  switch (j.weights) {
  case WeightFormat::fp8:
    if (cc < 89) {
      v.add(RunStatus::refused, fmt::format("TensorRT-LLM runs FP8 from Ada (SM89): its quantization matrix has no FP8 "
                                            "on Ampere (quantization.md \"Hardware Support Matrix\"); this card is CC {}",
                                            cc_text(cc)));
    } else if (j.model.quant_block_n > 0 && native_weights(j) && cc != 90 && (cc < 100 || cc >= 110)) {
      // A block-scaled FP8 checkpoint (DeepSeek, Qwen3 FP8): its matrix has FP8 block GEMMs on
      // Hopper and SM100 only; Ada and sm_120 run per-tensor FP8.
      v.add(RunStatus::refused, fmt::format("TensorRT-LLM runs block-scaled FP8 checkpoints on Hopper and B200 (SM90, "
                                            "SM100) only: its quantization matrix has FP8 block scaling there and "
                                            "per-tensor FP8 on Ada and sm_120; this card is CC {}",
                                            cc_text(cc)));
    }
    break;
  case WeightFormat::nvfp4:
    if (!blackwell(cc)) {
      v.add(RunStatus::refused, fmt::format("TensorRT-LLM runs NVFP4 only on Blackwell (SM100/SM120, quantization.md); "
                                            "this card is CC {}",
                                            cc_text(cc)));
    }
    break;
  case WeightFormat::mxfp4:
    if (cc < 90) {
      v.add(RunStatus::refused, fmt::format("TensorRT-LLM runs MXFP4 on Blackwell and, weight-only (W4A16_MXFP4), on "
                                            "Hopper; its quantization matrix has no MXFP4 on Ada or Ampere "
                                            "(quantization.md, model_config.py); this card is CC {}",
                                            cc_text(cc)));
    } else if (!blackwell(cc)) {
      v.add(RunStatus::native, "TensorRT-LLM runs MXFP4 on Hopper weight-only (W4A16_MXFP4, its Triton MoE backend: "
                               "model_config.py)");
    }
    break;
  case WeightFormat::awq:
  case WeightFormat::gptq:
    v.add(RunStatus::refused, fmt::format("TensorRT-LLM's Hugging Face loader reads ModelOpt, fp8, mxfp4, nvfp4 and "
                                          "compressed-tensors quantization configs, no {} (model_config.py "
                                          "load_hf_quant_config); quantize with TensorRT Model Optimizer (W4A16 AWQ) "
                                          "or serve this checkpoint with --engine vllm",
                                          to_string(j.weights)));
    break;
  case WeightFormat::int8:
  case WeightFormat::int4:
  case WeightFormat::nf4:
    v.add(RunStatus::refused, fmt::format("TensorRT-LLM's PyTorch backend has no {} path (bitsandbytes, or "
                                          "SmoothQuant, which only its TensorRT-engine backend builds): use --weights "
                                          "fp8 on CC 8.9 and newer, or --engine vllm",
                                          to_string(j.weights)));
    break;
  default: break;
  }
  if (j.kv_cache == KvDtype::fp32 || j.kv_cache == KvDtype::q8_0 || j.kv_cache == KvDtype::q4_0) {
    v.add(RunStatus::refused, fmt::format("trtllm-serve's --kv_cache_dtype takes auto, fp8 or nvfp4, not {}",
                                          to_string(j.kv_cache)));
  }
  return v.done(fmt::format("TensorRT-LLM runs {} natively on CC {}", to_string(j.weights), cc_text(cc)));
}

// PyTorch's own wheels: 2.11 dropped sm_70 from every CUDA build and CUDA 13 (cu130) from the start;
// torch 2.10 with a cu128 (or cu126) wheel is the last to run on Volta. Not the default install, so a
// fallback; the launch lines do not pin torch, the reason says which to install.
void volta_torch(Verdict& v, std::uint32_t cc)
{
  if (cc >= 75) {
    return;
  }
  v.add(RunStatus::fallback, fmt::format("PyTorch 2.11 and newer and every cu130 wheel carry no kernels for CC {} (\"no "
                                         "kernel image is available for execution on the device\"): install torch 2.10 or "
                                         "older from the cu128 or cu126 index (unsloth PR #5876, FreeToken PR #253)",
                                         cc_text(cc)));
}

// transformers generate(): the quantizers' own checks.
RunVerdict transformers_infer_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  if (j.weights == WeightFormat::fp8 && cc < 89) {
    j.weights = WeightFormat::bf16;
    v.add(RunStatus::fallback, fmt::format("transformers' fine-grained FP8 needs CC 8.9; on CC {} transformers 5 "
                                           "dequantizes the checkpoint to bf16 (4.x refused it): sized at 2 bytes per "
                                           "parameter (quantizer_finegrained_fp8.py)",
                                           cc_text(cc)));
  } else if (j.weights == WeightFormat::mxfp4 && cc < 75) {
    j.weights = WeightFormat::bf16;
    v.add(RunStatus::fallback, fmt::format("transformers' MXFP4 kernels need CC 7.5; on CC {} it dequantizes to bf16",
                                           cc_text(cc)));
  } else if (j.weights == WeightFormat::nvfp4) {
    j.weights = WeightFormat::bf16;
    v.add(RunStatus::fallback, "transformers has no NVFP4 kernels: the checkpoint is decompressed to bf16 "
                               "(compressed-tensors); serve it with vLLM for 4-bit memory");
  }
  if (cc < 80 && j.weights == WeightFormat::bf16) {
    j.weights = WeightFormat::fp16;
    v.add(RunStatus::fallback, fmt::format("no bf16 on CC {} (needs 8.0): torch_dtype float16", cc_text(cc)));
    v.flag("transformers", "torch_dtype=torch.float16");
  } else if (cc < 80 && (j.weights == WeightFormat::int8 || j.weights == WeightFormat::int4 || j.weights == WeightFormat::nf4)) {
    j.fp16_compute = true;  // bitsandbytes computes in the torch_dtype the snippet names
    v.add(RunStatus::fallback, fmt::format("no bf16 on CC {} (needs 8.0): torch_dtype float16 around the {} weights",
                                           cc_text(cc), to_string(j.weights)));
    v.flag("transformers", "torch_dtype=torch.float16");
  }
  volta_torch(v, cc);
  return v.done(fmt::format("transformers runs {} natively on CC {}", to_string(j.weights), cc_text(cc)));
}

RunVerdict training_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  const std::string key{to_string(j.engine)};
  if (cc < 80) {
    if (j.engine == Engine::torchtune) {
      // torchtune refuses fp16 ("full fp16 training is not supported"): fp32, twice the memory.
      if (j.weights == WeightFormat::bf16) {
        j.weights = WeightFormat::fp32;
      }
      v.add(RunStatus::fallback, fmt::format("no bf16 on CC {} and torchtune refuses fp16 training: dtype=fp32, twice "
                                             "the memory and several times slower (torchtune training.get_dtype)",
                                             cc_text(cc)));
      v.flag(key, "dtype=fp32");
    } else {
      j.fp16_compute = true;
      v.add(RunStatus::fallback, fmt::format("no bf16 on CC {} (needs 8.0): the Trainer's --bf16 either refuses or "
                                             "emulates it slowly, so the line trains with --fp16 (mixed precision, loss "
                                             "scaling) and SDPA attention instead of FlashAttention-2",
                                             cc_text(cc)));
      v.flag(key, "--fp16 true");
    }
  }
  volta_torch(v, cc);
  return v.done(cc >= 100 ? fmt::format("{} trains natively on CC {} with CUDA 12.8+ software (PyTorch 2.7+ cu128 "
                                        "wheels; cu126 builds stop at sm_90)",
                                        key, cc_text(cc))
                          : fmt::format("{} trains natively on CC {}", key, cc_text(cc)));
}

// Unsloth (docs/hardware.md "Unsloth"): CUDA capability 7.0 or newer (its requirements page);
// FastLanguageModel's dtype=None picks float16 where the card has no bf16, which its T4 notebooks
// run. The GPUs and servers it trains on: planner check_engine_scale.
RunVerdict unsloth_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  const std::uint32_t release = j.engine_version == 0 ? k_unsloth_current_release : j.engine_version;
  if (cc < 70) {
    v.add(RunStatus::refused, fmt::format("Unsloth needs CUDA capability 7.0 or newer (its requirements page); this "
                                          "card is {}",
                                          cc_text(cc)));
  } else if (cc < 80) {
    j.fp16_compute = true;
    v.flag("unsloth", "fp16=True");
  }
  volta_torch(v, cc);
  return v.done(cc < 80 ? fmt::format("Unsloth trains natively on CC {} in float16 (no bf16 below 8.0: "
                                      "FastLanguageModel's dtype=None picks float16, as its T4 notebooks run)",
                                      cc_text(cc))
                        : fmt::format("Unsloth {} trains natively on CC {}", engine_release_text(release), cc_text(cc)));
}

// llama.cpp and ollama: the default CUDA build covers every card from CC 5.0 (llama.cpp's CUDA 12
// builds; CUDA 13 starts at 7.5).
RunVerdict gguf_rules(JobSpec& j, std::uint32_t cc)
{
  Verdict v;
  const std::string key{to_string(j.engine)};
  if (cc < 50) {
    v.add(RunStatus::refused, fmt::format("{} needs CC 5.0 or newer; this card is {}", key, cc_text(cc)));
  }
  const KvDtype kv = resolve_kv_dtype(j);
  if ((kv == KvDtype::q8_0 || kv == KvDtype::q4_0) && !j.flash_attention) {
    j.flash_attention = true;  // "quantized V cache was requested, but this requires Flash Attention"
  }
  if (j.engine == Engine::llama_cpp && cc < 75) {
    // CUDA 13 compiles nothing below sm_75; llama.cpp's CUDA 12 builds carry PTX for 5.0, 6.1 and 7.0.
    return v.done(fmt::format("{} runs {} on CC {} from a CUDA 12 build (PTX for 5.0, 6.1 and 7.0), not a CUDA 13 build "
                              "(CUDA 13 starts at CC 7.5)",
                              key, to_string(j.weights), cc_text(cc)));
  }
  return v.done(fmt::format("{} runs {} on CC {} (its CUDA build covers CC 5.0 and newer)", key, to_string(j.weights),
                            cc_text(cc)));
}

}  // namespace

std::string_view to_string(RunStatus s) noexcept
{
  switch (s) {
  case RunStatus::native: return "native";
  case RunStatus::fallback: return "fallback";
  case RunStatus::unknown: return "unknown";
  case RunStatus::refused: return "refused";
  }
  return "unknown";
}

CardRun run_on_card(const JobSpec& job, std::optional<std::uint32_t> cc)
{
  CardRun out{job, {}};
  if (!cc) {
    out.runs.status = RunStatus::unknown;
    out.runs.why = "the card's compute capability is unknown (add compute_capability to its [cards.<id>] table): "
                   "gpurent cannot say whether the engine's kernels run there";
    return out;
  }
  JobSpec& j = out.job;
  if (is_training(j.task)) {
    out.runs = j.engine == Engine::unsloth ? unsloth_rules(j, *cc) : training_rules(j, *cc);
    return out;
  }
  switch (j.engine) {
  case Engine::vllm: out.runs = vllm_rules(j, *cc); break;
  case Engine::sglang: out.runs = sglang_rules(j, *cc); break;
  case Engine::tensorrt_llm: out.runs = trtllm_rules(j, *cc); break;
  case Engine::llama_cpp:
  case Engine::ollama: out.runs = gguf_rules(j, *cc); break;
  default: out.runs = transformers_infer_rules(j, *cc); break;
  }
  return out;
}

}  // namespace gpurent
