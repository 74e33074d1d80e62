// SPDX-License-Identifier: MIT
// `gpurent plan` decisions that rest on speed, on the built-in catalogue (cli.md plan v3 "How fast"
// and "The whole job"): what it picks for the examples of issue #24, the bill's arithmetic in the
// JSON, and the errors for bad sizes.
#include <catch2/catch.hpp>

#include <string>

#include "cli_harness.hpp"

using gpurent::test::run_plan;
using Json = nlohmann::json;

namespace {

// Whitespace (the text view's line wrapping) does not count.
std::string squeezed(const std::string& s)
{
  std::string out;
  for (const char c : s) {
    if (c == ' ' || c == '\n') {
      if (!out.empty() && out.back() != ' ') {
        out += ' ';
      }
    } else {
      out += c;
    }
  }
  return out;
}

bool has(const std::string& hay, const std::string& needle) { return squeezed(hay).find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("plan speed: a 32B model served picks one RTX PRO 6000 over four RTX 3090 a cent cheaper (the tie rule)", "[cli][plan][speed]")
{
  // Ranked by the hour (serving ranks by the cost of a million output tokens unless told).
  const auto r = run_plan({"qwen3-32b", "--task", "serve", "--rank-by", "hourly"});
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
  const auto hourly = run_plan({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16", "--rank-by", "hourly",
                                "--min-user-speed", "1"});
  REQUIRE(hourly.code == 0);
  CHECK(hourly.j["choice"]["card"] == "rtx-3090");
  CHECK(has(hourly.text, "more tokens per dollar than the choice"));
  // Unsized serving ranks by the tokens a dollar buys (cli.md plan v4), at 10 tok/s per user: the
  // sized job's choice; six RTX 3090 at TP 2 x PP 3 need two replicas for 16 users at that speed.
  const auto per_token = run_plan({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16"});
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
  const auto sized = run_plan({"qwen3-32b", "--task", "serve", "--context", "8k", "--batch", "16", "--requests", "2000"});
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
  CHECK(two.j["job"]["hours"].get<double>() > sized.j["job"]["hours"].get<double>() * 1.8);
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
  }
}
