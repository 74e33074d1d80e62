// SPDX-License-Identifier: MIT
// Fits the speed model's efficiency constants per engine on the fit half of
// tests/data/speed/measurements.json and prints them with the spread on the check half
// (docs/speed.md). Not a test: run it after the data or the formulas change, then copy the
// constants into planner/speed_constants.cpp and the spread into speed_range_pct().
//   build/speed_fit [tests/data/speed/measurements.json]
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "providers/speed_cases.hpp"

using namespace gpurent;
using namespace gpurent::test;

namespace {

const char* name(SpeedEngine e)
{
  switch (e) {
  case SpeedEngine::llama_cpp: return "llama.cpp";
  case SpeedEngine::vllm: return "vllm";
  case SpeedEngine::sglang: return "sglang";
  case SpeedEngine::tensorrt_llm: return "tensorrt-llm";
  case SpeedEngine::transformers: return "transformers";
  case SpeedEngine::trainer: return "trainer";
  }
  return "?";
}

double score(const std::vector<const SpeedCase*>& cases, const SpeedConstants& k)
{
  // Cases the model cannot predict (a card figure unknown) are left out, not scored.
  double sum = 0;
  std::size_t n = 0;
  for (const auto* c : cases) {
    if (const double p = predict(*c, k); p > 0) {
      sum += std::fabs(std::log(p / c->measured));
      ++n;
    }
  }
  return n == 0 ? 0 : sum / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv)
{
  const std::string path = argc > 1 ? argv[1] : GPURENT_TEST_DATA "/speed/measurements.json";
  std::vector<std::string> skipped;
  const auto cases = load_speed_cases(path, &skipped);
  for (const auto& s : skipped) {
    fmt::print("skipped {}\n", s);
  }
  std::map<SpeedEngine, std::vector<const SpeedCase*>> fit;
  // SGLang has too few measurements to fit its own constants: it runs on vLLM's (speed_constants.cpp),
  // and all its cases check them.
  for (const auto& c : cases) {
    if (c.fit && c.engine != SpeedEngine::sglang) {
      fit[c.engine].push_back(&c);
    }
  }
  std::map<SpeedEngine, SpeedConstants> best;
  for (const auto& [engine, rows] : fit) {
    SpeedConstants top{};  // a fixed start: the fit does not depend on the constants it replaces
    double top_score = score(rows, top);
    if (engine == SpeedEngine::trainer) {
      // 16-bit runs (before Hopper, and on Hopper/Blackwell data-centre cards) and FP8 runs each fit
      // their own peak utilisation, on the tokens per step at which a step reaches half of it (one
      // for all, swept on all the rows).
      double best_all = -1;
      SpeedConstants found = top;
      for (int half = 0; half <= 4000; half += 100) {
        SpeedConstants t = top;
        t.train_half_tokens = half;
        // Three groups: 16-bit on cards before Hopper (mfu), 16-bit on Hopper/Blackwell
        // data-centre cards (mfu_sm90), FP8 (mfu_fp8, measured on H100 only).
        enum class Group { bf16, bf16_sm90, fp8 };
        const auto group_of = [](const SpeedCase& c) {
          const bool sm90 = hbm_card(c.card) && c.card.compute_capability && *c.card.compute_capability >= 90;
          return c.job.weights == WeightFormat::fp8 ? Group::fp8 : sm90 ? Group::bf16_sm90 : Group::bf16;
        };
        for (const Group g : {Group::bf16, Group::bf16_sm90, Group::fp8}) {
          std::vector<const SpeedCase*> v;
          for (const auto* c : rows) {
            if (group_of(*c) == g) {
              v.push_back(c);
            }
          }
          double best_score = score(v, t);
          SpeedConstants best_t = t;
          for (int m = 5; m <= 90; ++m) {
            SpeedConstants k = t;
            (g == Group::fp8 ? k.mfu_fp8 : g == Group::bf16_sm90 ? k.mfu_sm90 : k.mfu) = m / 100.0;
            if (const double sc = score(v, k); sc < best_score) {
              best_score = sc;
              best_t = k;
            }
          }
          t = best_t;
        }
        if (const double sc = score(rows, t); best_all < 0 || sc < best_all) {
          best_all = sc;
          found = t;
        }
      }
      top = found;
      top_score = score(rows, top);
    } else {
      // In turn: bandwidth and the per-layer cost on the decode cases, the compute fraction on
      // the prefill cases, the all-reduce latency on the serving cases (each when it has cases).
      const auto only = [&](const char* kind) {
        std::vector<const SpeedCase*> v;
        for (const auto* c : rows) {
          if (c->kind == kind) {
            v.push_back(c);
          }
        }
        return v;
      };
      const auto decode = only("decode"), prefill = only("prefill"), serve = only("serve");
      const auto sweep = [&](const std::vector<const SpeedCase*>& v, auto&& vary) {
        if (v.empty()) {
          return;
        }
        double best_score = score(v, top);
        SpeedConstants found = top;
        vary([&](const SpeedConstants& k) {
          if (const double sc = score(v, k); sc < best_score) {
            best_score = sc;
            found = k;
          }
        });
        top = found;
      };
      // Bandwidth and the per-layer and per-step costs on every decode case, then the fraction of a
      // data-centre card's HBM on the decode cases run on one (hbm_card(); 0, the GDDR fraction,
      // unless it scores better); twice, as the second sweep changes what the first sees.
      std::vector<const SpeedCase*> decode_hbm;
      for (const auto* c : decode) {
        if (hbm_card(c->card)) {
          decode_hbm.push_back(c);
        }
      }
      for (int round = 0; round < 2; ++round) {
        sweep(decode, [&](auto&& try_k) {
          for (int bw = 30; bw <= 95; bw += 1) {
            for (int layer = 0; layer <= 200; layer += 4) {
              for (int step = 0; step <= 6000; step += 250) {
                SpeedConstants k = top;
                k.bandwidth = bw / 100.0;
                k.layer_s = layer * 1e-6;
                k.step_s = step * 1e-6;
                try_k(k);
              }
            }
          }
        });
        sweep(decode_hbm, [&](auto&& try_k) {
          for (int bw = 30; bw <= 95; bw += 1) {
            SpeedConstants k = top;
            k.bandwidth_hbm = bw / 100.0;
            try_k(k);
          }
        });
      }
      sweep(prefill, [&](auto&& try_k) {
        for (int pf = 5; pf <= 100; pf += 1) {
          // A ceiling only for llama.cpp, whose kernels reach ~100 TFLOPS on any card (docs/speed.md).
          for (int cap = 0; cap <= (engine == SpeedEngine::llama_cpp ? 400 : 0); cap += 10) {
            SpeedConstants k = top;
            k.compute = pf / 100.0;
            k.compute_cap_tflops = cap;
            try_k(k);
          }
        }
      });
      // llama.cpp's ceiling for 16-bit weights (cuBLAS), on its prefill cases, after the quantized one.
      if (engine == SpeedEngine::llama_cpp) {
        sweep(prefill, [&](auto&& try_k) {
          for (int cap = 0; cap <= 400; cap += 10) {
            SpeedConstants k = top;
            k.compute_cap_f16_tflops = cap;
            try_k(k);
          }
        });
      }
      sweep(serve, [&](auto&& try_k) {
        for (int ar = 0; ar <= 400; ar += 4) {
          SpeedConstants k = top;
          k.allreduce_s = ar * 1e-6;
          try_k(k);
        }
      });
      top_score = score(rows, top);
    }
    best[engine] = top;
    fmt::print("{:<13} fit n={:<3} bandwidth {:.2f} bandwidth_hbm {:.2f} layer_s {:.0f}e-6 step_s {:.0f}e-6 compute {:.2f} cap {:.0f} cap_f16 {:.0f} allreduce_s {:.0f}e-6 mfu {:.2f} mfu_sm90 {:.2f} mfu_fp8 {:.2f} train_half_tokens {:.0f} "
               "(mean |log| {:.3f})\n",
               name(engine), rows.size(), top.bandwidth, top.bandwidth_hbm, top.layer_s * 1e6, top.step_s * 1e6, top.compute, top.compute_cap_tflops, top.compute_cap_f16_tflops, top.allreduce_s * 1e6, top.mfu, top.mfu_sm90, top.mfu_fp8,
               top.train_half_tokens, top_score);
  }
  std::map<std::string, std::vector<double>> check_by_kind;
  std::map<std::string, std::vector<double>> check_by_engine_kind;
  for (const auto& c : cases) {
    const SpeedEngine own = c.engine == SpeedEngine::sglang ? SpeedEngine::vllm : c.engine;
    const auto it = best.find(own);
    const SpeedConstants k = it != best.end() ? it->second : speed_constants(own);
    const double p = predict(c, k);
    const double r = p / c.measured;
    const bool check = !c.fit || c.engine == SpeedEngine::sglang;
    if (check && p > 0) {
      check_by_kind[c.kind].push_back(r);
      check_by_engine_kind[fmt::format("{} {}", c.kind, name(c.engine))].push_back(r);
    }
    fmt::print("{} {:<6} {:<60} predicted {:>10.1f} measured {:>10.1f} ratio {:.2f}\n", check ? "check" : "fit  ",
               c.kind, c.id, p, c.measured, r);
  }
  for (const auto& [k, v] : check_by_engine_kind) {
    const Spread s = spread_of(v);
    fmt::print("check {:<24} n={:<3} median {:>4.0f}% p80 {:>4.0f}%{}\n", k, s.n, s.median, s.p80,
               s.n < k_min_check_cases ? fmt::format("  (fewer than {}: range_pct {}, unmeasured)", k_min_check_cases,
                                                     k_range_unmeasured)
                                       : std::string());
  }
  for (const auto& [k, v] : check_by_kind) {
    const Spread s = spread_of(v);
    fmt::print("CHECK {:<24} n={:<3} median {:>4.0f}% p80 {:>4.0f}%\n", k, s.n, s.median, s.p80);
  }
}
