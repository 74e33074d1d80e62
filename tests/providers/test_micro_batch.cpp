// SPDX-License-Identifier: MIT
// Training sized by its batch (cli.md plan v4; docs/speed.md "Micro-batch and packing"): the
// speed rises with the micro-batch's tokens until compute-bound, as llm-foundry's runs of one
// model at several micro-batches show; unpacked batches pay their padding; the plan's own
// micro-batch turns a large card's spare memory into a larger micro-batch where that trains
// faster; the flags reach memory, speed and the launch line alike.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "providers/card.hpp"
#include "planner/micro_batch.hpp"
#include "planner/speed.hpp"
#include "providers/speed_cases.hpp"
#include "sizing/estimate.hpp"
#include "planner/launch.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec lora_8b(std::uint32_t micro, bool pack)
{
  JobSpec j;
  j.model = *find_model("llama-3.1-8b");
  j.task = Task::lora;
  j.engine = Engine::transformers;
  j.weights = WeightFormat::bf16;
  j.grad_checkpointing = true;
  j.context = 4096;
  j.batch = micro;
  j.pack = pack;
  return j;
}

double train_speed(const JobSpec& j, const Card& c) { return *estimate_speed(j, c, SpeedLoad{}).train_tokens_per_s; }

Bytes total(const JobSpec& j) { return estimate(j).total(); }

}  // namespace

TEST_CASE("training speed rises with the micro-batch until compute-bound", "[speed][micro_batch]")
{
  const Card h100 = *find_card("h100-sxm");
  for (const std::uint32_t context : {512U, 4096U}) {
    double last = 0;
    for (const std::uint32_t m : {1U, 2U, 4U, 8U, 16U, 32U}) {
      JobSpec j = lora_8b(m, true);
      j.context = context;
      const double s = train_speed(j, h100);
      INFO("context " << context << " micro-batch " << m);
      CHECK(s > last);
      last = s;
    }
    // Saturated: doubling 16 -> 32 sequences gains little more than the utilisation left.
    JobSpec a = lora_8b(16, true), b = lora_8b(32, true);
    a.context = b.context = context;
    const double half = speed_constants(SpeedEngine::trainer).train_half_tokens;
    CHECK(train_speed(b, h100) / train_speed(a, h100) < 1.0 + 2.0 * half / (16.0 * context));
  }
  // Short sequences gain far more from a larger micro-batch than long ones.
  JobSpec s1 = lora_8b(1, true), s32 = lora_8b(32, true), l1 = lora_8b(1, true), l32 = lora_8b(32, true);
  s1.context = s32.context = 512;
  CHECK(train_speed(s32, h100) / train_speed(s1, h100) > train_speed(l32, h100) / train_speed(l1, h100) + 0.5);
}

TEST_CASE("the micro-batch term follows llm-foundry's runs of one model at several micro-batches", "[speed][micro_batch]")
{
  // Rows of one model, sequence, card and precision at different micro-batches: where the
  // measured per-GPU rate differs by more than 3%, the model orders them the same way.
  const auto cases = test::load_speed_cases(GPURENT_TEST_DATA "/speed/measurements.json");
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::string, WeightFormat>, std::vector<const test::SpeedCase*>> groups;
  for (const auto& c : cases) {
    if (c.kind == "train" && c.id.starts_with("llmfoundry")) {
      groups[{c.job.model.params, c.job.context, c.card.id, c.job.weights}].push_back(&c);
    }
  }
  std::size_t pairs = 0;
  for (const auto& [key, rows] : groups) {
    for (const auto* a : rows) {
      for (const auto* b : rows) {
        if (a->job.batch >= b->job.batch) {
          continue;
        }
        const double measured = (b->measured / b->job.gpus) / (a->measured / a->job.gpus);
        if (measured > 0.97 && measured < 1.03) {
          continue;
        }
        const auto& k = speed_constants(SpeedEngine::trainer);
        const double predicted = (test::predict(*b, k) / b->job.gpus) / (test::predict(*a, k) / a->job.gpus);
        INFO(a->id << " (micro-batch " << a->job.batch << ") vs " << b->id << " (" << b->job.batch << "): measured "
                   << measured << ", predicted " << predicted);
        CHECK((measured > 1.0) == (predicted > 1.0));
        CHECK(std::abs(predicted / measured - 1.0) < 0.08);
        ++pairs;
      }
    }
  }
  CHECK(pairs >= 3);  // MPT-30B (3 vs 10 vs 14), MPT-70B (2 vs 8), MPT-3B (6 vs 10) on H100
}

TEST_CASE("unpacked batches of several sequences pay the padding, one sequence or packing does not", "[speed][micro_batch]")
{
  const Card h100 = *find_card("h100-sxm");
  const Speed one = estimate_speed(lora_8b(1, false), h100, SpeedLoad{});
  const Speed four = estimate_speed(lora_8b(4, false), h100, SpeedLoad{});
  const Speed packed = estimate_speed(lora_8b(4, true), h100, SpeedLoad{});
  CHECK(one.train_useful_share == 1.0);
  CHECK(four.train_useful_share == Approx(1.0 / 1.4));
  CHECK(packed.train_useful_share == 1.0);
  CHECK(*packed.train_tokens_per_s / *four.train_tokens_per_s == Approx(1.4));
  // At 4096 tokens one unpadded sequence beats four padded ones.
  CHECK(*one.train_tokens_per_s > *four.train_tokens_per_s);
}

TEST_CASE("the plan's micro-batch: a large card's spare memory becomes a larger one where it trains faster", "[micro_batch]")
{
  const Card b200 = *find_card("b200");
  const Card l40s = *find_card("l40s");  // 48 GB
  JobSpec packed = lora_8b(1, true);
  packed.micro_batch_chosen = true;
  const SpeedFigures f = speed_figures(packed);
  const JobSpec big = with_chosen_micro_batch(packed, b200, f, total);
  const JobSpec small = with_chosen_micro_batch(packed, l40s, f, total);
  CHECK(big.batch >= 8);
  CHECK(small.batch > 1);
  CHECK(small.batch < big.batch);
  for (const auto& [j, c] : {std::pair{big, b200}, std::pair{small, l40s}}) {
    INFO(c.id << " micro-batch " << j.batch);
    CHECK(total(j) <= fit_limit_for(j, c.usable));
    // Nothing that fits trains more than 1% faster.
    for (std::uint32_t m = 1; m <= k_max_chosen_micro_batch; ++m) {
      JobSpec t = j;
      t.batch = m;
      if (total(t) <= fit_limit_for(t, c.usable)) {
        CHECK(train_speed(t, c) <= train_speed(j, c) * 1.0101);
      }
    }
  }
  // Unpacked at 4096 tokens padding costs more than the utilisation gains: one sequence.
  JobSpec unpacked = lora_8b(1, false);
  unpacked.micro_batch_chosen = true;
  CHECK(with_chosen_micro_batch(unpacked, b200, f, total).batch == 1);
  // A micro-batch the user gave is kept.
  JobSpec given = lora_8b(3, true);
  CHECK(with_chosen_micro_batch(given, b200, f, total).batch == 3);
}

TEST_CASE("micro-batch, accumulation and packing reach memory, speed and the launch line alike", "[micro_batch]")
{
  const Card h100 = *find_card("h100-sxm");
  JobSpec j = lora_8b(4, true);
  j.grad_accumulation = 8;
  const JobSpec one = lora_8b(1, true);
  CHECK(estimate(j).activations.n > 3 * estimate(one).activations.n);
  CHECK(train_speed(j, h100) > train_speed(one, h100));
  const std::string trl = launch_commands(j, "meta-llama/Llama-3.1-8B").at("transformers");
  CHECK(trl.find("--per_device_train_batch_size 4") != std::string::npos);
  CHECK(trl.find("--gradient_accumulation_steps 8") != std::string::npos);
  CHECK(trl.find("--packing") != std::string::npos);
  JobSpec tune = j;
  tune.engine = Engine::torchtune;
  const std::string tt = launch_commands(tune, "meta-llama/Llama-3.1-8B").at("torchtune");
  CHECK(tt.find("batch_size=4 gradient_accumulation_steps=8") != std::string::npos);
  CHECK(tt.find("dataset.packed=True") != std::string::npos);
}
