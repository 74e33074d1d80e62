// SPDX-License-Identifier: MIT
#pragma once
// The command line that runs a job as sized, keyed by engine name (cli.md `launch`). Every line
// is one shell command line (`bash -n` clean) that names the repository the user gave; Python
// runs as `python -c '…'` with statements separated by "; " (the text view turns it into a
// here-document). docs/sizing.md "Launch lines" lists what each engine gets.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/units.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// `hf_id` names the model (a Hugging Face repo id). GGUF engines read a GGUF repo (an id with
// "GGUF" in it) from the Hub, else ollama runs the catalogue's library tag when the job uses its
// quantization, else both load a local `<name>.<QUANT>.gguf`. Keys: the job's engine ("vllm",
// "llama.cpp", "ollama", "transformers", "torchtune", "deepspeed", "unsloth"); torchtune only where
// torchtune ships a config for the model (see torchtune_config).
// `card_usable`: the card the job runs on, when known (SGLang derives its memory fraction from it).
// An offline batch (job.offline_batch) reads requests.jsonl (one OpenAI batch request per line:
// custom_id, method, url, body) and writes results.jsonl: `vllm run-batch`, or SGLang's offline
// engine, whose requests without max_completion_tokens generate `batch_output_len` tokens.
[[nodiscard]] std::map<std::string, std::string> launch_commands(const JobSpec& job, std::string_view hf_id,
                                                                 std::optional<Bytes> card_usable = std::nullopt,
                                                                 std::uint32_t batch_output_len = 256);

// The torchtune config (e.g. "llama3_1/8B_lora_single_device") that runs the job, or "" when
// torchtune ships none for this model and method.
[[nodiscard]] std::string torchtune_config(const JobSpec& job);

namespace launch_detail {
// Shared by the launch files: the last path component of an id, and the training command lines.
[[nodiscard]] std::string base_name(std::string_view hf_id);
// A name or path as one shell word: as it is when plain, else single-quoted.
[[nodiscard]] std::string shell_word(std::string_view s);
[[nodiscard]] std::string training_command(const JobSpec& job, std::string_view hf_id);
// A line each server of a job over several runs with its own rank: `bash -c '…'`, so that the
// shell on each server expands "$GPURENT_NODE_RANK" (`gpurent run GROUP -- …`); as it is on one.
[[nodiscard]] std::string on_each_node(const JobSpec& job, std::string line);
// A Python string literal, and statements joined as one `python -c '…'` line.
[[nodiscard]] std::string python_string(std::string_view v);
[[nodiscard]] std::string python_line(const std::vector<std::string>& lines);
// TrainingArguments' --optim value of the job's optimizer.
[[nodiscard]] std::string_view hf_optim(Optimizer o);
// Unsloth: FastLanguageModel and TRL's SFTTrainer (planner/launch_unsloth.cpp).
[[nodiscard]] std::string unsloth_train(const JobSpec& job, std::string_view hf_id);
}  // namespace launch_detail

}  // namespace gpurent
