// SPDX-License-Identifier: MIT
#include "cli/plan_speed_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/rounding.hpp"
#include "common/units.hpp"

namespace gpurent {
namespace {

std::string rate(double tokens_per_s)
{
  if (tokens_per_s >= 100) {
    return grouped(static_cast<std::uint64_t>(round_to_i64(tokens_per_s))) + " tok/s";
  }
  return fmt::format("{:.1f} tok/s", tokens_per_s);
}

}  // namespace

std::string grouped(std::uint64_t n)
{
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

std::string duration_label(std::chrono::seconds s)
{
  const auto n = s.count();
  if (n < 120) {
    return fmt::format("{} s", n);
  }
  if (n < 2 * 3600) {
    return fmt::format("{} min", (n + 59) / 60);
  }
  if (n < 100 * 3600) {
    return fmt::format("{:.1f} h", static_cast<double>(n) / 3600.0);
  }
  return fmt::format("{} h", (n + 3599) / 3600);
}

std::string speed_line(const Speed& sp, Task task)
{
  std::vector<std::string> parts;
  if (task == Task::train || task == Task::lora || task == Task::qlora) {
    if (sp.train_tokens_per_s) {
      // The micro-step's utilisation and, unpacked, the padding (docs/speed.md "Micro-batch and packing").
      parts.push_back(fmt::format("train {} over all GPUs (the micro-batch reaches {:.0f}% of peak utilisation{}{})",
                                  rate(*sp.train_tokens_per_s), sp.train_utilisation * 100.0,
                                  sp.train_eager ? ", run eager" : "",
                                  sp.train_useful_share < 1.0
                                      ? fmt::format("; unpacked, {:.0f}% of the tokens are padding: --pack removes it",
                                                    (1.0 - sp.train_useful_share) * 100.0)
                                      : std::string()));
    }
  } else {
    if (sp.serve_output_tokens_per_s) {
      parts.push_back(fmt::format("{} {} output at {} request{} ({} in, {} out)", sp.batch ? "batch" : "serve",
                                  rate(*sp.serve_output_tokens_per_s),
                                  sp.concurrency, sp.concurrency == 1 ? "" : "s", sp.input_len, sp.output_len));
    }
    if (sp.decode_tokens_per_s) {
      parts.push_back("decode " + rate(*sp.decode_tokens_per_s) + " alone");
    }
    if (sp.prefill_tokens_per_s) {
      parts.push_back("prefill " + rate(*sp.prefill_tokens_per_s));
    }
  }
  if (parts.empty()) {
    return "";
  }
  std::string line;
  for (const auto& p : parts) {
    line += (line.empty() ? "" : ", ") + p;
  }
  if (!sp.bound.empty()) {
    line += fmt::format("; {}-bound", sp.bound);
  }
  line += sp.range_pct == k_range_unmeasured ? std::string("; no measured spread (too few public measurements)")
                                             : fmt::format("; measured spread {}%", sp.range_pct);
  return line;
}

std::string shape_label(const PlanOption& o)
{
  return o.servers() > 1 ? fmt::format("{} servers x {}", o.servers(), o.gpus) : std::to_string(o.gpus);
}

std::string shape_cell(const PlanOption& o)
{
  return o.servers() > 1 ? fmt::format("{}x{}", o.servers(), o.gpus) : std::to_string(o.gpus);
}

std::string serve_line(const PlanOption& o, Engine engine)
{
  if (!o.serve) {
    return "";
  }
  const Speed& sp = o.speed;
  std::string line =
      o.serve->replicas > 1
          ? fmt::format("serves {} requests at once on {} replicas (identical servers, each billed) of {} each",
                        sp.concurrency, o.serve->replicas, o.serve->per_replica)
          : fmt::format("serves {} request{} at once", o.serve->per_replica, o.serve->per_replica == 1 ? "" : "s");
  // The flag that sets it in the engine's own launch line (cli.md plan v4).
  const std::string_view flag = engine == Engine::sglang         ? "--max-running-requests"
                                : engine == Engine::tensorrt_llm ? "--max_batch_size"
                                : engine == Engine::llama_cpp    ? "-np"
                                                                 : "--max-num-seqs";
  line += fmt::format(" ({} {}, KV pool {} tokens)", flag, o.serve->per_replica, grouped(o.serve->kv_pool_tokens));
  if (sp.per_user_tokens_per_s) {
    line += fmt::format(": {} per user", rate(*sp.per_user_tokens_per_s));
  }
  if (sp.ttft_s) {
    line += fmt::format(", first token in {:.2f} s", *sp.ttft_s);
  }
  return line;
}

std::string network_note(const PlanOption& o)
{
  const Speed& sp = o.speed;
  if (o.nodes <= 1 || !sp.network_step_s || !sp.compute_step_s || *sp.network_step_s <= *sp.compute_step_s) {
    return "";
  }
  return fmt::format("the network between the {} servers ({}) alone makes each step >= {:.1f} s (compute {:.2f} s): "
                     "{:.0f}x slower than the GPUs allow",
                     o.nodes, o.node_link, *sp.network_step_s, *sp.compute_step_s,
                     *sp.network_step_s / std::max(*sp.compute_step_s, 1e-9));
}

std::string job_line(const PlanOption& c)
{
  if (!c.hours || !c.job_cost) {
    return "";
  }
  return fmt::format("job: {} (start-up {}) = {} under {} billing", duration_label(*c.hours),
                     duration_label(c.startup), format_usd(*c.job_cost), c.billing);
}

}  // namespace gpurent
