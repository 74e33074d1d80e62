// SPDX-License-Identifier: MIT
// `gpurent fits CARD`: golden text, the JSON keys, the search's answers, and its speed.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <set>

#include "cli_harness.hpp"
#include "providers/card.hpp"
#include "planner/rank.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using gpurent::test::check_golden;
using gpurent::test::CliHarness;
using Json = nlohmann::json;
using namespace gpurent;

TEST_CASE("fits command: --json keys, sorted by size, each answer fits and one more token would not", "[cli][fits]")
{
  CliHarness h;
  const auto r = h.run({"fits", "RTX 4090", "--json"});
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  std::set<std::string> top;
  for (const auto& [k, v] : j.items()) {
    top.insert(k);
  }
  CHECK(top == std::set<std::string>{"card", "gpus", "task", "engine", "models", "too_big"});
  CHECK(j["card"] == "rtx-4090");
  CHECK(j["gpus"] == 1);
  CHECK(j["task"] == "infer");
  REQUIRE(j["models"].size() >= 5);
  const Card card = *find_card("RTX 4090");
  std::uint64_t last_params = 0;
  for (const auto& m : j["models"]) {
    std::set<std::string> k;
    for (const auto& [key, v] : m.items()) {
      k.insert(key);
    }
    CHECK(k == std::set<std::string>{"name", "weights", "max_context", "total_gib"});
    const ModelArch* arch = find_model_ptr(m["name"].get<std::string>());
    REQUIRE(arch != nullptr);
    CHECK(arch->params >= last_params);
    last_params = arch->params;
    JobSpec job;
    job.model = *arch;
    job.weights = *parse_weight_format(m["weights"].get<std::string>());
    job.context = m["max_context"].get<std::uint32_t>();
    CHECK(job.context <= arch->max_context);
    const Bytes limit = fit_limit_for(job, card.usable);
    CHECK(estimate(job).total() <= limit);
    if (job.context < arch->max_context) {
      job.context += 1;
      CHECK(estimate(job).total() > limit);
    }
  }
  // A 70B model does not run on one 24 GB card at 16 bits.
  for (const auto& m : j["models"]) {
    if (m["name"] == "llama-3.1-70b") {
      CHECK(m["weights"] != "bf16");
    }
  }
}

TEST_CASE("fits command: bad input is a usage error", "[cli][fits]")
{
  CliHarness h;
  CHECK(h.run({"fits", "voodoo 5"}).code == 2);
  CHECK(h.run({"fits", "RTX 4090", "--gpus", "9"}).code == 2);
  CHECK(h.run({"fits", "RTX 4090", "--task", "juggle"}).code == 2);
  CHECK(h.run({"fits"}).code == 2);
  // fits walks the catalogue: one GGUF file is plan's to size.
  const auto gguf = h.run({"fits", "RTX 4090", "--gguf", "model.Q4_K_M.gguf"});
  CHECK(gguf.code == 2);
  CHECK(gguf.err.find("gpurent plan --gguf") != std::string::npos);
}

TEST_CASE("fits command: the whole catalogue for serving answers every model", "[cli][fits]")
{
  // Its time is a benchmark (bench/startup_bench.sh), not an assertion: a timed check failed under
  // a sanitizer the compiler macro did not name, and on any loaded machine.
  CliHarness h;
  const auto r = h.run({"fits", "A100 80GB", "--task", "serve", "--json"});
  CHECK(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["task"] == "serve");
  CHECK(j["models"].size() >= 10);
}

TEST_CASE("fits command: text views match the golden files", "[cli][fits][golden]")
{
  CliHarness h;
  const auto a = h.run({"fits", "RTX 4090"});
  CHECK(a.code == 0);
  check_golden("fits_rtx4090.txt", a.out);
  const auto b = h.run({"fits", "A100-80GB", "--gpus", "2", "--task", "serve"});
  CHECK(b.code == 0);
  check_golden("fits_a100x2_serve.txt", b.out);
  const auto c = h.run({"fits", "rtx-5090", "--task", "qlora"});
  CHECK(c.code == 0);
  check_golden("fits_rtx5090_qlora.txt", c.out);
}

namespace {

Json run_json(CliHarness& h, std::vector<std::string> args, int& code)
{
  args.push_back("--json");
  const auto r = h.run(args);
  code = r.code;
  INFO(r.err);
  REQUIRE_NOTHROW(Json::parse(r.out));
  return Json::parse(r.out);
}

}  // namespace

TEST_CASE("fits command: its verdict equals plan's, for every catalogue model, task and card", "[cli][fits][property]")
{
  // fits lists (model, weights, context): `plan MODEL --card C --gpus N --task T --weights W
  // --context X` fits, and one token more (below the model's maximum) does not. A model fits
  // leaves out: plan with the default job at fits' minimum context does not fit either.
  struct Where {
    std::string card;
    std::string gpus;
  };
  const std::vector<Where> cards = {{"rtx-4090", "1"}, {"a100-80gb", "1"}, {"l40s", "2"}};
  CliHarness h;
  std::size_t checked = 0;
  for (const auto& where : cards) {
    for (const Task task : all_tasks()) {
      const std::string t(to_string(task));
      int code = 0;
      const Json fits = run_json(h, {"fits", where.card, "--gpus", where.gpus, "--task", t}, code);
      REQUIRE(code == 0);
      std::set<std::string> listed;
      for (const auto& m : fits["models"]) {
        const std::string name = m["name"];
        listed.insert(name);
        const std::uint32_t ctx = m["max_context"];
        const std::vector<std::string> base = {"plan", name, "--card", where.card, "--gpus", where.gpus, "--task", t,
                                               "--weights", m["weights"]};
        auto at = base;
        at.insert(at.end(), {"--context", std::to_string(ctx)});
        const Json p = run_json(h, at, code);
        INFO(where.card << " x" << where.gpus << " " << t << " " << name << " " << m["weights"] << " ctx " << ctx);
        CHECK(code == 0);
        CHECK(p["memory"]["total_gib"] == m["total_gib"]);
        if (ctx < find_model_ptr(name)->max_context) {
          auto over = base;
          over.insert(over.end(), {"--context", std::to_string(ctx + 1)});
          (void)run_json(h, over, code);
          CHECK(code == 3);
        }
        ++checked;
      }
      for (const auto& name : fits["too_big"]) {
        const ModelArch* arch = find_model_ptr(name.get<std::string>());
        REQUIRE(arch != nullptr);
        const std::uint32_t ctx = std::min<std::uint32_t>(1024, arch->max_context);
        (void)run_json(h, {"plan", name, "--card", where.card, "--gpus", where.gpus, "--task", t, "--context",
                           std::to_string(ctx)},
                       code);
        INFO(where.card << " " << t << " " << name << " is too big for fits");
        CHECK(code == 3);
        ++checked;
      }
      CHECK(listed.size() + fits["too_big"].size() == model_catalog().size());
    }
  }
  CHECK(checked >= 3 * 5 * 48);
}

TEST_CASE("fits command: takes plan's job options and applies the same defaults", "[cli][fits]")
{
  CliHarness h;
  int code = 0;
  // LoRA trains with gradient checkpointing by default: without it, fewer models fit, shorter.
  const Json on = run_json(h, {"fits", "rtx-4090", "--task", "lora"}, code);
  const Json off = run_json(h, {"fits", "rtx-4090", "--task", "lora", "--no-grad-checkpointing"}, code);
  CHECK(code == 0);
  CHECK(on["models"].size() > off["models"].size());
  // --weights and --context pin the job: one candidate, one context.
  const Json pinned = run_json(h, {"fits", "a100-80gb", "--weights", "int8", "--context", "2048"}, code);
  for (const auto& m : pinned["models"]) {
    CHECK(m["weights"] == "int8");
    CHECK(m["max_context"] == 2048);
  }
  // The checkpoint's own format first: gpt-oss in MXFP4, DeepSeek in FP8.
  const Json serve = run_json(h, {"fits", "h200", "--gpus", "8", "--task", "serve"}, code);
  for (const auto& m : serve["models"]) {
    if (m["name"] == "gpt-oss-120b") {
      CHECK(m["weights"] == "mxfp4");
    }
    if (m["name"] == "deepseek-v3") {
      CHECK(m["weights"] == "fp8");
    }
  }
  // Usage errors as plan gives them.
  CHECK(h.run({"fits", "rtx-4090", "--task", "lora", "--grad-checkpointing", "--no-grad-checkpointing"}).code == 2);
  CHECK(h.run({"fits", "rtx-4090", "--task", "qlora", "--weights", "bf16"}).code == 2);
  // Every text line within 80 columns, whatever the card.
  for (const Card& c : card_catalog()) {
    const auto r = h.run({"fits", c.id, "--gpus", "8"});
    std::size_t start = 0;
    for (std::size_t i = 0; i <= r.out.size(); ++i) {
      if (i == r.out.size() || r.out[i] == '\n') {
        CHECK(i - start <= 80);
        start = i + 1;
      }
    }
  }
}
