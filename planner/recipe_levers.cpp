// SPDX-License-Identifier: MIT
// The recipe's discrete levers and the changes it reports (docs/sizing.md "Recipe").
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sizing/estimate.hpp"
#include "planner/fixes_detail.hpp"
#include "sizing/precision.hpp"
#include "planner/recipe_detail.hpp"

namespace gpurent::recipe_detail {
namespace {

// Smaller weight formats the engine can load from the same checkpoint, with their points.
std::vector<std::pair<WeightFormat, std::uint32_t>> weight_ladder(const JobSpec& job)
{
  std::vector<std::pair<WeightFormat, std::uint32_t>> ladder;
  if (!requantizable(job)) {
    return ladder;
  }
  switch (job.engine) {
  case Engine::vllm: ladder = {{WeightFormat::fp8, 2}, {WeightFormat::nf4, 4}}; break;
  case Engine::tensorrt_llm: return ladder;  // it quantizes nothing on load: a pre-quantized checkpoint is another model
  case Engine::llama_cpp:
  case Engine::ollama:
    ladder = {{WeightFormat::gguf_q8_0, 1},   {WeightFormat::gguf_q6_k, 2},   {WeightFormat::gguf_q5_k_m, 2},
              {WeightFormat::gguf_q4_k_m, 3}, {WeightFormat::gguf_q3_k_m, 5}, {WeightFormat::gguf_q2_k, 7},
              {WeightFormat::gguf_iq2_xxs, 8}};
    break;
  default: ladder = {{WeightFormat::int8, 2}, {WeightFormat::nf4, 4}}; break;
  }
  const Bytes now = weight_split(job, ParamBreakdown{}).total;
  std::erase_if(ladder, [&](const auto& step) {
    JobSpec t = job;
    t.weights = step.first;
    return !(weight_split(t, ParamBreakdown{}).total < now);
  });
  return ladder;
}

std::uint32_t gpu_points(std::uint32_t from, std::uint32_t to)
{
  std::uint32_t points = 0;
  for (std::uint64_t n = std::max<std::uint32_t>(from, 1); n < to; n *= 2) {
    points += 2;
  }
  return points;
}

bool quantized_base(WeightFormat w)
{
  return w == WeightFormat::nf4 || w == WeightFormat::int4 || w == WeightFormat::gptq || w == WeightFormat::awq;
}

std::string method_label(const JobSpec& j)
{
  if (j.task == Task::train) {
    return fmt::format("full fine-tuning {}", to_string(j.weights));
  }
  return fmt::format("{} {}", to_string(j.task), to_string(j.weights));
}

std::string gpus_label(const JobSpec& j)
{
  if (j.gpus <= 1) {
    return "1 GPU";
  }
  if (j.pipeline > 1) {
    return fmt::format("{} GPUs (tensor parallel {} x pipeline {})", j.gpus, tp_degree(j), j.pipeline);
  }
  return fmt::format("{} GPUs ({})", j.gpus, to_string(j.shard));
}

}  // namespace

std::vector<Choice> choices(const JobSpec& job, std::span<const std::uint32_t> gpu_counts)
{
  struct Method {
    Task task;
    WeightFormat weights;
    std::uint32_t points;
  };
  std::vector<Method> methods{{job.task, job.weights, 0}};
  std::vector<std::pair<WeightFormat, std::uint32_t>> formats{{job.weights, 0}};
  std::vector<std::pair<KvDtype, std::uint32_t>> kvs{{job.kv_cache, 0}};
  std::vector<std::pair<bool, std::uint32_t>> checkpointing{{job.grad_checkpointing, 0}};
  std::vector<std::pair<Optimizer, std::uint32_t>> optimizers{{job.optimizer, 0}};
  std::vector<std::pair<bool, std::uint32_t>> offloads{{false, 0}};
  std::vector<std::pair<bool, std::uint32_t>> embeddings{{job.embeddings_16bit, 0}};
  std::vector<std::pair<bool, std::uint32_t>> act_offloads{{job.activation_offload, 0}};
  const WeightFormat qbase = quantized_base(job.weights) ? job.weights : WeightFormat::nf4;
  if (is_training(job.task)) {
    if (job.task == Task::train) {
      methods.push_back({Task::lora, job.weights, 4});
      methods.push_back({Task::qlora, qbase, 7});
    } else if (job.task == Task::lora) {
      methods.push_back({Task::qlora, qbase, 3});
    }
    if (job.optimizer != Optimizer::adamw_8bit) {
      optimizers.emplace_back(Optimizer::adamw_8bit, 2);
    }
    if (!job.grad_checkpointing) {
      checkpointing.emplace_back(true, 1);
    }
    if (!job.embeddings_16bit && (job.engine == Engine::transformers || job.engine == Engine::deepspeed)) {
      embeddings.emplace_back(true, 1);
    }
    // Unsloth offloads the checkpointed activations itself and its script has no CPU offload of
    // optimizer states: neither lever exists there.
    if (!job.activation_offload && job.engine != Engine::unsloth) {
      act_offloads.emplace_back(true, 3);
    }
    if (job.engine != Engine::unsloth) {
      offloads.emplace_back(true, 8);
    }
  } else {
    for (const auto& step : weight_ladder(job)) {
      formats.push_back(step);
    }
    const KvDtype now = resolve_kv_dtype(job);
    const KvDtype eight = job.engine == Engine::vllm || job.engine == Engine::tensorrt_llm ? KvDtype::fp8 : KvDtype::q8_0;
    if (job.engine != Engine::transformers && kv_bytes_per_32(now) > kv_bytes_per_32(eight)) {
      kvs.emplace_back(eight, 1);
    }
  }
  std::vector<std::uint32_t> counts;
  for (const std::uint32_t g : gpu_counts) {
    if (g > job.gpus) {
      counts.push_back(g);
    }
  }
  counts.push_back(std::max<std::uint32_t>(job.gpus, 1));
  std::vector<Choice> out;
  for (const Method& m : methods) {
    for (const auto& [w, wp] : formats) {
      for (const auto& [kv, kp] : kvs) {
        for (const auto& [gc, gp] : checkpointing) {
          for (const auto& [opt, op] : optimizers) {
            for (const auto& [off, fp] : offloads) {
              for (const auto& [emb, ep] : embeddings) {
                if (ep > 0 && m.task != Task::qlora) {
                  continue;  // only QLoRA leaves 16-bit parameters in fp32
                }
                for (const auto& [act, ap] : act_offloads) {
                  if (act && !(gc || (m.points > 0 && m.task == Task::qlora))) {
                    continue;  // offloading moves the checkpointed layer inputs: with checkpointing only
                  }
                  for (const std::uint32_t g : counts) {
                    Choice c;
                    c.task = m.task;
                    c.weights = is_training(job.task) ? m.weights : w;
                    c.grad_checkpointing = gc || (m.points > 0 && m.task == Task::qlora);
                    c.optimizer = opt;
                    c.kv_cache = kv;
                    c.gpus = g;
                    c.offload_optimizer = off;
                    c.embeddings_16bit = emb;
                    c.activation_offload = act;
                    c.points = m.points + wp + kp + gp + op + fp + ep + ap + gpu_points(job.gpus, g);
                    out.push_back(c);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

JobSpec apply(const JobSpec& job, const Choice& c)
{
  JobSpec j = job;
  j.task = c.task;
  j.weights = c.weights;
  j.grad_checkpointing = c.grad_checkpointing;
  j.optimizer = c.optimizer;
  j.kv_cache = c.kv_cache;
  if (c.kv_cache == KvDtype::q8_0) {
    j.flash_attention = true;  // a quantized V cache needs flash attention
  }
  j.offload_optimizer = c.offload_optimizer;
  j.embeddings_16bit = c.embeddings_16bit;
  j.activation_offload = c.activation_offload;
  if (c.gpus != job.gpus) {
    j.gpus = c.gpus;
    j.shard = fixes_detail::multi_gpu_shard(job);
  }
  return j;
}

std::vector<RecipeChange> describe(const JobSpec& asked, const JobSpec& done)
{
  std::vector<RecipeChange> out;
  JobSpec now = asked;
  const auto step = [&](std::string id, std::string from, std::string to, const auto& change) {
    JobSpec next = now;
    change(next);
    const Bytes before = estimate(now).total();
    const Bytes after = estimate(next).total();
    out.push_back({std::move(id), std::move(from), std::move(to), before - after});
    now = next;
  };
  if (done.task != asked.task) {
    step(done.task == Task::qlora ? "qlora" : "lora", method_label(asked), method_label(done), [&](JobSpec& j) {
      j.task = done.task;
      j.weights = done.weights;
    });
  } else if (done.weights != asked.weights) {
    step("quantize-weights", std::string(to_string(asked.weights)), std::string(to_string(done.weights)),
         [&](JobSpec& j) { j.weights = done.weights; });
  }
  if (done.grad_checkpointing != now.grad_checkpointing) {
    step("grad-checkpointing", "off", "on", [](JobSpec& j) { j.grad_checkpointing = true; });
  }
  if (done.optimizer != asked.optimizer) {
    step("8bit-optimizer", std::string(to_string(asked.optimizer)), std::string(to_string(done.optimizer)),
         [&](JobSpec& j) { j.optimizer = done.optimizer; });
  }
  if (done.embeddings_16bit != asked.embeddings_16bit) {
    step("embeddings-16bit", "fp32", "bf16 embeddings, lm_head and norms", [](JobSpec& j) { j.embeddings_16bit = true; });
  }
  if (done.activation_offload != asked.activation_offload) {
    step("activation-offload", "on the GPU", "saved activations in CPU RAM", [](JobSpec& j) { j.activation_offload = true; });
  }
  if (done.kv_cache != asked.kv_cache) {
    step(done.kv_cache == KvDtype::fp8 ? "kv-cache-fp8" : "kv-cache-q8_0", std::string(to_string(resolve_kv_dtype(asked))),
         std::string(to_string(done.kv_cache)), [&](JobSpec& j) {
           j.kv_cache = done.kv_cache;
           j.flash_attention = done.flash_attention;
         });
  }
  if (done.gpus != asked.gpus) {
    step("more-gpus", gpus_label(asked), gpus_label(done), [&](JobSpec& j) {
      j.gpus = done.gpus;
      j.shard = done.shard;
      j.pipeline = done.pipeline;
    });
  }
  if (done.batch != asked.batch) {
    const bool training = is_training(done.task);
    step(training ? "reduce-batch" : "fewer-sequences", fmt::format("batch {}", asked.batch),
         training ? fmt::format("batch {} x {} accumulation steps", done.batch, done.grad_accumulation)
                  : fmt::format("{} sequences", done.batch),
         [&](JobSpec& j) {
           j.batch = done.batch;
           j.grad_accumulation = done.grad_accumulation;
         });
  }
  if (done.context != asked.context) {
    step("reduce-context", fmt::format("{} tokens", asked.context), fmt::format("{} tokens", done.context),
         [&](JobSpec& j) { j.context = done.context; });
  }
  if (done.gpu_util_permille != asked.gpu_util_permille) {
    step("gpu-util", fmt::format("{:.2f}", asked.gpu_util_permille / 1000.0),
         fmt::format("{:.2f}", done.gpu_util_permille / 1000.0), [&](JobSpec& j) {
           j.gpu_util_permille = done.gpu_util_permille;
           j.gpu_util_given = done.gpu_util_given;
         });
  }
  if (done.offload_optimizer) {
    const bool grads = done.engine != Engine::deepspeed;
    step("cpu-offload", "none", grads ? "optimizer states and gradients in CPU RAM" : "optimizer states in CPU RAM",
         [](JobSpec& j) { j.offload_optimizer = true; });
  }
  if (done.offload_bytes > 0) {
    const std::string what = done.engine == Engine::llama_cpp || done.engine == Engine::ollama
                                  ? fmt::format("{} layers in CPU RAM", offloaded_layers(done))
                                  : fmt::format("{} GiB of weights in CPU RAM", done.offload_bytes / k_gib);
    step("cpu-offload", "none", what, [&](JobSpec& j) { j.offload_bytes = done.offload_bytes; });
  }
  return out;
}

std::uint32_t offloaded_layers(const JobSpec& job)
{
  JobSpec whole = job;
  whole.offload_bytes = 0;
  const WeightSplit w = weight_split(whole, ParamBreakdown{});
  if (w.per_layer.n == 0) {
    return 0;
  }
  const std::uint64_t n = (job.offload_bytes + w.per_layer.n - 1) / w.per_layer.n;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(n, job.model.layers));
}

}  // namespace gpurent::recipe_detail
