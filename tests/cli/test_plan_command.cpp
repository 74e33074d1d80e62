// SPDX-License-Identifier: MIT
// `gpurent plan` end to end in-process: golden text views, the exact JSON contract, exit codes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/json_writer.hpp"
#include "cli/plan_json.hpp"
#include "cli/plan_text.hpp"
#include "cli_harness.hpp"

using gpurent::test::check_golden;
using gpurent::test::CliHarness;
using Json = nlohmann::json;

namespace {

std::set<std::string> keys(const Json& j)
{
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) {
    out.insert(k);
  }
  return out;
}

const std::set<std::string> k_top = {"model", "job", "memory", "choice", "options", "fixes", "launch"};
const std::set<std::string> k_model = {"name", "source", "params", "layers", "hidden", "heads", "kv_heads",
                                       "head_dim", "vocab", "intermediate", "experts", "experts_active", "max_context"};
// plan v3 "The whole job": the ranking, and the choice's hours and bill (null for an unsized job).
const std::set<std::string> k_job = {"task", "engine", "weights", "kv_cache", "context", "batch",
                                     "optimizer", "grad_checkpointing", "lora_rank", "gpus", "nodes", "shard", "defaults",
                                     "rank_by", "hours", "job_cost", "engine_version"};
// Present only when given: the job's size, the deadline, the choice's start-up; for training the
// micro-batch, whether plan chose it (plan v4), the accumulation and packing.
const std::set<std::string> k_job_sized = {"tokens", "epochs", "requests", "deadline_hours", "startup", "mode",
                                           "micro_batch", "micro_batch_chosen", "grad_accum", "pack", "compile"};
// plan v4: the start-up downloads the checkpoint as stored, and says where that figure comes from.
const std::set<std::string> k_startup = {"hours", "basis", "download_bytes", "download_source", "download_bytes_per_s"};
const std::set<std::string> k_recipe = {"fits", "card", "gpus", "changes", "memory", "limit_gib", "job",
                                        "price_per_hour", "flags", "launch", "speed"};
const std::set<std::string> k_memory = {"weights_gib", "kv_cache_gib", "activations_gib", "gradients_gib",
                                        "optimizer_gib", "adapters_gib", "overhead_gib", "peak_allocated_gib",
                                        "total_gib"};
// plan v3 adds `runs` ({status, why, flags}) to the choice and to every option.
// plan v3 "How fast": `speed` and `risk` on the choice and every option; a sized job adds hours,
// start-up and the bill, a deadline `late`.
// multi-node: `nodes` on the choice and every option (1 for one server), the link between servers
// when there are several.
// plan v4 "The whole market": cloud, region, rentable, billing {increment_s, minimum_s, source},
// price_source, price_date on the choice (its rule as billing_rule: `billing` is the contract's
// label there) and on every option; what a row says of itself and how to attach one gpurent
// does not rent, where they apply.
const std::set<std::string> k_choice = {"provider", "card", "vram_gib", "gpus", "nodes", "headroom_gib",
                                        "price_per_hour", "currency", "billing", "cost", "runs", "speed", "risk",
                                        "cloud", "region", "rentable", "billing_rule", "price_source", "price_date"};
const std::set<std::string> k_option = {"provider", "card",  "gpus", "nodes", "fits", "headroom_gib",
                                        "price_per_hour", "cost", "runs", "speed", "risk", "cloud", "region",
                                        "rentable", "billing", "price_source", "price_date"};
// plan v4: `serve` on every option of a serving job (checked in check_serve).
const std::set<std::string> k_option_sized = {"hours", "startup_hours", "job_cost", "late", "node_link", "serve",
                                              "instance_type", "upstream", "gpu_only", "attach"};
const std::set<std::string> k_serve = {"replicas", "concurrency_per_replica", "kv_pool_tokens", "per_user_tokens_per_s",
                                       "ttft_s", "meets_targets", "misses"};
// plan v4 "Ranking with a size": a row that does not fit or is refused has no speed, hours or bill.
const std::set<std::string> k_option_misfit = {"provider", "card", "gpus", "nodes", "fits", "headroom_gib",
                                               "price_per_hour", "cost", "runs", "cloud", "region", "rentable",
                                               "billing", "price_source", "price_date"};
const std::set<std::string> k_speed = {"prefill_tokens_per_s", "decode_tokens_per_s", "serve_output_tokens_per_s",
                                       "train_tokens_per_s", "tokens_per_dollar", "concurrency", "input_len",
                                       "output_len", "bound", "range_pct", "basis", "unknown", "network_step_s",
                                       "compute_step_s"};

// `keys` is `required` plus any of `optional`.
void check_keys(const Json& j, const std::set<std::string>& required, const std::set<std::string>& optional)
{
  for (const auto& k : required) {
    INFO("missing key " << k);
    CHECK(j.contains(k));
  }
  for (const auto& [k, v] : j.items()) {
    INFO("unexpected key " << k);
    CHECK((required.count(k) + optional.count(k)) >= 1);
  }
}

void check_speed(const Json& s)
{
  check_keys(s, {"bound", "range_pct", "basis"}, k_speed);
  // null: the engine has too few measurements for a spread of its own (docs/speed.md "Measured
  // spread"), and `unknown` says so (or says there is no speed at all); never 0.
  if (s["range_pct"].is_null()) {
    REQUIRE(s.contains("unknown"));
    const std::string why = s["unknown"].dump();
    CHECK((why.find("range_pct: fewer than") != std::string::npos || why.find("no speed") != std::string::npos));
  } else {
    CHECK(s["range_pct"].get<int>() > 0);
  }
}
const std::set<std::string> k_fix = {"id", "description", "saves_gib", "flags"};

Json parse_one(const std::string& out)
{
  // Exactly one document: nlohmann::json::parse rejects trailing content.
  REQUIRE_NOTHROW(Json::parse(out));
  return Json::parse(out);
}

void check_contract(const Json& j)
{
  std::set<std::string> top = k_top;
  if (j.contains("error")) {  // a plan that does not fit (exit 3) carries the error too (cli.md)
    top.insert("error");
    CHECK(j["error"]["exit"] == 3);
  }
  if (j.contains("serve")) {
    top.insert("serve");
    CHECK(keys(j["serve"]) == std::set<std::string>{"kv_pool_gib", "kv_pool_tokens", "max_concurrency"});
  }
  if (j.contains("card")) {  // --card: how the engine runs the job there (plan v3), even unpriced or refused
    top.insert("card");
    std::set<std::string> card_keys{"card", "compute_capability", "runs"};
    if (j["card"].contains("runs_elsewhere")) {
      card_keys.insert("runs_elsewhere");
    }
    CHECK(keys(j["card"]) == card_keys);
    CHECK(keys(j["card"]["runs"]) == std::set<std::string>{"status", "why", "flags"});
  }
  if (j.contains("recipe")) {
    top.insert("recipe");
    const Json& r = j["recipe"];
    CHECK(keys(r) == k_recipe);
    CHECK(keys(r["memory"]) == k_memory);
    for (const auto& c : r["changes"]) {
      CHECK(keys(c) == std::set<std::string>{"id", "from", "to", "saves_gib"});
    }
    CHECK(r["flags"].is_object());
    CHECK(r["launch"].is_object());
  }
  if (j.contains("speed")) {  // no choice: the speed on the given or closest card
    top.insert("speed");
    check_speed(j["speed"]);
  }
  const bool default_serving = j["job"]["task"] == "serve" &&
                               std::any_of(j["job"]["defaults"].begin(), j["job"]["defaults"].end(), [](const Json& d) {
                                 return d["key"] == "engine" && d["value"] == "vllm";
                               });
  // Serving on the default engine: vLLM, SGLang and TensorRT-LLM side by side (docs/cli.md),
  // whenever one of them serves it.
  CHECK((!default_serving || j["choice"].is_null() || j.contains("engines")));
  CHECK((default_serving || !j.contains("engines")));
  if (j.contains("engines")) {
    top.insert("engines");
    REQUIRE(j["engines"].is_array());
    CHECK(j["engines"].size() == 3);
    for (const auto& e : j["engines"]) {
      const std::set<std::string> base{"engine", "chosen", "option"};
      std::set<std::string> with = base;
      with.insert(e["option"].is_null() ? "why_none" : "vs_choice");
      CHECK(keys(e) == with);
      if (!e["option"].is_null()) {
        CHECK(e["option"].contains("card"));
        CHECK(e["option"].contains("speed"));
      }
    }
  }
  CHECK(keys(j) == top);
  CHECK(keys(j["model"]) == k_model);
  check_keys(j["job"], k_job, k_job_sized);
  for (const auto& d : j["job"]["defaults"]) {
    CHECK(keys(d) == std::set<std::string>{"key", "value", "why"});
    CHECK_FALSE(d["why"].get<std::string>().empty());
  }
  CHECK(keys(j["memory"]) == k_memory);
  if (!j["choice"].is_null()) {
    check_keys(j["choice"], k_choice, k_option_sized);
    CHECK(j["choice"].contains("serve") == (j["job"]["task"] == "serve"));
    check_speed(j["choice"]["speed"]);
  }
  if (j["job"].contains("startup")) {
    CHECK(keys(j["job"]["startup"]) == k_startup);
  }
  if (j["job"].contains("mode")) {
    CHECK(j["job"]["mode"] == "batch");
  }
  for (const auto& o : j["options"]) {
    if (o["fits"].get<bool>() && o["runs"]["status"] != "refused") {
      check_keys(o, k_option, k_option_sized);
      CHECK(o.contains("serve") == (j["job"]["task"] == "serve"));
      if (o.contains("serve")) {
        CHECK(keys(o["serve"]) == k_serve);
      }
      check_speed(o["speed"]);
    } else {
      check_keys(o, k_option_misfit, {"node_link", "instance_type", "upstream", "gpu_only", "attach"});
    }
    CHECK(keys(o["runs"]) == std::set<std::string>{"status", "why", "flags"});
  }
  for (const auto& f : j["fixes"]) {
    CHECK(keys(f) == k_fix);
    CHECK(f["flags"].is_object());
  }
  CHECK(j["launch"].is_object());
}

}  // namespace

TEST_CASE("plan command: --json holds exactly the contract's keys", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "llama-3.1-8b", "--gpus", "1", "--json"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  const Json j = parse_one(r.out);
  check_contract(j);
  CHECK_FALSE(j.contains("serve"));
  CHECK(j["model"]["name"] == "llama-3.1-8b");
  CHECK(j["model"]["source"] == "catalog");
  CHECK(j["model"]["params"] == 8030261248ULL);
  CHECK(j["job"]["task"] == "infer");
  CHECK(j["job"]["engine"] == "transformers");
  CHECK(j["job"]["weights"] == "bf16");
  CHECK(j["job"]["context"] == 4096);
  CHECK(j["job"]["gpus"] == 1);
  CHECK(j["job"]["shard"] == "none");
  REQUIRE(j["choice"].is_object());
  CHECK(j["choice"]["currency"] == "USD");
  CHECK(j["fixes"].empty());
  // weights of an 8B model in bf16: ~14.96 GiB
  CHECK(j["memory"]["weights_gib"].get<double>() == Approx(14.96).margin(0.05));
  const double peak = j["memory"]["peak_allocated_gib"].get<double>();
  CHECK(j["memory"]["total_gib"].get<double>() >= peak);
  // The choice is the first option and fits.
  REQUIRE_FALSE(j["options"].empty());
  CHECK(j["options"][0]["fits"] == true);
  CHECK(j["options"][0]["provider"] == j["choice"]["provider"]);
  CHECK(j["options"][0]["cost"] == j["choice"]["cost"]);
}

TEST_CASE("plan command: --json streamed option by option is exactly the document dumped with indent 2", "[cli][plan]")
{
  // write_plan_json never holds the whole options array; what it prints must be byte for byte
  // what nlohmann's dump(2) of the same document prints (keys in order, nesting, no options,
  // a refused or non-fitting plan, a recipe).
  const std::vector<std::vector<std::string>> jobs = {
      {"plan", "llama-3.1-8b", "--json"},
      {"plan", "llama-3.1-70b", "--task", "serve", "--json"},
      {"plan", "llama-3.1-8b", "--task", "lora", "--tokens", "50M", "--json"},
      {"plan", "deepseek-v3", "--requests", "1000", "--json"},
  };
  for (const auto& args : jobs) {
    CliHarness h;
    const auto r = h.run(args);
    REQUIRE(r.code == 0);  // a failing plan's document carries the error, merged after it
    std::string line;
    for (const auto& a : args) {
      line += a + " ";
    }
    INFO(line);
    REQUIRE_FALSE(r.out.empty());
    CHECK(r.out == nlohmann::ordered_json::parse(r.out).dump(2) + "\n");
  }
  // No options at all, and options of every shape, written directly.
  gpurent::PlanReport report;
  const auto same = [&report] {
    std::ostringstream streamed;
    gpurent::write_plan_json(streamed, report);
    CHECK(streamed.str() == gpurent::plan_to_json(report).dump(2));
  };
  same();
  gpurent::PlanOption fits;
  fits.fits = true;
  fits.provider = "runpod";
  fits.speed.bound = "memory";
  fits.speed.basis = "a \"quoted\"\nline";
  fits.runs.flags["vllm"] = "--dtype half";
  gpurent::PlanOption misfit = fits;
  misfit.fits = false;
  misfit.nodes = 2;
  report.result.options = {fits, misfit, fits};
  same();
  // Every field the options carry, in many combinations: the direct writer (cli/json_writer) must
  // print what nlohmann prints, escapes and number formats included.
  const std::vector<std::string> texts = {"", "CA", "Texas, US", "caf\xc3\xa9 \xe2\x82\xac", "a\tb\x01\x7f", "q\"\\", "1x_H100"};
  const std::vector<double> rates = {0.0, 0.05, 1.0, 12.25, 1234567.891, 1e-7, 3.5e21, -0.0};
  std::vector<gpurent::PlanOption> all;
  for (std::uint32_t i = 0; i < 160; ++i) {
    gpurent::PlanOption o;
    const auto t = [&](std::uint32_t k) { return texts[(i * 7 + k * 3) % texts.size()]; };
    const auto d = [&](std::uint32_t k) { return rates[(i * 5 + k) % rates.size()]; };
    o.provider = t(0);
    o.card = t(1);
    o.region = t(2);
    o.price_source = t(3);
    o.price_date = t(4);
    o.instance_type = t(5);
    o.upstream = t(6);
    o.rentable = i % 3 == 0;
    o.gpu_only = i % 5 == 1;
    o.gpus = 1 + i % 8;
    o.nodes = 1 + (i / 8) % 3;
    o.node_link = t(7);
    o.fits = i % 4 != 3;
    o.headroom = (i % 2 == 0 ? 1 : -1) * static_cast<std::int64_t>(i) * 123'456'789;
    o.price_per_hour = gpurent::MicroUsd{static_cast<std::int64_t>(i) * 10'007};
    o.cost = gpurent::MicroUsd{static_cast<std::int64_t>(i) * 3'333'333};
    o.billing_rule.increment = std::chrono::seconds{i % 2 == 0 ? 60 : 3600};
    o.billing_source = i % 2 == 0 ? "unknown" : "https://example.com/billing";
    o.runs.status = static_cast<gpurent::RunStatus>(i % 4);
    o.runs.why = t(8);
    if (i % 3 == 1) {
      o.runs.flags = {{"vllm", t(9)}, {"sglang", t(10)}};
    }
    if (i % 2 == 0) {
      o.speed.prefill_tokens_per_s = d(0);
      o.speed.decode_tokens_per_s = d(1);
    }
    if (i % 3 == 0) {
      o.speed.serve_output_tokens_per_s = d(2);
      o.speed.concurrency = i;
      o.speed.input_len = 2 * i;
      o.speed.output_len = 3 * i;
      o.speed.per_user_tokens_per_s = d(3);
      o.serve = gpurent::ServeShape{1 + i % 3, 1 + i, 1000ULL * i, i % 2 == 0, {}};
      if (i % 2 == 1) {
        o.serve->misses = {t(11), t(12)};
        o.speed.ttft_s = d(4);
      }
    }
    if (i % 5 == 0) {
      o.speed.train_tokens_per_s = d(5);
      o.speed.network_step_s = d(6);
    }
    if (i % 7 == 0) {
      o.speed.compute_step_s = d(7);
      o.speed.unknown = {t(13), t(14)};
    }
    o.speed.bound = t(15);
    o.speed.range_pct = i % 40;
    o.speed.basis = t(16);
    o.tight = i % 2 == 1;
    if (i % 4 == 0) {
      o.hours = std::chrono::seconds{static_cast<std::int64_t>(i) * 977};
      o.startup = std::chrono::seconds{i};
      o.job_cost = gpurent::MicroUsd{static_cast<std::int64_t>(i) * 1'234'567};
    }
    if (i % 6 == 0) {
      o.tokens_per_dollar = 1000ULL * i;
    }
    o.late = i % 9 == 0;
    all.push_back(o);
  }
  report.result.options = all;
  same();
}

TEST_CASE("plan command: serving reports the KV pool on the chosen card", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "llama-3.1-70b", "--task", "serve", "--json"});
  CHECK(r.code == 0);
  const Json j = parse_one(r.out);
  check_contract(j);
  REQUIRE(j.contains("serve"));
  CHECK(j["job"]["engine"] == "vllm");
  CHECK(j["serve"]["kv_pool_tokens"].get<std::uint64_t>() > 0);
  CHECK(j["launch"].contains("vllm"));
  if (j["job"]["gpus"].get<int>() > 1) {
    CHECK(j["job"]["shard"] == "tp");
  }
}

TEST_CASE("plan command: a card that does not fit gives exit 3, fixes, and choice null", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "llama-3.1-8b", "--task", "train", "--card", "RTX 4090", "--gpus", "1", "--json"});
  CHECK(r.code == 3);
  CHECK(r.err.find("gpurent: error: plan:") != std::string::npos);
  const Json j = parse_one(r.out);
  check_contract(j);
  CHECK(j["choice"].is_null());
  CHECK_FALSE(j["fixes"].empty());
  CHECK(j["memory"]["total_gib"].get<double>() > 22.0);
  for (const auto& o : j["options"]) {
    CHECK(o["card"] == "rtx-4090");
    CHECK(o["fits"] == false);
  }
}

TEST_CASE("plan command: nothing fits within 8 GPUs: exit 3 with fixes", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "llama-3.1-405b", "--task", "train", "--context", "8192", "--batch", "8", "--json"});
  CHECK(r.code == 3);
  const Json j = parse_one(r.out);
  check_contract(j);
  CHECK(j["choice"].is_null());
  CHECK_FALSE(j["fixes"].empty());
}

TEST_CASE("plan command: --params gives a weights-only estimate with a warning on stderr", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "--params", "7B", "--json"});
  CHECK(r.code == 0);
  CHECK(r.err.find("gpurent: warning:") != std::string::npos);
  const Json j = parse_one(r.out);
  check_contract(j);
  CHECK(j["model"]["source"] == "params");
  CHECK(j["model"]["params"] == 7000000000ULL);
  CHECK(j["memory"]["weights_gib"].get<double>() == Approx(13.04).margin(0.05));
  // --weights is honoured: seed 000's 14 / 7 / 3.5 GB at 16 / 8 / 4 bits (int4 with group-128 scales).
  for (const auto& [w, gib] : std::vector<std::pair<std::string, double>>{{"int8", 6.52}, {"int4", 3.39}, {"fp32", 26.08}}) {
    const Json q = parse_one(h.run({"plan", "--params", "7B", "--weights", w, "--gpus", "1", "--json"}).out);
    INFO(w);
    CHECK(q["job"]["weights"] == w);
    CHECK(q["memory"]["weights_gib"].get<double>() == Approx(gib).margin(0.02));
  }
}

TEST_CASE("plan command: bad values are usage errors (exit 2), one line on stderr, nothing on stdout", "[cli][plan]")
{
  const std::vector<std::vector<std::string>> cases = {
      {"plan", "llama-3.1-8b", "--hours", "-1"},
      {"plan", "llama-3.1-8b", "--hours", "abc"},
      {"plan", "llama-3.1-8b", "--gpus", "9"},
      {"plan", "llama-3.1-8b", "--gpus", "0"},
      {"plan", "llama-3.1-8b", "--gpu-util", "1.5"},
      {"plan", "llama-3.1-8b", "--context", "0"},
      {"plan", "llama-3.1-8b", "--context", "1000000"},
      {"plan", "llama-3.1-8b", "--batch", "-3"},
      {"plan", "llama-3.1-8b", "--task", "dance"},
      {"plan", "llama-3.1-8b", "--weights", "q9"},
      {"plan", "llama-3.1-8b", "--card", "voodoo 5"},
      {"plan", "llama-3.1-8b", "--provider", "nobody"},
      {"plan", "llama-3.1-8b", "--max-price", "free"},
      {"plan", "llama-3.1-8b", "--task", "train", "--engine", "vllm"},
      {"plan", "llama-3.1-8b", "--task", "qlora", "--weights", "bf16"},
      {"plan", "llama-3.1-8b", "--task", "lora", "--grad-checkpointing", "--no-grad-checkpointing"},
      {"plan", "llama-3.1-8b", "--no-grad-checkpointing"},
      {"plan", "llama-3.1-8b", "--shard", "fsdp"},
      {"plan", "--params", "seven"},
      {"plan", "llama-3.1-8b", "--params", "7B"},
      {"plan"},
      {"plan", "llama-3.1-8b", "--no-such-flag"},
  };
  for (const auto& args : cases) {
    CliHarness h;
    const auto r = h.run(args);
    INFO(args.back() << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("gpurent: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("plan command: unknown model is an error naming what to do", "[cli][plan]")
{
  CliHarness h;
  const auto r = h.run({"plan", "no-such-model-xyz", "--offline"});
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("no-such-model-xyz") != std::string::npos);
}

TEST_CASE("plan command: text views match the golden files", "[cli][plan][golden]")
{
  struct Case {
    std::string golden;
    std::vector<std::string> args;
    int code;
  };
  const std::vector<Case> cases = {
      {"plan_llama-3.1-8b.txt", {"plan", "llama-3.1-8b"}, 0},
      // LoRA trains with gradient checkpointing by default: an 8B fits a 24 GB card.
      {"plan_lora_rtx4090.txt", {"plan", "llama-3.1-8b", "--task", "lora", "--card", "RTX 4090"}, 0},
      {"plan_gemma27b_lora_4090_recipe.txt", {"plan", "gemma-2-27b", "--task", "lora", "--card", "RTX 4090", "--gpus", "1"}, 3},
      {"plan_serve_70b_3gpus.txt", {"plan", "llama-3.1-70b", "--task", "serve", "--card", "RTX 4090", "--gpus", "3"}, 3},
      {"plan_serve_70b.txt", {"plan", "llama-3.1-70b", "--task", "serve"}, 0},
      {"plan_train_4090_nofit.txt", {"plan", "llama-3.1-8b", "--task", "train", "--card", "RTX 4090", "--gpus", "1"}, 3},
      {"plan_params_7b.txt", {"plan", "--params", "7B", "--hours", "2.5"}, 0},
  };
  for (const auto& c : cases) {
    CliHarness h;
    const auto r = h.run(c.args);
    INFO(c.golden << "\n" << r.err);
    CHECK(r.code == c.code);
    check_golden(c.golden, r.out);
    // Readable at 80 columns, no colour without a TTY.
    std::size_t width = 0;
    for (std::size_t i = 0, start = 0; i <= r.out.size(); ++i) {
      if (i == r.out.size() || r.out[i] == '\n') {
        width = std::max(width, gpurent::display_width(std::string_view(r.out).substr(start, i - start)));
        start = i + 1;
      }
    }
    CHECK(width <= 80);
    CHECK(r.out.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("plan command: colour only on a TTY without NO_COLOR", "[cli][plan]")
{
  CliHarness h;
  h.stdout_tty = true;
  CHECK(h.run({"plan", "llama-3.1-8b"}).out.find('\x1b') != std::string::npos);
  h.env["NO_COLOR"] = "1";
  CHECK(h.run({"plan", "llama-3.1-8b"}).out.find('\x1b') == std::string::npos);
  h.env.erase("NO_COLOR");
  CHECK(h.run({"plan", "llama-3.1-8b", "--no-color"}).out.find('\x1b') == std::string::npos);
  CHECK(h.run({"plan", "llama-3.1-8b", "--json"}).out.find('\x1b') == std::string::npos);
}

TEST_CASE("plan --nodes: a 405B full fine-tune is planned across servers of one provider", "[cli][plan][nodes]")
{
  CliHarness h;
  const auto r = h.run({"plan", "llama-3.1-405b", "--task", "train", "--grad-checkpointing", "--json"});
  CHECK(r.code == 0);
  const Json j = parse_one(r.out);
  check_contract(j);
  REQUIRE_FALSE(j["choice"].is_null());
  const auto n = j["choice"]["nodes"].get<std::uint32_t>();
  CHECK(n > 1);
  CHECK(n <= 16);  // RunPod's Instant Clusters: 2 to 16 nodes
  CHECK(j["choice"]["provider"] == "runpod");
  CHECK(j["choice"]["gpus"] == 8);
  CHECK(j["job"]["nodes"] == n);
  CHECK(j["choice"]["node_link"].get<std::string>().find("Instant Clusters") != std::string::npos);
  CHECK(j["memory"]["total_gib"].get<double>() < j["choice"]["vram_gib"].get<double>());
  // The cost is every server's: n x the hourly price for --hours 1 under per-second billing.
  CHECK(j["choice"]["cost"].get<double>() == Approx(j["choice"]["price_per_hour"].get<double>() * n).margin(0.011));
  CHECK(j["launch"]["transformers"].get<std::string>().find(fmt::format("--nnodes {}", n)) != std::string::npos);
  // Text: the choice names the servers and their link.
  const auto t = h.run({"plan", "llama-3.1-405b", "--task", "train", "--grad-checkpointing"});
  CHECK(t.code == 0);
  CHECK(t.out.find(fmt::format("{} servers x 8 x H200", n)) != std::string::npos);
  CHECK(t.out.find("between servers: Instant Clusters 3200 Gbit/s per server") != std::string::npos);
}

TEST_CASE("plan --nodes: 1 keeps one server, N prices N servers", "[cli][plan][nodes]")
{
  CliHarness h;
  const auto one = h.run({"plan", "llama-3.1-405b", "--task", "train", "--grad-checkpointing", "--nodes", "1", "--json"});
  CHECK(one.code == 3);
  const Json j1 = parse_one(one.out);
  CHECK(j1["choice"].is_null());
  CHECK(j1["job"]["nodes"] == 1);
  const auto text = h.run({"plan", "llama-3.1-405b", "--task", "train", "--grad-checkpointing", "--nodes", "1"});
  CHECK(text.out.find("Nothing fits within 8 GPUs of one server") != std::string::npos);
  const auto n16 = h.run({"plan", "llama-3.1-405b", "--task", "train", "--grad-checkpointing", "--nodes", "16", "--json"});
  CHECK(n16.code == 0);
  const Json j16 = parse_one(n16.out);
  check_contract(j16);
  CHECK(j16["choice"]["nodes"] == 16);
  for (const auto& o : j16["options"]) {
    CHECK(o["nodes"] == 16);
  }
  // A model that fits one server: the same choice as without --nodes.
  const Json a = parse_one(h.run({"plan", "llama-3.1-8b", "--json"}).out);
  const Json b = parse_one(h.run({"plan", "llama-3.1-8b", "--nodes", "1", "--json"}).out);
  CHECK(a["choice"] == b["choice"]);
  CHECK(a["options"] == b["options"]);
  CHECK(a["choice"]["nodes"] == 1);
}

TEST_CASE("plan --nodes: 0, 65 and abc are usage errors (exit 2), one JSON error with --json", "[cli][plan][nodes]")
{
  CliHarness h;
  for (const char* bad : {"0", "65", "abc", "-1", "2.5"}) {
    INFO(bad);
    const auto r = h.run({"plan", "llama-3.1-8b", "--nodes", bad});
    CHECK(r.code == 2);
    CHECK(r.err.find("--nodes") != std::string::npos);
    const auto j = h.run({"plan", "llama-3.1-8b", "--nodes", bad, "--json"});
    CHECK(j.code == 2);
    const Json e = parse_one(j.out);
    CHECK(e["error"]["code"] == "usage");
    CHECK(e["error"]["exit"] == 2);
  }
}

TEST_CASE("plan command: --compile reaches the speed, the launch line and the job, and eager is the default", "[cli][plan]")
{
  CliHarness h;
  const std::vector<std::string> base = {"plan", "llama-3.1-8b", "--task", "lora", "--card", "a100-80gb-sxm", "--gpus", "1",
                                         "--micro-batch", "4", "--pack", "--tokens", "100000000", "--json"};
  const auto eager_run = h.run(base);
  auto compiled_args = base;
  compiled_args.push_back("--compile");
  const auto compiled_run = h.run(compiled_args);
  REQUIRE(eager_run.code == 0);
  REQUIRE(compiled_run.code == 0);
  const Json eager = parse_one(eager_run.out);
  const Json compiled = parse_one(compiled_run.out);
  check_contract(compiled);
  CHECK(eager["job"]["compile"] == false);
  CHECK(compiled["job"]["compile"] == true);
  const double e = eager["choice"]["speed"]["train_tokens_per_s"].get<double>();
  const double c = compiled["choice"]["speed"]["train_tokens_per_s"].get<double>();
  // torchtune's measured gain of compiling (8998 / 7075 tokens/s), on a compute-bound step.
  CHECK(c / e == Approx(8998.0 / 7075.0).epsilon(0.02));
  CHECK(compiled["choice"]["hours"].get<double>() < eager["choice"]["hours"].get<double>());
  CHECK(compiled["launch"]["transformers"].get<std::string>().find("--torch_compile True") != std::string::npos);
  CHECK(eager["launch"]["transformers"].get<std::string>().find("--torch_compile") == std::string::npos);
  // torchtune's line says compile=True.
  auto tune_args = compiled_args;
  tune_args.insert(tune_args.end(), {"--engine", "torchtune"});
  const auto tune = h.run(tune_args);
  REQUIRE(tune.code == 0);
  CHECK(parse_one(tune.out)["launch"]["torchtune"].get<std::string>().find(" compile=True") != std::string::npos);
  // Not for inference, not for Unsloth (it compiles its own kernels).
  const auto infer = h.run({"plan", "llama-3.1-8b", "--compile", "--json"});
  CHECK(infer.code == 2);
  CHECK(parse_one(infer.out)["error"]["message"].get<std::string>().find("training step") != std::string::npos);
  const auto unsloth = h.run({"plan", "llama-3.1-8b", "--task", "qlora", "--engine", "unsloth", "--compile", "--json"});
  CHECK(unsloth.code == 2);
  CHECK(parse_one(unsloth.out)["error"]["message"].get<std::string>().find("Unsloth") != std::string::npos);
}

TEST_CASE("plan command: training chooses its micro-batch per card and says so (plan v4)", "[cli][plan]")
{
  CliHarness h;
  // Packed, a B200's spare memory becomes a larger micro-batch; the launch line carries it.
  const auto big = h.run({"plan", "llama-3.1-8b", "--task", "lora", "--card", "b200", "--gpus", "1", "--pack", "--json"});
  REQUIRE(big.code == 0);
  const Json b = parse_one(big.out);
  check_contract(b);
  CHECK(b["job"]["micro_batch_chosen"] == true);
  CHECK(b["job"]["pack"] == true);
  const auto m = b["job"]["micro_batch"].get<std::uint32_t>();
  CHECK(m >= 8);
  const std::string launch = b["launch"]["transformers"].get<std::string>();
  CHECK(launch.find("--per_device_train_batch_size " + std::to_string(m) + " ") != std::string::npos);
  CHECK(launch.find("--packing") != std::string::npos);
  // On a 24 GB card, less.
  const auto small = h.run({"plan", "llama-3.1-8b", "--task", "lora", "--card", "rtx-4090", "--gpus", "1", "--pack",
                            "--json"});
  REQUIRE(small.code == 0);
  CHECK(parse_one(small.out)["job"]["micro_batch"].get<std::uint32_t>() < m);
  // Given, it is kept, with the accumulation, in memory, speed and launch alike.
  const auto given = h.run({"plan", "llama-3.1-8b", "--task", "lora", "--card", "b200", "--gpus", "1",
                            "--micro-batch", "2", "--grad-accum", "16", "--json"});
  REQUIRE(given.code == 0);
  const Json g = parse_one(given.out);
  CHECK(g["job"]["micro_batch"] == 2);
  CHECK(g["job"]["micro_batch_chosen"] == false);
  CHECK(g["job"]["grad_accum"] == 16);
  const std::string gl = g["launch"]["transformers"].get<std::string>();
  CHECK(gl.find("--per_device_train_batch_size 2 --gradient_accumulation_steps 16") != std::string::npos);
  // Activations grow with the micro-batch: two sequences hold 2/m of the chosen m's.
  CHECK(g["memory"]["activations_gib"].get<double>() ==
        Approx(b["memory"]["activations_gib"].get<double>() * 2.0 / m).margin(0.05));
  // Bad values: usage errors, nothing on stdout.
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--task", "lora", "--micro-batch", "0"},
                                              {"--task", "lora", "--grad-accum", "abc"},
                                              {"--task", "serve", "--pack"}}) {
    std::vector<std::string> args{"plan", "llama-3.1-8b", "--offline"};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = h.run(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
  }
}

TEST_CASE("JSON writer: every byte at every place of a word is escaped as nlohmann escapes it", "[cli][plan][json]")
{
  // The writer tests eight bytes at a time for one that needs escaping: a byte at any of the
  // places of a word, and in the tail after the last whole word, must still be found.
  const auto writer_text = [](const std::string& s) {
    std::string out;
    gpurent::JsonWriter w(out);
    w.string(s);
    return out;
  };
  for (std::size_t len : {1U, 7U, 8U, 9U, 16U, 19U}) {
    for (std::size_t at = 0; at < len; ++at) {
      for (int b = 1; b < 256; ++b) {
        std::string s(len, 'a');
        s[at] = static_cast<char>(b);
        INFO("length " << len << ", byte " << b << " at " << at);
        std::string expected;
        try {
          expected = nlohmann::json(s).dump();
        } catch (const nlohmann::json::type_error&) {
          CHECK_THROWS_AS(writer_text(s), nlohmann::json::type_error);  // invalid UTF-8, as nlohmann says
          continue;
        }
        CHECK(writer_text(s) == expected);
      }
      std::string utf8(len + 1, 'a');
      utf8.replace(at, 2, "\xc3\xa9");  // é: valid UTF-8 across any place
      CHECK(writer_text(utf8) == nlohmann::json(utf8).dump());
    }
  }
}

TEST_CASE("JSON writer: numbers print as nlohmann prints them", "[cli][plan][json]")
{
  // Decimals of at most two places take the writer's short path; everything else nlohmann's own
  // formatting. Either way the characters are nlohmann's.
  const auto writer_text = [](double d) {
    std::string out;
    gpurent::JsonWriter w(out);
    w.number(d);
    return out;
  };
  std::size_t checked = 0;
  for (std::int64_t k = -200000; k <= 200000; k += 7) {
    for (const double d : {static_cast<double>(k) / 100.0, static_cast<double>(k) / 10.0, static_cast<double>(k),
                           static_cast<double>(k) / 1000.0, static_cast<double>(k) / 3.0}) {
      INFO(k << ": " << nlohmann::json(d).dump());
      CHECK(writer_text(d) == nlohmann::json(d).dump());
      ++checked;
    }
  }
  for (const double d : {0.0, -0.0, 1e11 + 0.25, 99999999999.99, 1e12, 1e15 + 0.5, 1e-7, 0.01, -0.01, 0.1 + 0.2,
                         123456789.12, 5e-324, 1.7976931348623157e308}) {
    INFO(nlohmann::json(d).dump());
    CHECK(writer_text(d) == nlohmann::json(d).dump());
  }
  CHECK(checked > 250000);
}
