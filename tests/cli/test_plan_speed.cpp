// SPDX-License-Identifier: MIT
// `gpurent plan` decisions that rest on speed, on the built-in catalogue (cli.md plan v3 "How fast"
// and "The whole job"): what it picks for the examples of issue #24, the bill's arithmetic in the
// JSON, and the errors for bad sizes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using gpurent::test::has;
using gpurent::test::run_plan;
using gpurent::test::run_plan_fixed;
using gpurent::test::squeezed;
using Json = nlohmann::json;

namespace {


}  // namespace

TEST_CASE("plan speed: a 32B model served picks one RTX PRO 6000 over four RTX 3090 a cent cheaper (the tie rule)", "[cli][plan][speed]")
{
  // Ranked by the hour (serving ranks by the cost of a million output tokens unless told).
  const auto r = run_plan_fixed({"qwen3-32b", "--task", "serve", "--rank-by", "hourly"});
  REQUIRE(r.code == 0);
  CHECK(r.j["choice"]["card"] == "rtx-pro-6000");
  CHECK(r.j["choice"]["gpus"] == 1);
  CHECK(r.j["job"]["rank_by"] == "hourly");
  const Json& sp = r.j["choice"]["speed"];
  CHECK(sp["decode_tokens_per_s"].get<double>() > 10);
  CHECK(sp["serve_output_tokens_per_s"].get<double>() > sp["decode_tokens_per_s"].get<double>());
  CHECK(sp["tokens_per_dollar"].get<std::uint64_t>() > 0);
  CHECK(has(r.text, "Speed: serve"));
}

TEST_CASE("plan speed: gpt-oss-120b served by the hour goes to one GPU, by the token to the box that serves most per dollar", "[cli][plan][speed]")
{
  const auto r = run_plan({"gpt-oss-120b", "--task", "serve", "--rank-by", "hourly"});
  REQUIRE(r.code == 0);
  CHECK(r.j["choice"]["gpus"] == 1);
  // Unsized serving ranks by tokens per dollar at what each pool holds at 10 tok/s per user: one
  // RTX PRO 6000 holds 60 full-context requests, four hold ten times as many.
  const auto t = run_plan({"gpt-oss-120b", "--task", "serve"});
  REQUIRE(t.code == 0);
  CHECK(t.j["job"]["rank_by"] == "cost");
  const double best = t.j["choice"]["speed"]["tokens_per_dollar"].get<double>();
  for (const Json& o : t.j["options"]) {
    if (o["fits"] == true && o["serve"]["meets_targets"] == true) {
      CHECK(o["speed"]["tokens_per_dollar"].get<double>() <= best * 1.06);
    }
  }
  CHECK(t.j["choice"]["serve"]["per_user_tokens_per_s"].get<double>() >= 10);
}

TEST_CASE("plan speed: 16 users at 8k with a job size pick 2 x RTX PRO 6000 over 6 x RTX 3090 at TP 2 x PP 3", "[cli][plan][speed]")
{
  // The hourly price, when asked for and with a per-user target the slow box meets.
  const auto hourly = run_plan_fixed({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16", "--rank-by", "hourly",
                                "--min-user-speed", "1"});
  REQUIRE(hourly.code == 0);
  CHECK(hourly.j["choice"]["card"] == "rtx-3090");
  CHECK(has(hourly.text, "more tokens per dollar than the choice"));
  // Unsized serving ranks by the tokens a dollar buys (cli.md plan v4), at 10 tok/s per user: the
  // sized job's choice; six RTX 3090 at TP 2 x PP 3 need two replicas for 16 users at that speed.
  const auto per_token = run_plan_fixed({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16"});
  REQUIRE(per_token.code == 0);
  CHECK(per_token.j["job"]["rank_by"] == "cost");
  CHECK(per_token.j["choice"]["card"] == "rtx-pro-6000");
  CHECK(per_token.j["choice"]["gpus"] == 2);
  bool six = false;
  for (const Json& o : per_token.j["options"]) {
    if (o["card"] == "rtx-3090" && o["gpus"] == 6 && o["nodes"] == 1) {
      six = true;
      CHECK(o["serve"]["replicas"] == 2);
      CHECK(o["serve"]["concurrency_per_replica"] == 8);
    }
  }
  CHECK(six);
  const auto sized = run_plan_fixed({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16", "--requests", "2000"});
  REQUIRE(sized.code == 0);
  CHECK(sized.j["choice"]["card"] == "rtx-pro-6000");
  CHECK(sized.j["choice"]["gpus"] == 2);
  CHECK(sized.j["job"]["rank_by"] == "cost");
  CHECK(sized.j["job"]["requests"] == 2000);
  // The bill: the options are in bill order after the choice, and the choice's bill is the job's.
  CHECK(sized.j["job"]["job_cost"] == sized.j["choice"]["job_cost"]);
  CHECK(sized.j["job"]["hours"] == sized.j["choice"]["hours"]);
  double last = 0;
  for (std::size_t i = 1; i < sized.j["options"].size(); ++i) {
    const Json& o = sized.j["options"][i];
    if (!o["fits"].get<bool>() || !o.contains("job_cost") || o["serve"]["meets_targets"] == false) {
      break;  // the choosable options come first, in bill order
    }
    CHECK(o["job_cost"].get<double>() >= last);
    last = o["job_cost"].get<double>();
  }
  CHECK(sized.j["choice"]["job_cost"].get<double>() <= sized.j["options"][1]["job_cost"].get<double>() * 1.05);
  CHECK(has(sized.text, "hours job cost"));
}

TEST_CASE("plan speed: the LoRA example's one-card fit is tight, with a size the comfortable box wins", "[cli][plan][speed]")
{
  const auto hourly = run_plan({"llama-3.1-8b", "--task", "lora"});
  REQUIRE(hourly.code == 0);
  CHECK(hourly.j["choice"]["gpus"] == 1);
  CHECK(hourly.j["choice"]["risk"] == "tight");
  CHECK(has(hourly.text, "tight:"));
  const auto sized = run_plan({"llama-3.1-8b", "--task", "lora", "--tokens", "50M"});
  REQUIRE(sized.code == 0);
  CHECK(sized.j["choice"]["risk"] == "comfortable");
  CHECK_FALSE((sized.j["choice"]["card"] == "rtx-4090" && sized.j["choice"]["gpus"] == 1));
  CHECK(sized.j["job"]["tokens"] == 50'000'000);
  CHECK(sized.j["job"]["epochs"] == 1);
  CHECK(sized.j["choice"]["speed"]["train_tokens_per_s"].get<double>() > 0);
  CHECK_FALSE(sized.j["choice"]["speed"].contains("decode_tokens_per_s"));
  const auto two = run_plan({"llama-3.1-8b", "--task", "lora", "--tokens", "50M", "--epochs", "2"});
  // The same option twice the work (the choice itself may change: within 5% the shorter job wins).
  bool found = false;
  for (const Json& o : two.j["options"]) {
    if (o["card"] == sized.j["choice"]["card"] && o["gpus"] == sized.j["choice"]["gpus"] &&
        o["provider"] == sized.j["choice"]["provider"]) {
      found = true;
      CHECK(o["hours"].get<double>() > sized.j["choice"]["hours"].get<double>() * 1.8);
    }
  }
  CHECK(found);
}

TEST_CASE("plan speed: --rank-by time picks the fastest option, a deadline nobody meets is exit 3 naming the fastest", "[cli][plan][speed]")
{
  const auto cost = run_plan({"llama-3.1-8b", "--task", "lora", "--tokens", "1B"});
  const auto time = run_plan({"llama-3.1-8b", "--task", "lora", "--tokens", "1B", "--rank-by", "time"});
  REQUIRE(time.code == 0);
  CHECK(time.j["job"]["rank_by"] == "time");
  CHECK(time.j["choice"]["hours"].get<double>() < cost.j["choice"]["hours"].get<double>());
  CHECK(time.j["choice"]["job_cost"].get<double>() >= cost.j["choice"]["job_cost"].get<double>());
  const auto late = run_plan({"llama-3.1-8b", "--task", "lora", "--tokens", "1B", "--deadline", "10m"});
  CHECK(late.code == 3);
  CHECK(late.j["choice"].is_null());
  CHECK(late.j["error"]["code"] == "refused");
  CHECK(has(late.j["error"]["message"].get<std::string>(), "no option finishes within 10 min"));
  CHECK(has(late.j["error"]["hint"].get<std::string>(), "the fastest:"));
  CHECK_FALSE(late.j.contains("recipe"));
  CHECK(has(late.text, "No option finishes within the deadline"));
}

TEST_CASE("plan speed: bad sizes are usage errors (exit 2), nothing else printed", "[cli][plan][speed]")
{
  const std::vector<std::vector<std::string>> bad = {
      {"--task", "lora", "--tokens", "0"},
      {"--task", "lora", "--tokens", "-5"},
      {"--task", "lora", "--tokens", "1e30"},
      {"--task", "lora", "--tokens", "lots"},
      {"--task", "lora", "--requests", "10"},
      {"--task", "train", "--requests", "10"},
      {"--task", "qlora", "--requests", "10", "--input-len", "100"},
      {"--task", "serve", "--tokens", "10M"},
      {"--task", "lora", "--epochs", "2"},
      {"--task", "lora", "--tokens", "1M", "--epochs", "0"},
      {"--task", "lora", "--deadline", "5h"},
      {"--task", "lora", "--tokens", "1M", "--deadline", "0h"},
      {"--task", "lora", "--tokens", "1M", "--deadline", "soon"},
      {"--task", "lora", "--rank-by", "speed"},
      {"--task", "infer", "--concurrency", "8"},
      {"--task", "serve", "--requests", "100", "--input-len", "0"},
      {"--task", "serve", "--requests", "100", "--input-len", "4000", "--output-len", "1000", "--context", "4096"},
  };
  for (auto args : bad) {
    args.insert(args.begin(), "llama-3.1-8b");
    const auto r = run_plan(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.j["error"]["code"] == "usage");
    CHECK(r.j.size() == 1);
    CHECK(r.text.empty());  // nothing on stdout: the error is one line on stderr
  }
}

namespace {

// The options a plan v4 choice is weighed against: fitting, running and within 5% of the lowest bill.
std::vector<Json> within_five_percent(const Json& j)
{
  double lowest = 1e300;
  for (const Json& o : j["options"]) {
    if (o.contains("job_cost")) {
      lowest = std::min(lowest, o["job_cost"].get<double>());
    }
  }
  std::vector<Json> out;
  for (const Json& o : j["options"]) {
    if (o.contains("job_cost") && o["job_cost"].get<double>() <= lowest * 1.05) {
      out.push_back(o);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("plan v4 ranking: --rank-by cost takes 8 cards for 7.4 h over 3 for 19.5 h to save under 1% of the bill", "[cli][plan][speed]")
{
  // Issue #40: the tie rule picked 19.5 h over 7.4 h to save $0.73 of $92.
  const auto r = run_plan_fixed({"llama-3.1-8b", "--task", "train", "--tokens", "1B", "--rank-by", "cost"});
  REQUIRE(r.code == 0);
  const auto close = within_five_percent(r.j);
  REQUIRE(close.size() >= 3);
  double shortest = 1e300;
  for (const Json& o : close) {
    if (o["risk"] == "comfortable") {
      shortest = std::min(shortest, o["hours"].get<double>());
    }
  }
  CHECK(r.j["choice"]["hours"].get<double>() == shortest);
  CHECK(r.j["choice"]["hours"].get<double>() < 10.0);
  CHECK(r.j["choice"]["gpus"] == 8);
  CHECK(r.j["job"]["hours"] == r.j["choice"]["hours"]);
  // Every option that runs and costs less is slower: saving under 5% never buys hours here.
  for (const Json& o : close) {
    CHECK(o["hours"].get<double>() >= shortest);
  }
  CHECK(has(r.text, "8 x RTX PRO 6000"));
}

TEST_CASE("plan v4 ranking: rows that do not fit or are refused show no speed, hours or bill", "[cli][plan][speed]")
{
  const auto r = run_plan({"llama-3.1-70b", "--task", "lora", "--tokens", "100M"});
  REQUIRE(r.code == 0);
  std::size_t misfits = 0;
  for (const Json& o : r.j["options"]) {
    if (!o["fits"].get<bool>() || o["runs"]["status"] == "refused") {
      ++misfits;
      CHECK_FALSE(o.contains("job_cost"));
      CHECK_FALSE(o.contains("hours"));
      CHECK_FALSE(o.contains("speed"));
    } else {
      // A card whose compute figures are unknown (RTX 6000 Ada's bf16 TFLOPS) has no speed for
      // training, so no hours and no bill: said in speed.unknown.
      CHECK(o.contains("speed"));
      CHECK((o.contains("job_cost") || !o["speed"]["unknown"].empty()));
    }
  }
  CHECK(misfits > 0);
  // A refused --card plan: no bill or speed for its rows either.
  const auto refused = run_plan({"gpt-oss-20b", "--card", "t4", "--engine", "vllm", "--requests", "100"});
  if (refused.code == 3 && refused.j["card"]["runs"]["status"] == "refused") {
    for (const Json& o : refused.j["options"]) {
      CHECK_FALSE(o.contains("job_cost"));
      CHECK_FALSE(o.contains("speed"));
    }
  }
}

TEST_CASE("plan v4 batch: --requests with --task infer runs vLLM's offline batch, not one request at a time", "[cli][plan][speed]")
{
  const std::vector<std::string> job = {"deepseek-v3", "--requests", "25000", "--input-len", "1000", "--output-len", "400"};
  const auto b = run_plan_fixed(job);
  REQUIRE(b.code == 0);
  CHECK(b.j["job"]["engine"] == "vllm");
  CHECK(b.j["job"]["mode"] == "batch");
  bool said = false;
  for (const Json& d : b.j["job"]["defaults"]) {
    if (d["key"] == "engine") {
      said = d["value"] == "vllm" && has(d["why"].get<std::string>(), "offline batch") &&
             has(d["why"].get<std::string>(), "one at a time");
    }
  }
  CHECK(said);
  const Json& sp = b.j["choice"]["speed"];
  REQUIRE(sp.contains("serve_output_tokens_per_s"));
  CHECK(sp["input_len"] == 1000);
  CHECK(sp["output_len"] == 400);
  const auto c = sp["concurrency"].get<std::uint32_t>();
  CHECK(c > 16);
  CHECK(c <= 1024);
  // Hours: start-up plus 25,000 x 400 tokens at the batch's rate.
  const double work_h = 25000.0 * 400 / sp["serve_output_tokens_per_s"].get<double>() / 3600;
  CHECK(b.j["choice"]["hours"].get<double>() - b.j["choice"]["startup_hours"].get<double>() ==
        Approx(work_h).margin(0.02));
  const std::string line = b.j["launch"]["vllm"];
  CHECK(line.starts_with("vllm run-batch -i requests.jsonl -o results.jsonl --model deepseek-ai/DeepSeek-V3 "));
  CHECK(has(line, "--max-num-seqs " + std::to_string(c) + " "));
  CHECK(has(b.text, "offline batch, " + std::to_string(c) + " requests at once"));
  CHECK(has(b.text, "Speed: batch"));
  CHECK(has(b.text, "does not fit"));  // the rows that cannot run it show no bill
  // --engine transformers keeps one request at a time: no batch mode, several times the hours.
  auto seq_args = job;
  seq_args.insert(seq_args.end(), {"--engine", "transformers"});
  const auto seq = run_plan(seq_args);
  REQUIRE(seq.code == 0);
  CHECK(seq.j["job"]["engine"] == "transformers");
  CHECK_FALSE(seq.j["job"].contains("mode"));
  CHECK(seq.j["launch"].contains("transformers"));
  CHECK(seq.j["job"]["hours"].get<double>() > b.j["job"]["hours"].get<double>() * 3);
  // --engine sglang: SGLang's offline engine over the same file.
  auto sg_args = job;
  sg_args.insert(sg_args.end(), {"--engine", "sglang"});
  const auto sg = run_plan(sg_args);
  if (sg.code == 0) {
    CHECK(sg.j["job"]["mode"] == "batch");
    CHECK(has(sg.j["launch"]["sglang"].get<std::string>(), "sglang.Engine("));
  }
}

TEST_CASE("plan v4 start-up: a full fine-tune downloads the bf16 checkpoint, not its fp32 master copy", "[cli][plan][speed]")
{
  // One server cannot hold it: 8 servers of 8 cards with checkpointing can.
  const auto r = run_plan({"llama-3.1-405b", "--task", "train", "--tokens", "10M", "--nodes", "8", "--grad-checkpointing"});
  REQUIRE(r.code == 0);
  REQUIRE(r.j["job"].contains("startup"));
  const Json& st = r.j["job"]["startup"];
  const double params = r.j["model"]["params"].get<double>();
  CHECK(st["download_bytes"].get<double>() == Approx(params * 2).epsilon(0.01));
  CHECK(st["download_bytes"].get<double>() / 1e9 < 820);
  CHECK(has(st["download_source"].get<std::string>(), "the catalogue"));
  CHECK(st["download_bytes_per_s"] == 100'000'000);
  CHECK(has(st["basis"].get<std::string>(), "download 811."));
}
