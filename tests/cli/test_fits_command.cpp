// SPDX-License-Identifier: MIT
// `gpurent fits CARD`: golden text, the JSON keys, the search's answers, and its speed.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <set>

#include "cli_harness.hpp"
#include "providers/card.hpp"
#include "providers/plan.hpp"
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
  CHECK(top == std::set<std::string>{"card", "gpus", "task", "models"});
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
}

TEST_CASE("fits command: the whole catalogue takes well under 50 ms", "[cli][fits]")
{
  CliHarness h;
  h.run({"fits", "A100 80GB", "--json"});  // warm-up: the catalogues are built on first use
  const auto start = std::chrono::steady_clock::now();
  const auto r = h.run({"fits", "A100 80GB", "--task", "serve", "--json"});
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.code == 0);
  INFO(ms << " ms");
#if defined(__SANITIZE_ADDRESS__)
  CHECK(ms < 1000.0);
#else
  CHECK(ms < 50.0);
#endif
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
