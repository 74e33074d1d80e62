// SPDX-License-Identifier: MIT
#pragma once
// The command line that runs a job as sized, keyed by engine name (cli.md `launch`).
#include <map>
#include <string>
#include <string_view>

#include "sizing/job.hpp"

namespace gpurent {

// `hf_id` names the model for the engine (a Hugging Face repo id; GGUF engines derive the file
// name `<basename>.<QUANT>.gguf` from it). Keys: the job's engine ("vllm", "llama.cpp", "ollama",
// "transformers", "torchtune", "deepspeed").
[[nodiscard]] std::map<std::string, std::string> launch_commands(const JobSpec& job, std::string_view hf_id);

}  // namespace gpurent
