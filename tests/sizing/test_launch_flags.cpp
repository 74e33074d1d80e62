// SPDX-License-Identifier: MIT
// Every flag a launch line carries is one the engine's real command line accepts: the tables in
// tests/data/engine_flags/ were read from each engine's source at a named release (README there).
// The lines come from a matrix of models, tasks, engines, formats, GPU counts, KV formats and
// card generations (the hardware rules' flags included), so a flag plan may print is checked.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "planner/rank.hpp"
#include "sizing/estimate.hpp"
#include "planner/fixes.hpp"
#include "sizing/hardware_rules.hpp"
#include "planner/launch.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;
using Json = nlohmann::json;

namespace {

Json table(const std::string& engine)
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/engine_flags/" + engine + ".json");
  REQUIRE(in.good());
  return Json::parse(in);
}

struct Tables {
  Json vllm = table("vllm"), vllm_run_batch = table("vllm_run_batch"), sglang = table("sglang"),
       llama = table("llama_cpp"), trl = table("transformers_trl"), accelerate = table("accelerate"),
       torchrun = table("torchrun"), torchtune = table("torchtune"), torchtune_main = table("torchtune_main"),
       ollama = table("ollama"), trtllm = table("trtllm");
};

const Tables& tables()
{
  static const Tables k_tables;
  return k_tables;
}

// Shell words of a command line: quotes ('…', "…", '\'' escapes) removed; &&, &, ;, |, > split
// commands (returned as separate word lists).
std::vector<std::vector<std::string>> commands_of(const std::string& line)
{
  std::vector<std::vector<std::string>> out(1);
  std::string word;
  bool in_word = false;
  const auto end_word = [&] {
    if (in_word) {
      out.back().push_back(word);
    }
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const auto close = line.find('\'', i + 1);
      REQUIRE(close != std::string::npos);
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '"') {
      const auto close = line.find('"', i + 1);
      REQUIRE(close != std::string::npos);
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ') {
      end_word();
    } else if (c == '&' || c == ';' || c == '|' || c == '>') {
      end_word();
      while (i + 1 < line.size() && (line[i + 1] == '&' || line[i + 1] == '|')) {
        ++i;
      }
      if (c == '>') {  // the redirection target is not a command
        while (i + 1 < line.size() && line[i + 1] == ' ') {
          ++i;
        }
        while (i + 1 < line.size() && line[i + 1] != ' ') {
          ++i;
        }
      }
      out.emplace_back();
    } else {
      word += c;
      in_word = true;
    }
  }
  end_word();
  std::erase_if(out, [](const auto& w) { return w.empty(); });
  return out;
}

// The table entry a flag names: its key or an alias; with `abbrev`, argparse's unique prefix.
const Json* find_flag(const Json& t, const std::string& flag, bool abbrev = false)
{
  const Json& flags = t["flags"];
  if (flags.contains(flag)) {
    return &flags[flag];
  }
  for (const auto& [k, v] : flags.items()) {
    for (const auto& a : v.value("aliases", Json::array())) {
      if (a == flag) {
        return &v;
      }
    }
  }
  if (abbrev) {
    const Json* hit = nullptr;
    int hits = 0;
    for (const auto& [k, v] : flags.items()) {
      if (k.starts_with(flag)) {
        hit = &v;
        ++hits;
      }
    }
    return hits == 1 ? hit : nullptr;
  }
  return nullptr;
}

// Checks words[from, to) as the options of one program; returns the index where it stopped.
std::size_t check_options(const Json& t, const std::vector<std::string>& w, std::size_t from, const std::string& line,
                          bool abbrev = false, const std::string& program = "", const std::string& stop = "")
{
  std::size_t i = from;
  while (i < w.size()) {
    const std::string& word = w[i];
    if (!stop.empty() && word == stop) {
      return i;
    }
    if (!word.starts_with("-")) {
      ++i;  // a positional (the model) or a value
      continue;
    }
    INFO(line << "\nflag " << word);
    const Json* f = find_flag(t, word, abbrev);
    REQUIRE(f != nullptr);
    if (!program.empty() && f->contains(program)) {
      CHECK((*f)[program] == true);  // llama.cpp: the flag belongs to this program
    }
    ++i;
    if (f->value("takes_value", false)) {
      REQUIRE(i < w.size());
      if (f->contains("choices") && (*f)["choices"].is_array()) {
        INFO("value " << w[i]);
        CHECK(std::find((*f)["choices"].begin(), (*f)["choices"].end(), w[i]) != (*f)["choices"].end());
      }
      ++i;
      if (f->value("nargs", std::string()) == "+") {
        while (i < w.size() && !w[i].starts_with("-")) {
          ++i;
        }
      }
    } else if (f->value("value_optional", false) && i < w.size() && !w[i].starts_with("-")) {
      if (f->contains("value_choices")) {
        const auto& vc = (*f)["value_choices"];
        if (std::find(vc.begin(), vc.end(), w[i]) != vc.end()) {
          ++i;
        }
      } else {
        ++i;  // e.g. --fsdp "full_shard auto_wrap"
      }
    }
  }
  return i;
}

// `main`: the line installs torchtune's main branch first (configs newer than its last release).
void check_torchtune(const std::vector<std::string>& w, const std::string& line, bool main)
{
  const Json& t = main ? tables().torchtune_main : tables().torchtune;
  INFO(line);
  if (w[1] == "download") {
    check_options(t, w, 3, line);
    return;
  }
  REQUIRE(w[1] == "run");
  std::size_t i = 2;
  while (i < w.size() && w[i].starts_with("--")) {  // torchrun flags before the recipe
    REQUIRE(find_flag(t, w[i]) != nullptr);
    i += 2;
  }
  REQUIRE(i < w.size());
  const std::string recipe = w[i++];
  REQUIRE(t["recipes"].contains(recipe));
  const Json& r = t["recipes"][recipe];
  REQUIRE(i + 1 < w.size());
  REQUIRE(w[i] == "--config");
  const std::string config = w[i + 1];
  const auto& configs = r["configs"];
  INFO("config " << config);
  CHECK(std::find(configs.begin(), configs.end(), config) != configs.end());
  for (i += 2; i < w.size(); ++i) {
    const auto eq = w[i].find('=');
    REQUIRE(eq != std::string::npos);
    const std::string key = w[i].substr(0, eq);
    const std::string top = key.substr(0, key.find('.'));
    INFO("override " << key);
    const auto& read = r["cfg_keys_read_by_recipe"];
    CHECK(std::find(read.begin(), read.end(), top) != read.end());
    if (key == "dtype") {
      const auto& values = r["dtype_values"];
      CHECK(std::find(values.begin(), values.end(), w[i].substr(eq + 1)) != values.end());
    }
  }
}

void check_line(const std::string& line)
{
  bool torchtune_main = false;
  for (auto w : commands_of(line)) {
    if (w.size() == 3 && w[0] == "bash" && w[1] == "-c") {
      check_line(w[2]);  // a group's line: the script each server's shell runs
      continue;
    }
    // Leading NAME=VALUE assignments: the environment the engine reads.
    while (!w.empty() && w.front().find('=') != std::string::npos && !w.front().starts_with("-")) {
      const std::string name = w.front().substr(0, w.front().find('='));
      INFO(line << "\nenv " << name);
      CHECK(tables().ollama["env"].contains(name));
      w.erase(w.begin());
    }
    if (w.empty()) {
      continue;
    }
    const std::string& p = w[0];
    if (p == "vllm") {
      REQUIRE(w.size() > 2);
      CHECK((w[1] == "serve" || w[1] == "run-batch"));
      check_options(w[1] == "serve" ? tables().vllm : tables().vllm_run_batch, w, 2, line);
    } else if (p == "python" && w.size() > 2 && w[1] == "-m" && w[2] == "vllm.entrypoints.openai.run_batch") {
      check_options(tables().vllm_run_batch, w, 3, line);
    } else if (p == "python" && w.size() > 2 && w[1] == "-m" && w[2] == "sglang.launch_server") {
      check_options(tables().sglang, w, 3, line, true);
    } else if (p == "trtllm-serve") {
      REQUIRE(w.size() > 1);
      CHECK(!w[1].starts_with("-"));  // the model, trtllm-serve's one positional
      check_options(tables().trtllm, w, 2, line);
    } else if (p == "llama-server" || p == "llama-cli") {
      check_options(tables().llama, w, 1, line, false, p);
    } else if (p == "trl") {
      CHECK(w[1] == "sft");
      check_options(tables().trl, w, 2, line);
    } else if (p == "torchrun" || p == "accelerate") {
      const std::size_t start = p == "accelerate" ? 2 : 1;
      const Json& launcher = p == "accelerate" ? tables().accelerate : tables().torchrun;
      const std::size_t m = check_options(launcher, w, start, line, false, "", "-m");
      REQUIRE(m + 1 < w.size());
      CHECK(w[m + 1] == "trl.scripts.sft");
      check_options(tables().trl, w, m + 2, line);
    } else if (p == "tune") {
      check_torchtune(w, line, torchtune_main);
    } else if (p == "pip") {
      REQUIRE(w.size() == 3);
      CHECK(w[1] == "install");
      CHECK(w[2] == "git+https://github.com/pytorch/torchtune@" + tables().torchtune_main["commit"].get<std::string>().substr(0, 12));
      torchtune_main = true;
    } else if (p == "ollama") {
      CHECK((w[1] == "serve" || w[1] == "run" || w[1] == "create"));
      if (w[1] == "create") {
        CHECK((w.size() == 5 && w[3] == "-f"));
      }
    } else {
      INFO(line);
      CHECK((p == "printf" || p == "sleep" || p == "python"));  // the Modelfile, the wait, a snippet
    }
  }
}

// Whether the local shell would expand something: a '$' or a '`' outside single quotes.
bool expanded_outside_single_quotes(std::string_view line)
{
  bool single = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\' && !single) {
      ++i;
    } else if (c == '\'') {
      single = !single;
    } else if (!single && (c == '$' || c == '`')) {
      return true;
    }
  }
  return false;
}

JobSpec base(const ModelArch& m, Task task, Engine engine, WeightFormat w)
{
  JobSpec j;
  j.model = m;
  j.task = task;
  j.engine = engine;
  j.weights = w;
  j.context = std::min<std::uint32_t>(4096, m.max_context);
  j.grad_checkpointing = task != Task::train;
  return j;
}

}  // namespace

TEST_CASE("Launch flags: every flag plan emits is accepted by the engine at the named release", "[sizing][launch]")
{
  const std::vector<std::string> models = {"llama-3.1-8b", "qwen3-30b-a3b", "gpt-oss-20b", "gemma-2-9b", "qwen3-32b",
                                           "mixtral-8x7b", "llama-3.2-1b"};
  const std::vector<std::optional<std::uint32_t>> ccs = {std::nullopt, 75, 86, 89, 90, 100, 120};
  std::size_t lines = 0;
  std::size_t jobs = 0;
  std::size_t group_lines = 0;
  std::size_t sglang_group_lines = 0;
  std::set<std::string> engines_seen;
  for (const auto& name : models) {
    const ModelArch m = find_model(name).value();
    struct Case {
      Task task;
      Engine engine;
      std::vector<WeightFormat> weights;
    };
    const std::vector<Case> cases = {
        {Task::serve, Engine::vllm, {WeightFormat::bf16, WeightFormat::fp8, WeightFormat::awq, WeightFormat::nf4,
                                     WeightFormat::mxfp4, WeightFormat::nvfp4, WeightFormat::fp16, WeightFormat::gguf_q4_k_m}},
        {Task::serve, Engine::sglang, {WeightFormat::bf16, WeightFormat::fp8, WeightFormat::awq, WeightFormat::gptq,
                                       WeightFormat::mxfp4, WeightFormat::int8}},
        {Task::serve, Engine::tensorrt_llm, {WeightFormat::bf16, WeightFormat::fp8, WeightFormat::nvfp4,
                                             WeightFormat::mxfp4, WeightFormat::fp16}},
        {Task::infer, Engine::llama_cpp, {WeightFormat::gguf_q4_k_m, WeightFormat::gguf_q8_0, WeightFormat::mxfp4}},
        {Task::serve, Engine::ollama, {WeightFormat::gguf_q4_k_m, WeightFormat::gguf_q8_0}},
        {Task::lora, Engine::transformers, {WeightFormat::bf16}},
        {Task::qlora, Engine::transformers, {WeightFormat::nf4}},
        {Task::train, Engine::transformers, {WeightFormat::bf16}},
        {Task::train, Engine::deepspeed, {WeightFormat::bf16}},
        {Task::lora, Engine::torchtune, {WeightFormat::bf16}},
        {Task::qlora, Engine::torchtune, {WeightFormat::nf4}},
        {Task::train, Engine::torchtune, {WeightFormat::bf16}},
    };
    for (const auto& c : cases) {
      for (const auto w : c.weights) {
        for (const auto kv : {KvDtype::auto_, KvDtype::fp8, KvDtype::q8_0}) {
          const bool gguf_engine = c.engine == Engine::llama_cpp || c.engine == Engine::ollama;
          if ((kv == KvDtype::fp8 && gguf_engine) || (kv == KvDtype::q8_0 && !gguf_engine) ||
              (kv != KvDtype::auto_ && is_training(c.task))) {
            continue;
          }
          for (const std::uint32_t gpus : {1U, 2U, 4U}) {
           for (const std::uint32_t nodes : {1U, 2U}) {
            if (nodes > 1 && gpus == 1) {
              continue;
            }
            for (const auto cc : ccs) {
              JobSpec j = base(m, c.task, c.engine, w);
              j.kv_cache = kv;
              j.gpus = gpus;
              j.nodes = nodes;
              j.shard = default_shard(c.task, c.engine, gpus * nodes);  // llama.cpp: layer, vLLM: tp
              if (!feasible_layout(j)) {
                continue;
              }
              j = *feasible_layout(j);
              const CardRun run = run_on_card(j, cc);
              if (run.runs.status == RunStatus::refused) {
                continue;
              }
              JobSpec ran = run.job;
              ran.max_seqs = gpus * 7;
              if (gpus == 4 && !is_training(c.task) && c.engine != Engine::tensorrt_llm) {
                ran.offload_bytes = 4ULL << 30;  // the offload recipe's flags too (trtllm-serve has none)
              }
              if (c.engine == Engine::tensorrt_llm && gpus == 2) {
                ran.context = 32768;  // longer than --max_num_tokens: chunked prefill
              }
              if (is_training(c.task) && gpus == 2) {
                ran.optimizer = Optimizer::adamw_8bit;
                ran.offload_optimizer = true;
                ran.grad_accumulation = 4;
              }
              if (is_training(c.task) && gpus == 4) {
                // The QLoRA levers and the batch's shape (packing) the recipe and the flags add.
                ran.embeddings_16bit = true;
                ran.activation_offload = true;
                ran.pack = true;
                ran.compile = c.engine != Engine::unsloth;  // TRL's --torch_compile, torchtune's compile=True
                ran.batch = 3;
              }
              ++jobs;
              for (const auto& [engine, line] : launch_commands(ran, m.hf_ids.front(), Bytes{24ULL << 30})) {
                engines_seen.insert(engine);
                check_line(line);
                ++lines;
                if (ran.nodes > 1 && (is_training(ran.task) || ran.engine == Engine::sglang)) {
                  // Pasted after `gpurent run GROUP --`: nothing the laptop's shell would expand.
                  INFO(line);
                  CHECK(line.starts_with("bash -c '"));
                  CHECK(expanded_outside_single_quotes(line) == false);
                  ++group_lines;
                  sglang_group_lines += ran.engine == Engine::sglang ? 1 : 0;
                }
              }
            }
           }
          }
        }
      }
    }
  }
  std::printf("launch flags: %zu launch lines over %zu jobs (%zu run on a group of servers)\n", lines, jobs, group_lines);
  CHECK(lines > 500);
  CHECK(group_lines > 20);
  CHECK(sglang_group_lines > 5);  // SGLang across servers: --dist-init-addr, --nnodes, --node-rank
  CHECK(engines_seen ==
        std::set<std::string>{"vllm", "sglang", "trtllm", "llama.cpp", "ollama", "transformers", "deepspeed", "torchtune"});
}

TEST_CASE("Launch flags: the checker itself rejects what the engines reject", "[sizing][launch]")
{
  CHECK(find_flag(tables().vllm, "--max-num-seqs") != nullptr);
  CHECK(find_flag(tables().vllm, "--max-num-seq") == nullptr);  // vLLM's parser does not abbreviate
  CHECK(find_flag(tables().sglang, "--tp", true) != nullptr);
  CHECK(find_flag(tables().trl, "--max_seq_length") == nullptr);  // removed in TRL 0.19
  CHECK(find_flag(tables().trl, "--bf16")->value("takes_value", false));  // a bare --bf16 is an error
  CHECK(commands_of("A=1 vllm serve 'my model' --x 1 && ollama run m > f").size() == 2);
  CHECK(commands_of("printf 'FROM %s\\n' './a b.gguf' > Modelfile && ollama create m -f Modelfile")[0][2] == "./a b.gguf");
}

TEST_CASE("Launch flags: the fixes' command-line flags are accepted too", "[sizing][launch]")
{
  std::size_t checked = 0;
  std::size_t trtllm_checked = 0;
  for (const char* name : {"llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b", "llama-3.1-8b"}) {
    const ModelArch m = find_model(name).value();
    for (const Engine e : {Engine::vllm, Engine::tensorrt_llm, Engine::llama_cpp, Engine::ollama}) {
      const bool server = e == Engine::vllm || e == Engine::tensorrt_llm;
      JobSpec j = base(m, server ? Task::serve : Task::infer, e, server ? WeightFormat::bf16 : WeightFormat::gguf_q8_0);
      j.context = std::min<std::uint32_t>(m.max_context, 65536);
      j.batch = 8;
      const std::vector<std::uint32_t> counts = {1, 2, 4, 8};
      for (const auto& f : suggest_fixes(j, Bytes{20ULL << 30}, counts)) {
        for (const auto& [engine, flags] : f.flags) {
          INFO(f.id);
          if (engine == "vllm") {
            check_line("vllm serve model " + flags);
            ++checked;
          } else if (engine == "trtllm") {
            check_line("trtllm-serve model " + flags);
            ++checked;
            ++trtllm_checked;
          } else if (engine == "llama.cpp" && flags.starts_with("-")) {
            check_line("llama-server " + flags.substr(0, flags.find(" (")));
            ++checked;
          } else if (engine == "ollama" && flags.starts_with("OLLAMA_")) {
            check_line(flags + " ollama serve");
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 10);
  CHECK(trtllm_checked > 4);  // --max_seq_len, --kv_cache_dtype, --tp_size, --max_batch_size
}
