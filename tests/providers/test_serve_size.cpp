// SPDX-License-Identifier: MIT
// size_serving (planner/serve_size.hpp): a serving workload of C sequences of I + O tokens on
// servers of one shape. Properties over random workloads: the replicas hold C, each replica's KV
// pool holds its share, one replica fewer would not do, and the per-user speed and the time to
// first token move the way the load moves them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/rank.hpp"
#include "planner/serve_size.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec served(const char* model, std::uint32_t context, std::uint32_t gpus)
{
  JobSpec j;
  j.model = *find_model(model);
  j.task = Task::serve;
  j.engine = Engine::vllm;
  j.weights = WeightFormat::bf16;
  j.context = context;
  return job_for_gpus(j, gpus, std::nullopt);
}

const Estimator k_estimate = [](const JobSpec& j) { return estimate(j); };

SpeedLoad load_of(std::uint32_t c, std::uint32_t in, std::uint32_t out)
{
  SpeedLoad l;
  l.concurrency = c;
  l.input_len = in;
  l.output_len = out;
  return l;
}

// Whether one replica with `seqs` sequences fits and meets the targets (what size_serving must
// have found false for one replica fewer).
bool replica_works(const JobSpec& there, const Card& card, const SpeedLoad& load, const ServeTargets& t,
                   std::uint32_t seqs)
{
  JobSpec j = there;
  j.batch = seqs;
  j.max_seqs = seqs;
  const MemoryEstimate m = estimate(j);
  const std::uint64_t seq = std::uint64_t{load.input_len} + load.output_len;
  if (m.total() > fit_limit_for(j, card.usable) || serve_pool(j, m, card.usable).kv_pool_tokens < seqs * seq) {
    return false;
  }
  SpeedLoad l = load;
  l.concurrency = seqs;
  return target_misses(estimate_speed(j, card, l), t).empty();
}

}  // namespace

TEST_CASE("size_serving: random workloads are held by the fewest replicas that fit and meet the target",
          "[providers][serve]")
{
  const Card card = *find_card("h100-sxm");
  std::mt19937 rng(2040);
  std::uniform_int_distribution<std::uint32_t> conc(1, 2000);
  std::uniform_int_distribution<std::uint32_t> in(1, 30000);
  std::uniform_int_distribution<std::uint32_t> out(1, 4000);
  std::uniform_int_distribution<std::uint32_t> gpus(0, 3);
  const ServeTargets targets;
  for (int i = 0; i < 60; ++i) {
    const std::uint32_t c = conc(rng), ilen = in(rng), olen = out(rng), g = 1U << gpus(rng);
    INFO("C " << c << " I " << ilen << " O " << olen << " GPUs " << g);
    const JobSpec there = served("llama-3.1-8b", ilen + olen, g);
    const SpeedLoad load = load_of(c, ilen, olen);
    const SpeedFigures figures = speed_figures(there);
    const ServeSizing s = size_serving(there, card, load, targets, k_estimate, figures);
    REQUIRE(s.fits);
    const ServeShape& sh = s.shape;
    CHECK(sh.replicas * sh.per_replica >= c);
    CHECK((sh.replicas - 1) * sh.per_replica < c);
    CHECK(sh.per_replica == (c + sh.replicas - 1) / sh.replicas);
    CHECK(sh.kv_pool_tokens >= std::uint64_t{sh.per_replica} * (ilen + olen));
    // The replica's job is what its launch line and memory read.
    CHECK(s.job.batch == sh.per_replica);
    CHECK(s.job.max_seqs == sh.per_replica);
    CHECK(s.memory.kv_cache == kv_cache_bytes(s.job, ilen + olen, sh.per_replica));
    CHECK(replica_works(there, card, load, targets, sh.per_replica) == sh.meets_targets);
    if (sh.meets_targets && sh.replicas > 1) {
      // One replica fewer would need a larger share that does not fit or misses the target.
      CHECK_FALSE(replica_works(there, card, load, targets, (c + sh.replicas - 2) / (sh.replicas - 1)));
    }
    // All replicas together: C / share times one replica's rate.
    SpeedLoad one = load;
    one.concurrency = sh.per_replica;
    const Speed alone = estimate_speed(s.job, card, one);
    REQUIRE(alone.serve_output_tokens_per_s);
    CHECK(*s.speed.serve_output_tokens_per_s ==
          Approx(*alone.serve_output_tokens_per_s * c / sh.per_replica).epsilon(1e-9));
    CHECK(s.speed.concurrency == c);
  }
}

TEST_CASE("size_serving: the per-user speed falls and the first token slows as the load grows", "[providers][serve]")
{
  const Card card = *find_card("h100-sxm");
  const JobSpec there = served("qwen3-32b", 2400, 1);
  const SpeedFigures figures = speed_figures(there);
  double last_user = 1e300, last_ttft = 0;
  for (std::uint32_t c : {1U, 2U, 4U, 8U, 16U, 32U, 64U, 128U, 256U}) {
    INFO(c);
    const Speed s = estimate_speed(there, card, load_of(c, 2000, 400), figures);
    REQUIRE(s.per_user_tokens_per_s);
    REQUIRE(s.ttft_s);
    CHECK(*s.per_user_tokens_per_s < last_user);
    CHECK(*s.ttft_s > last_ttft);
    last_user = *s.per_user_tokens_per_s;
    last_ttft = *s.ttft_s;
  }
  // One request alone decodes at the decode rate, and its first token is its prompt's prefill
  // plus half a step.
  const Speed one = estimate_speed(there, card, load_of(1, 2000, 400), figures);
  CHECK(*one.per_user_tokens_per_s >= *one.serve_output_tokens_per_s);
  CHECK(*one.per_user_tokens_per_s == Approx(*one.decode_tokens_per_s).epsilon(0.1));
  CHECK(*one.ttft_s == Approx(2000.0 / *one.prefill_tokens_per_s).epsilon(0.25));
}

TEST_CASE("size_serving: a target nobody reaches is missed, by how much, at the fewest replicas that hold C",
          "[providers][serve]")
{
  const Card card = *find_card("h100-sxm");
  const JobSpec there = served("qwen3-32b", 2400, 1);
  ServeTargets t;
  t.min_user_tokens_per_s = 5000;
  t.max_ttft_s = 1e-6;
  const ServeSizing s = size_serving(there, card, load_of(100, 2000, 400), t, k_estimate, speed_figures(there));
  CHECK(s.fits);
  CHECK_FALSE(s.shape.meets_targets);
  REQUIRE(s.shape.misses.size() == 2);
  CHECK(s.shape.misses[0].find("below the 5000 tok/s target") != std::string::npos);
  CHECK(s.shape.misses[1].find("s over the 1e-06 s target") != std::string::npos);
  // The fewest replicas whose share fits: one fewer does not hold C.
  const std::uint32_t r = s.shape.replicas;
  REQUIRE(r > 1);
  JobSpec bigger = there;
  bigger.batch = bigger.max_seqs = (100 + r - 2) / (r - 1);
  const MemoryEstimate m = estimate(bigger);
  CHECK((m.total() > fit_limit_for(bigger, card.usable) ||
         serve_pool(bigger, m, card.usable).kv_pool_tokens < std::uint64_t{bigger.batch} * 2400));
}

TEST_CASE("size_serving: a model that does not fit one card does not fit with replicas either", "[providers][serve]")
{
  const Card card = *find_card("rtx-4090");
  const JobSpec there = served("qwen3-32b", 2400, 1);
  const ServeSizing s = size_serving(there, card, load_of(10, 2000, 400), ServeTargets{}, k_estimate, speed_figures(there));
  CHECK_FALSE(s.fits);
  CHECK(s.shape.replicas == 1);
}

TEST_CASE("size_serving: without a concurrency one server runs what its pool holds at the target", "[providers][serve]")
{
  const Card card = *find_card("h100-sxm");
  const JobSpec there = served("llama-3.1-8b", 4096, 1);
  const SpeedLoad none = load_of(0, 0, 0);
  const SpeedFigures figures = speed_figures(there);
  const ServeSizing s = size_serving(there, card, none, ServeTargets{}, k_estimate, figures);
  REQUIRE(s.fits);
  CHECK(s.shape.replicas == 1);
  const ServePool pool = serve_pool(there, estimate(there), card.usable);
  CHECK(s.shape.kv_pool_tokens == pool.kv_pool_tokens);
  CHECK(std::uint64_t{s.shape.per_replica} * 4096 <= pool.kv_pool_tokens);
  CHECK(s.shape.meets_targets);
  // A stricter target lowers the concurrency, never below one.
  ServeTargets strict;
  strict.min_user_tokens_per_s = 60;
  const ServeSizing fewer = size_serving(there, card, none, strict, k_estimate, figures);
  CHECK(fewer.shape.per_replica < s.shape.per_replica);
  CHECK(fewer.shape.per_replica >= 1);
  if (fewer.shape.meets_targets) {
    CHECK(*fewer.speed.per_user_tokens_per_s >= 60);
  }
}

namespace {

// The '|'-separated cells of a measurement's quoted table row.
std::vector<double> row_cells(const std::string& quote)
{
  std::vector<double> cells;
  std::size_t start = quote.find('|');
  while (start != std::string::npos) {
    const std::size_t end = quote.find('|', start + 1);
    if (end == std::string::npos) {
      break;
    }
    const std::string cell = quote.substr(start + 1, end - start - 1);
    char* stop = nullptr;
    const double v = std::strtod(cell.c_str(), &stop);
    cells.push_back(stop != cell.c_str() ? v : -1.0);
    start = end;
  }
  return cells;
}

const nlohmann::json& measured(const std::string& id)
{
  static const nlohmann::json all = [] {
    std::ifstream f(GPURENT_TEST_DATA "/speed/measurements.json");
    return nlohmann::json::parse(f);
  }();
  for (const auto& m : all) {
    if (m["id"] == id) {
      return m;
    }
  }
  FAIL("no measurement " << id);
  return all;
}

}  // namespace

// Per-user speed (1 / TPOT) and time to first token under a steady concurrency, against the
// public runs that report them (tests/data/speed/measurements.json; both name the card as "H100
// 80GB" without its form factor: taken as the SXM board, as their single-H100 and 2 x H100 NVLink
// set-ups are; docs/speed.md "Serving a workload").
TEST_CASE("size_serving: per-user speed and first token against measured runs at a fixed concurrency",
          "[providers][serve]")
{
  const Card card = *find_card("h100-sxm");
  const double spread = speed_range_pct(SpeedEngine::vllm, SpeedKind::serve) / 100.0;
  SECTION("vLLM, llama-3.1-8b, 8 requests of 20k + 2k tokens (vLLM blog, FP8 KV cache post, BF16 row)")
  {
    const auto& m = measured("vllm-blog-fp8kv-llama31-8b-bf16kv-h100-c8-20kin-2kout");
    const auto cells = row_cells(m["source_quote"].get<std::string>());  // Config | TTFT ms | ITL ms | s | tok/s
    REQUIRE(cells.size() == 5);
    const JobSpec there = served("llama-3.1-8b", 22000, 1);
    const Speed s = estimate_speed(there, card, load_of(8, 20000, 2000));
    INFO("TPOT model " << 1000.0 / *s.per_user_tokens_per_s << " ms, measured " << cells[2] << "; TTFT model "
                       << *s.ttft_s * 1000 << " ms, measured " << cells[1]);
    CHECK(std::abs(1000.0 / *s.per_user_tokens_per_s / cells[2] - 1) <= spread);
    CHECK(std::abs(*s.ttft_s * 1000 / cells[1] - 1) <= spread);
    CHECK(std::abs(*s.serve_output_tokens_per_s / cells[4] - 1) <= spread);
  }
  SECTION("NIM 1.8.0, llama-3.3-70b FP8 on 2 x H100, 25 requests of 5000 + 500 tokens")
  {
    const auto& m = measured("nim-1.8.0-llama33-70b-fp8-tp2-2xh100-c25");
    const auto cells = row_cells(m["source_quote"].get<std::string>());  // Concurrency | TTFT ms | ITL ms | tok/s
    REQUIRE(cells.size() == 4);
    JobSpec j;
    j.model = *find_model("llama-3.3-70b");
    j.task = Task::serve;
    j.engine = Engine::vllm;
    j.weights = WeightFormat::fp8;
    j.context = 5500;
    const JobSpec there = job_for_gpus(j, 2, std::nullopt);
    const Speed s = estimate_speed(there, card, load_of(25, 5000, 500));
    INFO("TPOT model " << 1000.0 / *s.per_user_tokens_per_s << " ms, measured " << cells[2] << "; TTFT model "
                       << *s.ttft_s * 1000 << " ms, measured " << cells[1]);
    CHECK(std::abs(1000.0 / *s.per_user_tokens_per_s / cells[2] - 1) <= spread);
    // Requests arriving together queue for each other's prefill, which the model leaves out: its
    // first token is a lower bound here (2.2 x under the measured one).
    CHECK(*s.ttft_s * 1000 < cells[1]);
  }
}

TEST_CASE("size_serving: llama.cpp holds a slot of the context per sequence, its -c cells the pool", "[providers][serve]")
{
  const Card card = *find_card("rtx-4090");
  JobSpec j;
  j.model = *find_model("llama-3.1-8b");
  j.task = Task::serve;
  j.engine = Engine::llama_cpp;
  j.weights = WeightFormat::gguf_q4_k_m;
  j.context = 2400;
  const JobSpec there = job_for_gpus(j, 1, std::nullopt);
  const ServeSizing s = size_serving(there, card, load_of(40, 2000, 400), ServeTargets{}, k_estimate, speed_figures(there));
  REQUIRE(s.fits);
  CHECK(s.shape.replicas * s.shape.per_replica >= 40);
  CHECK(s.job.batch == s.shape.per_replica);
  CHECK(s.job.max_seqs == 0);  // llama.cpp has no --max-num-seqs: -np is the batch
  CHECK(s.shape.kv_pool_tokens == std::uint64_t{2400} * s.shape.per_replica);
  CHECK(s.memory.kv_cache == kv_cache_bytes(s.job, 2400, s.shape.per_replica));
}
