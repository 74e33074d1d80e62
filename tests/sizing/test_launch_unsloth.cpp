// SPDX-License-Identifier: MIT
// Unsloth's launch script calls FastLanguageModel.from_pretrained, FastLanguageModel.get_peft_model,
// SFTTrainer and SFTConfig with keywords each of them names, at the releases read from their source
// (tests/data/engine_flags/unsloth.json: Unsloth 2026.8.19, TRL v0.24.0); on several GPUs the
// script goes to a file that `accelerate launch` runs with flags accelerate accepts.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "planner/launch.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;
using Json = nlohmann::json;

namespace {

Json table(const std::string& name)
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/engine_flags/" + name + ".json");
  REQUIRE(in.good());
  return Json::parse(in);
}

// The Python inside the line's single-quoted word ('\'' is a quote inside it).
std::string python_of(const std::string& quoted)
{
  REQUIRE(quoted.size() >= 2);
  REQUIRE(quoted.front() == '\'');
  std::string out;
  for (std::size_t i = 1; i < quoted.size(); ++i) {
    if (quoted.compare(i, 4, "'\\''") == 0) {
      out += '\'';
      i += 3;
    } else if (quoted[i] == '\'') {
      REQUIRE(i + 1 == quoted.size());
    } else {
      out += quoted[i];
    }
  }
  return out;
}

// The arguments of the first call `name(` in `code`, split at top-level commas.
std::vector<std::string> call_args(const std::string& code, const std::string& name)
{
  const auto at = code.find(name + "(");
  REQUIRE(at != std::string::npos);
  std::vector<std::string> args;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = at + name.size() + 1; i < code.size(); ++i) {
    const char c = code[i];
    if (quote != 0) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        args.push_back(cur);
        return args;
      }
      --depth;
    } else if (c == ',' && depth == 0) {
      args.push_back(cur);
      cur.clear();
      continue;
    }
    if (!(cur.empty() && c == ' ')) {
      cur += c;
    }
  }
  FAIL("unclosed call to " << name);
  return args;
}

std::string keyword(const std::string& arg)
{
  const auto eq = arg.find('=');
  return eq == std::string::npos ? std::string() : arg.substr(0, eq);
}

std::string value_of(const std::vector<std::string>& args, const std::string& kw)
{
  for (const auto& a : args) {
    if (keyword(a) == kw) {
      return a.substr(kw.size() + 1);
    }
  }
  return "";
}

void check_calls(const std::string& code, const Json& api)
{
  for (const auto& [name, spec] : api.at("calls").items()) {
    std::set<std::string> params;
    for (const auto& p : spec.at("params")) {
      params.insert(p.get<std::string>());
    }
    const std::vector<std::string> args = call_args(code, name);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string kw = keyword(args[i]);
      INFO(name << ": " << args[i]);
      if (kw.empty()) {
        CHECK(name == "FastLanguageModel.get_peft_model");  // the model, its one positional argument
        CHECK(i == 0);
        continue;
      }
      CHECK(params.count(kw) == 1);
    }
  }
  std::set<std::string> optims;
  for (const auto& o : api.at("choices").at("SFTConfig.optim")) {
    optims.insert("\"" + o.get<std::string>() + "\"");
  }
  CHECK(optims.count(value_of(call_args(code, "SFTConfig"), "optim")) == 1);
  for (const std::string name : {"FastLanguageModel.from_pretrained", "FastLanguageModel.get_peft_model"}) {
    const std::string v = value_of(call_args(code, name), "use_gradient_checkpointing");
    CHECK((v == "\"unsloth\"" || v == "False"));
  }
  // Unsloth patches trl and transformers when imported: it comes first.
  CHECK(code.find("from unsloth import FastLanguageModel") < code.find("from trl import"));
}

}  // namespace

TEST_CASE("launch: Unsloth's script passes only keywords its release and TRL's name", "[launch][unsloth]")
{
  const Json api = table("unsloth");
  const Json accelerate = table("accelerate");
  REQUIRE(api.at("release") == "2026.8.19");
  std::size_t checked = 0;
  for (const std::string model : {"llama-3.1-8b", "llama-3.3-70b", "qwen2.5-7b"}) {
    for (const Task task : {Task::lora, Task::qlora}) {
      for (const WeightFormat w : {WeightFormat::bf16, WeightFormat::int8, WeightFormat::nf4}) {
        if ((task == Task::qlora) != (w == WeightFormat::nf4)) {
          continue;
        }
        for (const std::uint32_t gpus : {1U, 4U}) {
          for (const Optimizer o : {Optimizer::adamw, Optimizer::adamw_8bit, Optimizer::sgd, Optimizer::adafactor}) {
            for (const bool fp16 : {false, true}) {
              JobSpec j;
              j.model = find_model(model).value();
              j.task = task;
              j.engine = Engine::unsloth;
              j.weights = w;
              j.gpus = gpus;
              j.shard = gpus > 1 ? Shard::ddp : Shard::none;
              j.optimizer = o;
              j.fp16_compute = fp16;
              j.grad_checkpointing = o != Optimizer::sgd;
              j.pack = o == Optimizer::adafactor;
              j.batch = 2;
              j.grad_accumulation = 4;
              const auto lines = launch_commands(j, "org/Some-Model");
              REQUIRE(lines.count("unsloth") == 1);
              const std::string line = lines.at("unsloth");
              INFO(line);
              std::string code;
              if (gpus == 1) {
                REQUIRE(line.rfind("python -c '", 0) == 0);
                code = python_of(line.substr(10));
              } else {
                const std::string head = "printf '%s\\n' ";
                const std::string tail = fmt::format(" > unsloth_sft.py && accelerate launch --num_processes {} unsloth_sft.py", gpus);
                REQUIRE(line.rfind(head, 0) == 0);
                REQUIRE(line.size() > head.size() + tail.size());
                REQUIRE(line.compare(line.size() - tail.size(), tail.size(), tail) == 0);
                CHECK(accelerate.at("flags").contains("--num_processes"));
                code = python_of(line.substr(head.size(), line.size() - head.size() - tail.size()));
                CHECK(code.find("device_map={\"\": int(os.environ.get(\"LOCAL_RANK\", \"0\"))}") != std::string::npos);
              }
              check_calls(code, api);
              CHECK(value_of(call_args(code, "FastLanguageModel.from_pretrained"), "load_in_4bit") ==
                    (task == Task::qlora ? "True" : "False"));
              CHECK(value_of(call_args(code, "SFTConfig"), fp16 ? "fp16" : "bf16") == "True");
              CHECK(value_of(call_args(code, "SFTConfig"), "gradient_accumulation_steps") == "4");
              ++checked;
            }
          }
        }
      }
    }
  }
  CHECK(checked == 3 * 3 * 2 * 4 * 2);
}
