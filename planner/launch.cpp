// SPDX-License-Identifier: MIT
// Command lines that serve a job as sized (cli.md `launch`); training lines: launch_train.cpp.
#include "planner/launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "common/text.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"
#include "planner/recipe_detail.hpp"

namespace gpurent {

namespace launch_detail {

std::string shell_word(std::string_view s)
{
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-' || c == '/' || c == '+';
  });
  if (plain) {
    return std::string(s);
  }
  std::string out = "'";
  for (const char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

}  // namespace launch_detail

namespace {

using launch_detail::shell_word;

// A local path rather than a Hub repository id: "./x", "/data/x", "~/x", "x.gguf", or a name
// with characters a Hub id never has.
bool local_path_id(std::string_view id)
{
  if (id.empty() || id.front() == '.' || id.front() == '/' || id.front() == '~') {
    return true;
  }
  if (id.size() > 5 && iequals(id.substr(id.size() - 5), ".gguf")) {
    return true;
  }
  return std::count(id.begin(), id.end(), '/') > 1 || id.find(' ') != std::string_view::npos;
}

using launch_detail::base_name;
using launch_detail::python_line;
using launch_detail::python_string;

// The GGUF file type a non-GGUF format maps to.
std::string_view gguf_type(WeightFormat f)
{
  if (is_gguf(f)) {
    return to_string(f);
  }
  switch (f) {
  case WeightFormat::fp8:
  case WeightFormat::int8: return "Q8_0";
  case WeightFormat::mxfp4: return "MXFP4";
  case WeightFormat::nvfp4:
  case WeightFormat::int4:
  case WeightFormat::nf4:
  case WeightFormat::awq:
  case WeightFormat::gptq: return "Q4_K_M";
  default: return "F16";
  }
}

bool gguf_repo(std::string_view id) { return !local_path_id(id) && to_lower(id).find("gguf") != std::string::npos; }

std::string local_gguf(const JobSpec& j, std::string_view id)
{
  return fmt::format("{}.{}.gguf", base_name(id), gguf_type(j.weights));
}


// The GGUF file that was sized (ModelArch::checkpoint read from a GGUF header), when the job loads
// it as stored: its Hub repository ("" for a local file or a URL) and its path (part 1 of a split
// file: llama.cpp finds the other parts beside it).
struct SizedGguf {
  std::string repo;
  std::string file;
};
std::optional<SizedGguf> sized_gguf(const JobSpec& j)
{
  const auto& ck = j.model.checkpoint;
  if (!ck || !ck->gguf || ck->files.empty() || !loads_as_stored(*ck, j.weights)) {
    return std::nullopt;
  }
  return SizedGguf{ck->hub_repo, ck->files.front()};
}

// A local GGUF file that was sized: the path the user gave when MODEL names it, else its name.
std::string local_path(const SizedGguf& g, std::string_view id)
{
  const bool path_given = id.size() > 5 && iequals(id.substr(id.size() - 5), ".gguf") && base_name(id) == base_name(g.file);
  return path_given ? std::string(id) : base_name(g.file);
}

// llama.cpp's model argument: the sized file (from its Hub repository, or local), else a GGUF
// repository's file of the job's type, else a local file converted to it.
std::string llama_cpp_model(const JobSpec& j, std::string_view id)
{
  if (const auto g = sized_gguf(j)) {
    if (!g->repo.empty()) {
      return fmt::format("-hf {} --hf-file {}", g->repo, shell_word(g->file));
    }
    return "-m " + shell_word(local_path(*g, id));
  }
  return gguf_repo(id) ? fmt::format("-hf {}:{}", id, gguf_type(j.weights)) : "-m " + shell_word(local_gguf(j, id));
}

// vLLM's model argument. GGUF weights load from one file (docs.vllm.ai, "GGUF"): a Hub
// repository's as REPO:TYPE, a local file by its path (a bare name gets "./" so that vLLM does not
// take it for a Hub id); the tokenizer then comes from the file.
std::string vllm_model(const JobSpec& j, std::string_view id)
{
  if (const auto g = sized_gguf(j)) {
    if (!g->repo.empty()) {
      return fmt::format("{}:{}", g->repo, gguf_type(j.weights));
    }
    const std::string path = local_path(*g, id);
    return shell_word(path.find('/') == std::string::npos ? "./" + path : path);
  }
  if (is_gguf(j.weights)) {
    return gguf_repo(id) ? fmt::format("{}:{}", id, gguf_type(j.weights)) : shell_word("./" + local_gguf(j, id));
  }
  return shell_word(id);
}

std::uint32_t served_seqs(const JobSpec& j) { return j.max_seqs > 0 ? j.max_seqs : std::max<std::uint32_t>(j.batch, 1); }

// The weight format flag vLLM and SGLang take when the job quantizes a 16-bit checkpoint on load.
std::string_view quantization_flag(const JobSpec& j)
{
  if (native_weights(j)) {
    return "";
  }
  switch (j.weights) {
  case WeightFormat::fp8: return " --quantization fp8";
  case WeightFormat::awq: return " --quantization awq";
  case WeightFormat::gptq: return " --quantization gptq";
  case WeightFormat::int4:
  case WeightFormat::nf4:
  case WeightFormat::int8: return " --quantization bitsandbytes";
  case WeightFormat::fp32: return " --dtype float32";
  case WeightFormat::fp16: return " --dtype float16";
  default: return "";
  }
}

// Quantized weights on a card without bf16 compute in fp16 (sizing/hardware_rules.cpp); a 16-bit
// checkpoint says so through its format (quantization_flag).
std::string_view compute_dtype_flag(const JobSpec& j)
{
  return j.fp16_compute && j.weights != WeightFormat::fp16 && j.weights != WeightFormat::fp32 ? " --dtype float16" : "";
}

// SGLang's launch_server (server_args.py): --tp, --mem-fraction-static, --context-length,
// --max-running-requests; the KV dtype as fp8_e4m3/fp8_e5m2.
std::string sglang_command(const JobSpec& j, std::string_view id, std::optional<Bytes> card_usable)
{
  std::string s = fmt::format("python -m sglang.launch_server --model-path {} --tp {}", shell_word(id), tp_degree(j));
  if (j.pipeline > 1) {
    s += fmt::format(" --pp-size {}", j.pipeline);
  }
  if (j.gpu_util_given || card_usable) {
    const std::uint32_t f = card_usable ? sglang_mem_fraction_permille(j, *card_usable) : j.gpu_util_permille;
    s += fmt::format(" --mem-fraction-static {:.3f}", static_cast<double>(f) / 1000.0);
  }
  s += fmt::format(" --context-length {} --max-running-requests {}", j.context, served_seqs(j));
  if (resolve_kv_dtype(j) == KvDtype::fp8) {
    s += j.kv_fp8_e5m2 ? " --kv-cache-dtype fp8_e5m2" : " --kv-cache-dtype fp8_e4m3";
  }
  s += quantization_flag(j);
  s += compute_dtype_flag(j);
  if (j.nodes > 1) {
    // Across servers (docs.sglang.io "Multi-Node Deployment"): every server runs the same line with
    // its own rank; rank 0's address and port are where they meet (`gpurent run GROUP` sets both).
    s += fmt::format(" --dist-init-addr \"$MASTER_ADDR:$MASTER_PORT\" --nnodes {} --node-rank \"$GPURENT_NODE_RANK\"",
                     j.nodes);
    return launch_detail::on_each_node(j, std::move(s));
  }
  return s;
}

// TensorRT-LLM's OpenAI server on its PyTorch backend (tests/data/engine_flags/trtllm.json): the
// layout, the requests it schedules at once, the tokens a step runs (what its profiling run sized),
// the longest request and the KV fraction of what profiling leaves free. A prompt longer than
// --max_num_tokens is scheduled only with chunked prefill (off by default).
std::string trtllm_command(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format("trtllm-serve {} --backend pytorch --tp_size {}", shell_word(id), tp_degree(j));
  if (j.pipeline > 1) {
    s += fmt::format(" --pp_size {}", j.pipeline);
  }
  const std::uint32_t tokens = trtllm_max_num_tokens(j);
  s += fmt::format(" --max_batch_size {} --max_num_tokens {} --max_seq_len {} --kv_cache_free_gpu_memory_fraction {:.2f}",
                   served_seqs(j), tokens, j.context, static_cast<double>(j.gpu_util_permille) / 1000.0);
  if (resolve_kv_dtype(j) == KvDtype::fp8) {
    s += " --kv_cache_dtype fp8";
  }
  if (j.context > tokens) {
    s += " --enable_chunked_prefill";
  }
  return s;
}

// vLLM's engine arguments after the model (shared by `vllm serve` and `vllm run-batch`).
std::string vllm_engine_args(const JobSpec& j)
{
  std::string s = fmt::format(" --tensor-parallel-size {}", tp_degree(j));
  if (j.pipeline > 1) {
    s += fmt::format(" --pipeline-parallel-size {}", j.pipeline);
  }
  s += fmt::format(" --max-model-len {} --max-num-seqs {} --gpu-memory-utilization {:.2f}", j.context, served_seqs(j),
                   static_cast<double>(j.gpu_util_permille) / 1000.0);
  if (resolve_kv_dtype(j) == KvDtype::fp8) {
    s += j.kv_fp8_e5m2 ? " --kv-cache-dtype fp8_e5m2" : " --kv-cache-dtype fp8";
  }
  if (j.moe_marlin) {
    s += " --moe-backend marlin";
  }
  s += quantization_flag(j);
  s += compute_dtype_flag(j);
  if (j.offload_bytes > 0) {
    s += fmt::format(" --cpu-offload-gb {}", (j.offload_bytes + k_gib - 1) / k_gib);
  }
  return s;
}

std::string vllm_command(const JobSpec& j, std::string_view id)
{
  if (j.offline_batch) {
    // vllm run-batch (vllm/entrypoints/openai/run_batch.py): -i/-o name the OpenAI batch files, the
    // engine arguments follow --model. Its usage context (OPENAI_BATCH_RUNNER) has no batch
    // defaults of its own, so the sequences in flight and the step's tokens are set explicitly
    // (128 and 2048 otherwise): the ones the plan's speed and memory were computed for.
    return fmt::format("vllm run-batch -i requests.jsonl -o results.jsonl --model {}{} --max-num-batched-tokens {}",
                       vllm_model(j, id), vllm_engine_args(j), vllm_profile_tokens(j));
  }
  return fmt::format("vllm serve {}{}", vllm_model(j, id), vllm_engine_args(j));
}

// SGLang's offline engine (sglang.Engine, whose keyword arguments are server_args.py's fields) over
// the same OpenAI batch file vllm run-batch reads: each request's messages through the model's
// chat template, its max_completion_tokens (else the planned output length), results in order.
std::string sglang_batch(const JobSpec& j, std::string_view id, std::optional<Bytes> card_usable,
                         std::uint32_t output_len)
{
  std::string args = fmt::format("model_path=model_id, tp_size={}", tp_degree(j));
  if (j.pipeline > 1) {
    args += fmt::format(", pp_size={}", j.pipeline);
  }
  if (j.gpu_util_given || card_usable) {
    const std::uint32_t f = card_usable ? sglang_mem_fraction_permille(j, *card_usable) : j.gpu_util_permille;
    args += fmt::format(", mem_fraction_static={:.3f}", static_cast<double>(f) / 1000.0);
  }
  args += fmt::format(", context_length={}, max_running_requests={}", j.context, served_seqs(j));
  if (resolve_kv_dtype(j) == KvDtype::fp8) {
    args += j.kv_fp8_e5m2 ? ", kv_cache_dtype=\"fp8_e5m2\"" : ", kv_cache_dtype=\"fp8_e4m3\"";
  }
  if (const std::string_view q = quantization_flag(j); q.starts_with(" --quantization ")) {
    args += fmt::format(", quantization=\"{}\"", q.substr(16));
  } else if (q.starts_with(" --dtype ")) {
    args += fmt::format(", dtype=\"{}\"", q.substr(9));
  }
  return python_line({
      "import json",
      "import sglang",
      "from transformers import AutoTokenizer",
      "model_id = " + python_string(id),
      "reqs = [json.loads(l) for l in open(\"requests.jsonl\") if l.strip()]",
      "tok = AutoTokenizer.from_pretrained(model_id)",
      "prompts = [tok.apply_chat_template(r[\"body\"][\"messages\"], tokenize=False, add_generation_prompt=True) "
      "for r in reqs]",
      fmt::format("params = [{{\"max_new_tokens\": r[\"body\"].get(\"max_completion_tokens\", {})}} for r in reqs]",
                  output_len),
      "llm = sglang.Engine(" + args + ")",
      "outs = llm.generate(prompts, params)",
      "open(\"results.jsonl\", \"w\").writelines(json.dumps({\"custom_id\": r[\"custom_id\"], \"text\": o[\"text\"]}) + "
      "\"\\n\" for r, o in zip(reqs, outs))",
      "llm.shutdown()",
  });
}

std::uint32_t gpu_layers(const JobSpec& j)
{
  return j.offload_bytes > 0 ? j.model.layers - recipe_detail::offloaded_layers(j) : 999;
}

std::string llama_cpp_command(const JobSpec& j, std::string_view id)
{
  const std::uint32_t np = std::max<std::uint32_t>(j.batch, 1);
  std::string s = fmt::format("llama-server {} -c {} -np {} -ngl {}", llama_cpp_model(j, id), std::uint64_t{j.context} * np,
                              np, gpu_layers(j));
  s += j.flash_attention ? " -fa on" : " -fa off";
  const KvDtype kv = resolve_kv_dtype(j);
  if (kv == KvDtype::q8_0 || kv == KvDtype::q4_0) {
    s += fmt::format(" --cache-type-k {0} --cache-type-v {0}", to_string(kv));
  }
  if (j.gpus > 1) {
    s += " --split-mode layer";
  }
  return s;
}

// ollama: the library tag when the job uses its quantization, a GGUF repo from the Hub, else a
// local GGUF file imported with a Modelfile.
std::string ollama_command(const JobSpec& j, std::string_view id)
{
  std::string env = fmt::format("OLLAMA_CONTEXT_LENGTH={} OLLAMA_NUM_PARALLEL={}", j.context, std::max<std::uint32_t>(j.batch, 1));
  const KvDtype kv = resolve_kv_dtype(j);
  if (j.flash_attention) {
    env += " OLLAMA_FLASH_ATTENTION=1";
  }
  if (kv == KvDtype::q8_0 || kv == KvDtype::q4_0) {
    env += fmt::format(" OLLAMA_KV_CACHE_TYPE={}", to_string(kv));
  }
  if (j.gpus > 1) {
    env += " OLLAMA_SCHED_SPREAD=1";
  }
  const std::string serve = env + " ollama serve & sleep 5 && ";
  const std::string num_gpu = j.offload_bytes > 0 ? fmt::format("PARAMETER num_gpu {}\\n", gpu_layers(j)) : "";
  // The sized GGUF file: its repository's file of that type, or the local file by its name.
  const auto sized = sized_gguf(j);
  const std::string hub = sized && !sized->repo.empty() ? sized->repo : (gguf_repo(id) ? std::string(id) : std::string());
  if (!hub.empty() && num_gpu.empty()) {
    return fmt::format("{}ollama run hf.co/{}:{}", serve, hub, gguf_type(j.weights));
  }
  if (!j.model.ollama_tag.empty() && iequals(j.model.ollama_quant, gguf_type(j.weights)) && num_gpu.empty()) {
    return fmt::format("{}ollama run {}", serve, j.model.ollama_tag);
  }
  // FROM: the Hub file, the sized local file by the path the user gave, or a converted file.
  std::string from = !hub.empty() ? fmt::format("hf.co/{}:{}", hub, gguf_type(j.weights)) : "./" + local_gguf(j, id);
  if (sized && sized->repo.empty()) {
    const std::string path = local_path(*sized, id);
    from = path.find('/') == std::string::npos ? "./" + path : path;
  }
  // ollama's model name: lower-case letters, digits, '.', '-' and '_' (the file's stem).
  std::string stem = base_name(sized && sized->repo.empty() ? from : std::string(id));
  if (stem.size() > 5 && iequals(std::string_view(stem).substr(stem.size() - 5), ".gguf")) {
    stem.resize(stem.size() - 5);
  }
  std::string name = to_lower(stem);
  for (char& c : name) {
    c = (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_') ? c : '-';
  }
  if (name.empty() || name.front() == '.' || name.front() == '-') {
    name = "model-" + name;
  }
  // The path goes through printf's %s as one quoted shell word: any file name survives.
  return fmt::format("{}printf 'FROM %s\\n{}' {} > Modelfile && ollama create {} -f Modelfile && ollama run {}", serve,
                     num_gpu, shell_word(from), name, name);
}

// transformers generate(): a Python snippet that loads the model as sized and generates.
std::string transformers_infer(const JobSpec& j, std::string_view id)
{
  std::vector<std::string> imports{"AutoModelForCausalLM", "AutoTokenizer"};
  std::string load = "model_id, device_map=\"auto\"";
  bool uses_torch = false;
  if (native_weights(j)) {
    load += ", torch_dtype=\"auto\"";
  } else {
    const std::string_view dtype = j.weights == WeightFormat::fp32
                                       ? "float32"
                                       : (j.weights == WeightFormat::fp16 || j.fp16_compute ? "float16" : "bfloat16");
    load += fmt::format(", torch_dtype=torch.{}", dtype);
    uses_torch = true;
    if (j.weights == WeightFormat::int8) {
      imports.emplace_back("BitsAndBytesConfig");
      load += ", quantization_config=BitsAndBytesConfig(load_in_8bit=True)";
    } else if (j.weights == WeightFormat::nf4 || j.weights == WeightFormat::int4) {
      imports.emplace_back("BitsAndBytesConfig");
      load += ", quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")";
    }
  }
  if (j.offload_bytes > 0) {
    const std::uint64_t on_gpu = (estimate(j).weights.n + k_gib - 1) / k_gib + 1;
    load += fmt::format(", max_memory={{0: \"{}GiB\", \"cpu\": \"{}GiB\"}}", on_gpu, (j.offload_bytes + k_gib - 1) / k_gib + 2);
  }
  std::string names;
  for (const auto& n : imports) {
    names += (names.empty() ? "" : ", ") + n;
  }
  std::vector<std::string> lines;
  if (uses_torch) {
    lines.emplace_back("import torch");
  }
  lines.push_back("from transformers import " + names);
  lines.push_back("model_id = " + python_string(id));
  lines.emplace_back("tok = AutoTokenizer.from_pretrained(model_id)");
  lines.push_back(fmt::format("model = AutoModelForCausalLM.from_pretrained({})", load));
  lines.push_back(fmt::format("ids = tok([\"Hello\"] * {}, return_tensors=\"pt\").to(model.device)",
                              std::max<std::uint32_t>(j.batch, 1)));
  lines.push_back(fmt::format("print(tok.batch_decode(model.generate(**ids, max_length={})))", j.context));
  return python_line(lines);
}

}  // namespace

namespace launch_detail {

std::string python_string(std::string_view v)
{
  std::string literal = "\"";
  for (const char c : v) {
    literal += (c == '\\' || c == '"') ? std::string{'\\', c} : std::string(1, c);
  }
  return literal + "\"";
}

// Statements joined as one `python -c '…'` line (the text view turns it into a here-document).
std::string python_line(const std::vector<std::string>& lines)
{
  std::string body;
  for (const auto& l : lines) {
    body += (body.empty() ? "" : "; ") + l;
  }
  std::string quoted;  // inside the shell's single quotes
  for (const char c : body) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return "python -c '" + quoted + "'";
}

std::string base_name(std::string_view hf_id)
{
  const auto slash = hf_id.rfind('/');
  std::string base(slash == std::string_view::npos ? hf_id : hf_id.substr(slash + 1));
  return base.empty() || base == "." || base == ".." ? std::string("model") : base;  // "." : a local folder
}

}  // namespace launch_detail

std::map<std::string, std::string> launch_commands(const JobSpec& job, std::string_view hf_id, std::optional<Bytes> card_usable,
                                                   std::uint32_t batch_output_len)
{
  std::map<std::string, std::string> out;
  const std::string key{to_string(job.engine)};
  if (is_training(job.task)) {
    std::string line = launch_detail::training_command(job, hf_id);
    if (!line.empty()) {
      out[key] = std::move(line);
    }
    return out;
  }
  switch (job.engine) {
  case Engine::vllm: out[key] = vllm_command(job, hf_id); break;
  case Engine::tensorrt_llm: out[key] = trtllm_command(job, hf_id); break;
  case Engine::llama_cpp: out[key] = llama_cpp_command(job, hf_id); break;
  case Engine::ollama: out[key] = ollama_command(job, hf_id); break;
  case Engine::sglang:
    out[key] = job.offline_batch ? sglang_batch(job, hf_id, card_usable, batch_output_len)
                                 : sglang_command(job, hf_id, card_usable);
    break;
  default: out["transformers"] = transformers_infer(job, hf_id); break;
  }
  return out;
}

}  // namespace gpurent
