// SPDX-License-Identifier: MIT
#include "cli/plan_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/plan_build.hpp"
#include "cli/plan_shell.hpp"
#include "cli/plan_speed_text.hpp"
#include "common/text.hpp"
#include "providers/cloud_rules.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

constexpr std::size_t k_width = 80;
constexpr std::size_t k_bar = 30;
constexpr std::size_t k_max_rows = 12;

struct Style {
  bool on = false;
  BarGlyphs glyphs = bar_glyphs(true);
  [[nodiscard]] std::string wrap(std::string_view code, std::string_view s) const
  {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
  }
  [[nodiscard]] std::string bold(std::string_view s) const { return wrap("1", s); }
  [[nodiscard]] std::string good(std::string_view s) const { return wrap("32", s); }
  [[nodiscard]] std::string bad(std::string_view s) const { return wrap("31", s); }
  [[nodiscard]] std::string dim(std::string_view s) const { return wrap("2", s); }
  [[nodiscard]] std::string warn(std::string_view s) const { return wrap("33", s); }
};

std::string gib(Bytes b) { return fmt::format("{:.2f} GiB", round2(to_gib(b))); }
std::string gib_signed(std::int64_t bytes)
{
  return fmt::format("{:.2f} GiB", round2(static_cast<double>(bytes) / static_cast<double>(k_gib)));
}

std::string pad(std::string_view s, std::size_t width, bool right = false)
{
  const std::size_t w = display_width(s);
  const std::string fill(w < width ? width - w : 0, ' ');
  return right ? fill + std::string(s) : std::string(s) + fill;
}

std::string gpus_label(std::uint32_t n) { return fmt::format("{} GPU{}", n, n == 1 ? "" : "s"); }

std::string summary(const PlanReport& r)
{
  const JobSpec& j = r.result.job;
  std::vector<std::string> parts;
  parts.push_back(fmt::format("{} {}", to_string(j.task), j.model.name));
  // A release the user named is part of the job (vLLM before 0.8 is the V0 engine).
  parts.push_back(j.engine_version == 0 ? std::string(to_string(j.engine))
                                        : fmt::format("{} {}{}", to_string(j.engine), engine_version_text(j.engine, j.engine_version),
                                                      vllm_v0(j) ? " (V0)" : ""));
  parts.push_back(fmt::format("{} weights", to_string(j.weights)));
  if (j.model.layers > 0) {
    parts.push_back(fmt::format("KV {}", to_string(resolve_kv_dtype(j))));
    parts.push_back(fmt::format("context {}", j.context));
    if (j.offline_batch) {
      const std::uint32_t at_once = j.max_seqs > 0 ? j.max_seqs : j.batch;
      parts.push_back(fmt::format("offline batch, {} request{} at once", at_once, at_once == 1 ? "" : "s"));
    } else if (!is_training(j.task)) {
      parts.push_back(fmt::format("batch {}", j.batch));
    }
  }
  if (j.task == Task::train || j.task == Task::lora || j.task == Task::qlora) {
    // Micro-batch x accumulation x data-parallel GPUs = the global batch (cli.md plan v4).
    const std::uint32_t accum = std::max<std::uint32_t>(j.grad_accumulation, 1);
    parts.push_back(fmt::format("micro-batch {}{}{}", j.batch, j.micro_batch_chosen ? " (chosen)" : "",
                                accum > 1 || world_gpus(j) > 1
                                    ? fmt::format(" x {} accumulation x {} GPUs = global batch {}", accum, world_gpus(j),
                                                  std::uint64_t{j.batch} * accum * world_gpus(j))
                                    : std::string()));
    if (j.pack) {
      parts.push_back("packed");
    }
    if (j.compile) {
      parts.push_back("compiled");
    }
    parts.push_back(std::string(to_string(j.optimizer)));
    if (j.task != Task::train) {
      parts.push_back(fmt::format("rank {}", j.lora_rank));
    }
    if (j.grad_checkpointing) {
      parts.push_back("checkpointing");
    }
  }
  const std::string layout = j.pipeline > 1           ? fmt::format("tp {} x pp {}", tp_degree(j), j.pipeline)
                             : j.shard == Shard::layer ? std::string("layer split")
                                                       : std::string(to_string(j.shard));
  if (j.nodes > 1) {
    parts.push_back(fmt::format("{} servers x {} ({}, {} GPUs in all)", j.nodes, gpus_label(j.gpus), layout,
                                world_gpus(j)));
  } else {
    parts.push_back(j.gpus > 1 ? fmt::format("{} ({})", gpus_label(j.gpus), layout) : gpus_label(j.gpus));
  }
  std::string line;
  for (const auto& p : parts) {
    line += (line.empty() ? "" : ", ") + p;
  }
  return line;
}

// One bar track: cells [from, to) filled, the limit marker (k_bar: none) where nothing is drawn.
std::string track(std::size_t from, std::size_t to, std::size_t marker, const BarGlyphs& g)
{
  std::string s;
  for (std::size_t i = 0; i < k_bar; ++i) {
    if (i >= from && i < to) {
      s += g.filled;
    } else if (i == marker) {
      s += "|";
    } else if (i < from) {
      s += g.before;
    } else {
      s += " ";
    }
  }
  return s;
}

void render_memory(std::string& out, const PlanReport& r, const Style& st)
{
  const MemoryEstimate& m = r.result.memory;
  const std::optional<Card>& card = r.result.card;
  const Bytes limit = card ? fit_limit_for(r.result.job, card->usable) : Bytes{};
  if (card) {
    out += st.bold(fmt::format("Memory per GPU on {}", card->display)) +
           fmt::format(" ({} usable, limit {})\n", gib(card->usable), gib(limit));
  } else {
    out += st.bold("Memory per GPU") + "\n";
  }
  const std::uint64_t scale = std::max<std::uint64_t>({m.total().n, card ? card->usable.n : std::uint64_t{0}, std::uint64_t{1}});
  const auto cell = [&](std::uint64_t bytes) {
    return static_cast<std::size_t>((static_cast<double>(bytes) / static_cast<double>(scale)) * k_bar + 0.5);
  };
  std::size_t marker = k_bar;  // no card: no limit marker
  if (card.has_value()) {
    marker = std::min(cell(limit.n), k_bar - 1);
  }
  const std::pair<const char*, Bytes> terms[] = {
      {"weights", m.weights},     {"kv cache", m.kv_cache}, {"activations", m.activations},
      {"gradients", m.gradients}, {"optimizer", m.optimizer}, {"adapters", m.adapters},
      {"overhead", m.overhead},
  };
  std::uint64_t cum = 0;
  for (const auto& [label, bytes] : terms) {
    if (bytes.n == 0) {
      continue;
    }
    const std::size_t from = std::min(cell(cum), k_bar - 1);
    const std::size_t to = std::max(from + 1, std::min(cell(cum + bytes.n), k_bar));
    cum += bytes.n;
    out += fmt::format("  {} {} {:>10}\n", pad(label, 12), track(from, to, marker, st.glyphs), gib(bytes));
  }
  const bool fits = card && m.total() <= limit;
  const std::string bar = track(0, std::max<std::size_t>(1, std::min(cell(m.total().n), k_bar)), marker, st.glyphs);
  std::string status;
  if (card) {
    const auto headroom = static_cast<std::int64_t>(limit.n) - static_cast<std::int64_t>(m.total().n);
    status = fits ? st.good(fmt::format("fits, {} spare", gib_signed(headroom)))
                  : st.bad(fmt::format("over by {}", gib_signed(-headroom)));
  }
  out += fmt::format("  {} {} {:>10}  {}\n", pad("total", 12), fits || !card ? bar : st.bad(bar), gib(m.total()), status);
  if (card) {
    out += st.dim(fmt::format("  {}| = fit limit: 95% of usable memory{}\n", std::string(14, ' '),
                              r.result.job.engine == Engine::vllm           ? " (vLLM: and --gpu-util)"
                              : r.result.job.engine == Engine::sglang       ? " (SGLang: and mem_fraction_static)"
                              : r.result.job.engine == Engine::tensorrt_llm ? " (TensorRT-LLM: and its KV fraction)"
                                                                            : ""));
  }
}

void render_serve(std::string& out, const PlanReport& r)
{
  if (!r.serve) {
    return;
  }
  const bool sglang = r.result.job.engine == Engine::sglang && r.result.card;
  const bool trtllm = r.result.job.engine == Engine::tensorrt_llm;
  const std::string at =
      sglang   ? fmt::format("mem_fraction_static {:.3f}", sglang_mem_fraction_permille(r.result.job, r.result.card->usable) / 1000.0)
      : trtllm ? fmt::format("kv_cache_free_gpu_memory_fraction {:.2f} of what profiling leaves",
                             r.result.job.gpu_util_permille / 1000.0)
               : fmt::format("--gpu-util {:.2f}", r.result.job.gpu_util_permille / 1000.0);
  const std::string text = fmt::format("KV pool at {}: {} = {} tokens, {:.2f} sequences of {} tokens", at,
                                       gib(r.serve->kv_pool), r.serve->kv_pool_tokens, round2(r.serve->max_concurrency),
                                       r.result.job.context);
  for (const auto& line : wrap_words(text, k_width, "", "  ")) {
    out += line + "\n";
  }
}

// The Speed line under the memory chart: the figures for the card shown (the choice's, or the
// given or closest card's).
void render_speed(std::string& out, const PlanReport& r, const Style& st)
{
  const Speed& sp = r.result.choice ? r.result.choice->speed : r.result.speed;
  const std::string line = speed_line(sp, r.result.job.task);
  if (!line.empty()) {
    for (const auto& l : wrap_words(st.bold("Speed") + ": " + line, k_width, "", "  ")) {
      out += l + "\n";
    }
  }
  for (const auto& u : sp.unknown) {
    for (const auto& l : wrap_words("Unknown: " + u, k_width, "", "  ")) {
      out += st.dim(l) + "\n";
    }
  }
  const JobSpec& j = r.result.job;
  if (is_training(j.task) && j.micro_batch_chosen && r.result.card && (r.result.choice || r.result.card_fits)) {
    // cli.md plan v4: the plan chose the micro-batch and says so.
    const std::string why =
        j.batch > 1 ? fmt::format("{}'s spare memory holds it and it trains fastest (a larger one would gain under "
                                  "1%)",
                                  r.result.card->display)
        : j.pack    ? "larger ones would not fit or not train faster"
                    : "unpacked, a larger one pads each sequence to the batch's longest and trains slower; with --pack "
                      "the spare memory becomes a larger micro-batch";
    const std::string text = fmt::format("Micro-batch: {} sequence{} per GPU per step, chosen: {}; --micro-batch sets "
                                         "it",
                                         j.batch, j.batch == 1 ? "" : "s", why);
    for (const auto& l : wrap_words(text, k_width, "", "  ")) {
      out += l + "\n";
    }
  }
}

// How the engine runs the job on the card shown: always said unless it is native.
void render_runs(std::string& out, const PlanReport& r, const Style& st)
{
  const auto& res = r.result;
  if (!res.card) {
    return;
  }
  const RunStatus s = res.runs.status;
  const std::string head = fmt::format("Runs {} on CC {}: ", to_string(s), compute_capability_text(*res.card));
  const auto lines = wrap_words(head + res.runs.why, k_width, "  ", "    ");
  for (const auto& line : lines) {
    out += (s == RunStatus::native ? st.dim(line) : (s == RunStatus::refused ? st.bad(line) : line)) + "\n";
  }
  if (s == RunStatus::refused && r.runs_elsewhere) {
    const PlanOption& e = *r.runs_elsewhere;
    for (const auto& line : wrap_words(fmt::format("Runs on: {} x {} on {} at {}/h (--card {}), {}", e.gpus, e.card_display,
                                                   e.provider, format_usd(e.price_per_hour), e.card, to_string(e.runs.status)),
                                       k_width, "  ", "    ")) {
      out += line + "\n";
    }
  }
  if (s == RunStatus::refused && r.runs_with) {
    const EngineHere& h = *r.runs_with;
    for (const auto& line : wrap_words(fmt::format("Runs here with: {} (--engine {}), native, {} weights, {} of {} per GPU "
                                                   "on {} x {}; its launch line below",
                                                   to_string(h.job.engine), to_string(h.job.engine),
                                                   to_string(h.job.weights), gib(h.memory.total()), gib(res.card->usable),
                                                   h.job.gpus, res.card->display),
                                       k_width, "  ", "    ")) {
      out += line + "\n";
    }
  }
}

// "nebius (eu-north1)": the cloud and, where the offer names one, its region.
std::string cloud_where(const PlanOption& o)
{
  return o.region.empty() ? o.provider : fmt::format("{} ({})", o.provider, o.region);
}

// What the choice's row says of itself (cli.md plan v4): how to rent a cloud gpurent does not,
// a price of the GPUs only, what an aggregator's row resells.
std::string market_note(const PlanOption& c)
{
  std::string note;
  if (!c.rentable) {
    note = fmt::format("gpurent does not rent {} servers: rent it there, then `gpurent attach --provider {} --card {} "
                       "--gpus {} --host USER@HOST --name NAME`",
                       c.provider, c.provider, c.card, c.gpus);
  }
  if (c.gpu_only) {
    note += std::string(note.empty() ? "" : "; ") + "GPU only: the price covers the GPUs, the host VM is billed on top";
  }
  if (!c.upstream.empty()) {
    note += std::string(note.empty() ? "" : "; ") + "resold from " + c.upstream;
  }
  return note;
}

void render_choice_line(std::string& out, const PlanReport& r, const Style& st)
{
  const auto& res = r.result;
  if (res.choice) {
    const PlanOption& c = *res.choice;
    if (c.servers() > 1) {
      const std::string head =
          st.bold("Choice") + fmt::format(": {}, {} servers x {} x {} at {}/h each ({}/h in all){}", cloud_where(c),
                                          c.servers(), c.gpus, c.card_display, format_usd(c.price_per_hour),
                                          format_usd(MicroUsd{c.price_per_hour.n * c.servers()}), c.spot ? " (spot)" : "");
      for (const auto& line : wrap_words(head, k_width, "", "  ")) {
        out += line + "\n";
      }
    } else {
      out += st.bold("Choice") + fmt::format(": {}, {} x {} at {}/h{}\n", cloud_where(c), c.gpus, c.card_display,
                                             format_usd(c.price_per_hour), c.spot ? " (spot)" : "");
    }
    if (const std::string served = serve_line(c, r.result.job.engine); !served.empty()) {
      for (const auto& line : wrap_words(served, k_width, "  ", "  ")) {
        out += line + "\n";
      }
    }
    if (c.nodes > 1) {
      for (const auto& line : wrap_words("between servers: " + c.node_link, k_width, "  ", "  ")) {
        out += line + "\n";
      }
    }
    std::string detail = job_line(c);
    if (detail.empty()) {
      detail = fmt::format("{} for {} under {} billing", format_usd(c.cost), hours_label(r.runtime), c.billing);
    }
    if (c.billing_source == k_billing_unknown) {
      detail += fmt::format(" ({} publishes no billing rule gpurent found: billing unknown, per hour assumed)", c.provider);
    }
    detail += fmt::format("; {} spare per GPU; price {}", gib_signed(c.headroom), c.price_origin);
    if (c.tokens_per_dollar) {
      detail += fmt::format("; {} tokens per dollar", grouped(*c.tokens_per_dollar));
      if (c.serve && *c.tokens_per_dollar > 0) {
        detail += fmt::format(" (${:.2f} per million output tokens)", 1e6 / static_cast<double>(*c.tokens_per_dollar));
      }
    }
    for (const auto& line : wrap_words(detail, k_width, "  ", "  ")) {
      out += line + "\n";
    }
    if (const std::string net = network_note(c); !net.empty()) {
      for (const auto& line : wrap_words(net, k_width, "  ", "  ")) {
        out += st.warn(line) + "\n";
      }
    }
    if (const std::string note = market_note(c); !note.empty()) {
      for (const auto& line : wrap_words(note, k_width, "  ", "    ")) {
        out += st.warn(line) + "\n";
      }
    }
    if (c.tight) {
      for (const auto& line : wrap_words(fmt::format("tight: {} spare is inside the memory estimate's measured error "
                                                     "for this job ({}%): it may not fit on the real machine",
                                                     gib_signed(c.headroom), memory_error_pct(r.result.job)),
                                         k_width, "  ", "  ")) {
        out += st.warn(line) + "\n";
      }
    }
    return;
  }
  if (r.card_given && res.card) {
    if (res.runs.status == RunStatus::refused) {
      out += st.bad(fmt::format("{} does not run this job on {}", to_string(res.job.engine), res.card->display)) + "\n";
    } else if (res.card_fits) {
      out += st.bold("Choice") + fmt::format(": fits {} x {}, but no offer prices it\n", res.job.gpus, res.card->display);
    } else {
      out += st.bad(fmt::format("Does not fit {}{} x {}",
                                res.job.nodes > 1 ? fmt::format("{} servers x ", res.job.nodes) : std::string(),
                                res.job.gpus, res.card->display)) +
             "\n";
    }
    return;
  }
  if (r.missed_deadline()) {
    out += st.bad(fmt::format("No option finishes within the deadline of {}", duration_label(*r.deadline))) + "\n";
    return;
  }
  if (r.missed_targets()) {
    std::string text = missed_targets_text(r);
    text[0] = 'N';
    for (const auto& line : wrap_words(text, k_width, "", "  ")) {
      out += st.bad(line) + "\n";
    }
    return;
  }
  std::string none = nothing_fits_text(r);
  none[0] = 'N';
  out += st.bad(res.options.empty() ? "No offer matches the filters" : none) + "\n";
}

void render_choice(std::string& out, const PlanReport& r, const Style& st)
{
  render_choice_line(out, r, st);
  render_runs(out, r, st);
}

// A per-user rate in a 5-wide cell: "27.4", "312".
std::string user_rate_cell(double tokens_per_s)
{
  return tokens_per_s >= 100 ? fmt::format("{:.0f}", tokens_per_s) : fmt::format("{:.1f}", tokens_per_s);
}

// Seconds in a 5-wide cell: "0.42s", "12.3s", "340s".
std::string seconds_cell(double s)
{
  if (s < 10) {
    return fmt::format("{:.2f}s", s);
  }
  return s < 100 ? fmt::format("{:.1f}s", s) : fmt::format("{:.0f}s", s);
}

// The short name of a status in the options table.
std::string runs_cell(RunStatus s)
{
  switch (s) {
  case RunStatus::native: return "native";
  case RunStatus::fallback: return "fallback";
  case RunStatus::unknown: return "unknown";
  case RunStatus::refused: return "refused";
  }
  return "";
}

void render_options(std::string& out, const PlanReport& r, const Style& st)
{
  const auto& opts = r.result.options;
  if (opts.empty()) {
    return;
  }
  out += "\n" + st.bold("Options") + "\n";
  const bool sized = r.size.sized();
  // Serving: what each user sees in place of the memory headroom; unsized, the cost of a million
  // output tokens (what it is ranked by) in place of the hourly price.
  const bool serving = r.result.job.task == Task::serve;
  const bool per_million = serving && !sized;
  // The cloud column: the cloud's key, "+" marking one gpurent does not rent, cut to 8 letters
  // ("primein~+") so that the table keeps to 80 columns; the choice line names the cloud and its
  // region in full, and --json every option's.
  constexpr std::size_t k_cloud_w = 9;
  const std::size_t shown = std::min(opts.size(), k_max_rows);
  const auto cloud_cell = [&](const PlanOption& o) {
    const std::string name = o.provider.size() > 8 ? o.provider.substr(0, 7) + "~" : o.provider;
    return pad(name + (o.rentable ? "" : "+"), k_cloud_w);
  };
  const std::string cloud_head = pad("cloud", k_cloud_w);
  out += fmt::format("  {} {} {} {} {} {} {} {}\n", cloud_head, pad("card", 17), pad("GPUs", 4, true),
                     pad("fits", 4), pad("runs", 8),
                     serving ? pad("tok/s", 5, true) + " " + pad("TTFT", 5, true) : pad("headroom", 11, true),
                     per_million ? pad("$/Mtok", 8, true) : pad("$/h", 8, true),
                     sized ? pad("hours", 8, true) + " " + pad("job cost", 9, true)
                           : pad("cost " + hours_label(r.runtime), 10, true));
  for (std::size_t i = 0; i < opts.size() && i < k_max_rows; ++i) {
    const PlanOption& o = opts[i];
    const std::string fits = o.fits ? st.good(pad(o.tight ? "yes!" : "yes", 4)) : st.bad(pad("no", 4));
    const std::string runs = o.runs.status == RunStatus::native    ? pad(runs_cell(o.runs.status), 8)
                             : o.runs.status == RunStatus::refused ? st.bad(pad(runs_cell(o.runs.status), 8))
                                                                   : st.warn(pad(runs_cell(o.runs.status), 8));
    // A row that does not fit or is refused has no speed, so no hours or bill (cli.md plan v4).
    const bool runs_here = o.fits && o.runs.status != RunStatus::refused;
    const std::string bill =
        sized ? (runs_here ? pad(o.hours ? duration_label(*o.hours) : "?", 8, true) + " " +
                                 pad(o.job_cost ? format_usd(*o.job_cost) : "?", 9, true)
                           : st.bad(pad(o.fits ? "refused" : "does not fit", 18, true)))
        : runs_here ? pad(format_usd(o.cost), 10, true)
                    : pad("-", 10, true);  // the fits or runs column says why: no bill for it
    std::string middle = pad(gib_signed(o.headroom), 11, true);
    if (serving) {
      // A row that does not fit or is refused serves nobody: no figures.
      const bool serves = o.fits && o.runs.status != RunStatus::refused;
      const std::string user = !serves ? "-" : o.speed.per_user_tokens_per_s ? user_rate_cell(*o.speed.per_user_tokens_per_s) : "?";
      const std::string ttft = !serves ? "-" : o.speed.ttft_s ? seconds_cell(*o.speed.ttft_s) : "?";
      const bool short_of = o.serve && !o.serve->meets_targets && o.fits;
      middle = (short_of ? st.bad(pad(user, 5, true)) : pad(user, 5, true)) + " " +
               (short_of ? st.bad(pad(ttft, 5, true)) : pad(ttft, 5, true));
    }
    std::string price = format_usd(o.price_per_hour) + (o.spot ? "*" : "");
    if (per_million) {
      price = !o.fits || o.runs.status == RunStatus::refused ? "-"
              : o.tokens_per_dollar && *o.tokens_per_dollar > 0
                  ? fmt::format("${:.2f}", 1e6 / static_cast<double>(*o.tokens_per_dollar)) + (o.spot ? "*" : "")
                  : "?";
    }
    out += fmt::format("  {} {} {} {} {} {} {} {}\n", cloud_cell(o), pad(o.card_display, 17),
                       pad(shape_cell(o), 4, true), fits, runs, middle, pad(price, 8, true), bill);
  }
  if (opts.size() > k_max_rows) {
    out += st.dim(fmt::format("  ... and {} more (--json lists them all)", opts.size() - k_max_rows)) + "\n";
  }
  if (std::any_of(opts.begin(), opts.begin() + static_cast<std::ptrdiff_t>(shown),
                  [](const PlanOption& o) { return !o.rentable; })) {
    out += st.dim("  + not rented by gpurent: rent it there, then `gpurent attach --provider CLOUD`") + "\n";
  }
  if (std::any_of(opts.begin(), opts.begin() + static_cast<std::ptrdiff_t>(shown),
                  [](const PlanOption& o) { return o.billing_source == k_billing_unknown; })) {
    out += st.dim("  billing unknown for some clouds: per hour assumed (docs/providers.md)") + "\n";
  }
  if (std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) { return o.tight; })) {
    out += st.dim("  yes! tight: the headroom is inside the memory estimate's measured error") + "\n";
  }
  if (sized && std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) {
        return !o.hours && o.fits && o.runs.status != RunStatus::refused;
      })) {
    out += st.dim("  ? a card figure the speed needs is unknown (gpurent cards): ranked last") + "\n";
  }
  if (std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) { return o.spot; })) {
    out += st.dim("  * spot price: the server can be interrupted") + "\n";
  }
  if (serving) {
    const std::string legend =
        fmt::format("tok/s: output tokens per second each user sees (target {:g}); TTFT: seconds to the first token "
                    "at that load{}{}",
                    r.targets.min_user_tokens_per_s,
                    r.targets.max_ttft_s ? fmt::format(" (target {:g})", *r.targets.max_ttft_s) : "",
                    per_million ? "; $/Mtok: per million output tokens" : "");
    for (const auto& line : wrap_words(legend, k_width, "  ", "  ")) {
      out += st.dim(line) + "\n";
    }
  }
  if (std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) { return o.nodes > 1; })) {
    out += st.dim("  NxG: N servers of G GPUs each; $/h per server, the costs for all of them") + "\n";
  } else if (std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) { return o.servers() > 1; })) {
    out += st.dim("  NxG: N replicas (identical servers) of G GPUs each, each billed") + "\n";
  }
  if (std::any_of(opts.begin(), opts.end(), [](const PlanOption& o) { return o.nodes > 1 && !o.node_link_known; })) {
    out += st.dim("  servers whose link the provider does not publish: speed unknown, ranked last") + "\n";
  }
  for (std::size_t i = 0; i < opts.size() && i < k_max_rows; ++i) {
    if (const std::string net = network_note(opts[i]); !net.empty() && &opts[i] != &opts.front()) {
      for (const auto& line : wrap_words(fmt::format("{} {}: {}", opts[i].provider, opts[i].card_display, net), k_width,
                                         "  ", "    ")) {
        out += st.dim(line) + "\n";
      }
    }
  }
}

// Serving without --engine: each batching engine's best option for the same job.
void render_engines(std::string& out, const PlanReport& r, const Style& st)
{
  if (r.engines.empty()) {
    return;
  }
  const bool sized = r.size.sized();
  out += "\n" + st.bold("Engines") + " (the same job, each engine's best option)\n";
  out += fmt::format("  {} {} {} {} {}\n", pad("engine", 13), pad("GPUs x card", 27), pad("out tok/s", 9, true),
                     sized ? pad("job cost", 9, true) : pad("$/Mtok", 9, true), pad("vs choice", 9, true));
  for (const auto& e : r.engines) {
    const std::string name = pad(std::string(to_string(e.engine)) + (e.chosen ? " *" : ""), 13);
    if (!e.best) {
      for (const auto& line : wrap_words(fmt::format("none: {}", e.why_none), k_width, "  " + name + " ",
                                         std::string(16, ' '))) {
        out += st.dim(line) + "\n";
      }
      continue;
    }
    const PlanOption& o = *e.best;
    const std::string shape =
        fmt::format("{}{} x {}", o.servers() > 1 ? fmt::format("{} x ", o.servers()) : "", o.gpus, o.card_display);
    const auto tps = o.speed.serve_output_tokens_per_s;
    const std::string rate = tps ? fmt::format("{:.0f}", *tps * o.servers()) : "?";
    const std::string money = sized ? (o.job_cost ? format_usd(*o.job_cost) : "?")
                              : o.tokens_per_dollar && *o.tokens_per_dollar > 0
                                  ? fmt::format("${:.2f}", 1e6 / static_cast<double>(*o.tokens_per_dollar))
                                  : "?";
    const std::string vs = e.chosen ? "choice" : e.vs_choice ? fmt::format("{:.2f}x", *e.vs_choice) : "?";
    out += fmt::format("  {} {} {} {} {}\n", name, pad(shape, 27), pad(rate, 9, true), pad(money, 9, true),
                       pad(vs, 9, true));
  }
  for (const auto& line : wrap_words("vs choice: output tokens per dollar against the choice's (sized: the choice's "
                                     "bill over theirs); * = the plan's engine",
                                     k_width, "  ", "  ")) {
    out += st.dim(line) + "\n";
  }
}

void render_fixes(std::string& out, const PlanReport& r, const Style& st)
{
  if (r.fixes.empty()) {
    return;
  }
  const std::string engine(to_string(r.result.job.engine));
  out += "\n" + st.bold("Fixes") + fmt::format(" (each alone, against {} per GPU)\n", gib(r.fix_limit));
  for (const Fix& f : r.fixes) {
    out += fmt::format("  {} saves {}{}\n", pad(f.id, 20), gib(f.saves), f.fits_alone ? st.good(", fits alone") : "");
    for (const auto& line : wrap_words(f.description, k_width, "    ", "    ")) {
      out += line + "\n";
    }
    const auto it = f.flags.find(engine);
    if (it != f.flags.end()) {
      for (const auto& line : wrap_words(it->second, k_width, "    " + engine + ": ", "      ")) {
        out += st.dim(line) + "\n";
      }
      continue;
    }
    for (const auto& [e, flag] : f.flags) {
      for (const auto& line : wrap_words(flag, k_width, "    " + e + ": ", "      ")) {
        out += st.dim(line) + "\n";
      }
    }
  }
}

void render_commands(std::string& out, const std::map<std::string, std::string>& launch, std::string_view indent)
{
  for (const auto& [engine, line] : launch) {
    for (const auto& l : shell_lines(line, k_width, indent)) {
      out += l + "\n";
    }
  }
}

// The job's launch lines; a job that does not fit has none, and its recipe's (when the recipe
// fits) is the one to launch.
void render_launch(std::string& out, const PlanReport& r, const Style& st)
{
  if (!r.launch.empty()) {
    out += "\n" + st.bold("Launch") + "\n";
    render_commands(out, r.launch, "  ");
  } else if (r.recipe && r.recipe->recipe.fits && !r.recipe->launch.empty()) {
    out += "\n" + st.bold("Launch") + " (with the recipe)\n";
    render_commands(out, r.recipe->launch, "  ");
  } else if (r.runs_with && !r.runs_with->launch.empty() && r.result.card) {
    out += "\n" + st.bold("Launch") +
           fmt::format(" (with --engine {}, which runs it on {})\n", to_string(r.runs_with->job.engine), r.result.card->display);
    render_commands(out, r.runs_with->launch, "  ");
  }
}

void render_defaults(std::string& out, const PlanReport& r, const Style& st)
{
  if (r.defaults.empty()) {
    return;
  }
  std::string text;
  for (const auto& d : r.defaults) {
    text += (text.empty() ? "" : ", ") + d.key + " " + d.value;
  }
  for (const auto& line : wrap_words(text, k_width, "Defaults: ", "  ")) {
    out += st.dim(line) + "\n";
  }
}

void render_recipe(std::string& out, const PlanReport& r, const Style& st)
{
  if (!r.recipe) {
    return;
  }
  const PlanRecipe& p = *r.recipe;
  const Recipe& rec = p.recipe;
  const std::string where = fmt::format("{} x {}{}", rec.job.gpus, p.card_display,
                                        p.price_per_hour ? fmt::format(" at {}/h", format_usd(*p.price_per_hour)) : "");
  out += "\n" + (rec.fits ? st.bold("Recipe") + fmt::format(": fits {}", where)
                          : st.bad(fmt::format("No recipe fits {}; the nearest", where)))
         + "\n";
  for (const auto& c : rec.changes) {
    const std::string text = c.id == "gpu-util" ? fmt::format("{} -> {} (the engine may use more of the card)", c.from, c.to)
                                                : fmt::format("{} -> {} (saves {})", c.from, c.to, gib(c.saves));
    for (const auto& line : wrap_words(text, k_width, "  " + pad(c.id, 19) + " ", std::string(22, ' '))) {
      out += line + "\n";
    }
  }
  const auto headroom = static_cast<std::int64_t>(rec.limit.n) - static_cast<std::int64_t>(rec.memory.total().n);
  out += fmt::format("  total {} per GPU, limit {}: {}\n", gib(rec.memory.total()), gib(rec.limit),
                     headroom >= 0 ? st.good(fmt::format("{} spare", gib_signed(headroom)))
                                   : st.bad(fmt::format("over by {}", gib_signed(-headroom))));
  if (const std::string speed = speed_line(p.speed, rec.job.task); !speed.empty()) {
    for (const auto& line : wrap_words("speed: " + speed, k_width, "  ", "    ")) {
      out += line + "\n";
    }
  }
  for (const auto& [engine, flags] : rec.flags) {
    for (const auto& line : wrap_words(flags, k_width, "  " + engine + ": ", "    ")) {
      out += st.dim(line) + "\n";
    }
  }
}

void render_notes(std::string& out, const PlanReport& r, const Style& st)
{
  if (r.notes.empty()) {
    return;
  }
  out += "\n";
  for (const auto& note : r.notes) {
    for (const auto& line : wrap_words(note, k_width, "Note: ", "      ")) {
      out += st.dim(line) + "\n";
    }
  }
}

}  // namespace

std::size_t display_width(std::string_view s) noexcept
{
  std::size_t n = 0;
  for (const char c : s) {
    n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1U : 0U;
  }
  return n;
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t width, std::string_view first,
                                    std::string_view rest)
{
  std::vector<std::string> lines;
  std::string line(first);
  bool empty = true;
  for (const auto word : split(text, ' ')) {
    if (word.empty()) {
      continue;
    }
    if (!empty && display_width(line) + 1 + display_width(word) > width) {
      lines.push_back(line);
      line = std::string(rest);
      empty = true;
    }
    line += (empty ? "" : " ") + std::string(word);
    empty = false;
  }
  if (!empty || lines.empty()) {
    lines.push_back(line);
  }
  return lines;
}

std::string hours_label(std::chrono::seconds runtime)
{
  const auto s = runtime.count();
  if (s % 3600 == 0) {
    return fmt::format("{} h", s / 3600);
  }
  std::string v = fmt::format("{:.2f}", static_cast<double>(s) / 3600.0);
  while (v.back() == '0') {
    v.pop_back();
  }
  if (v.back() == '.') {
    v.pop_back();
  }
  return v + " h";
}

std::string render_plan_text(const PlanReport& r, bool color, bool utf8)
{
  const Style st{color, bar_glyphs(utf8)};
  std::string out;
  for (const auto& line : wrap_words(summary(r), k_width, "", "  ")) {
    out += st.bold(line) + "\n";
  }
  render_defaults(out, r, st);
  out += "\n";
  render_memory(out, r, st);
  render_serve(out, r);
  render_speed(out, r, st);
  out += "\n";
  render_choice(out, r, st);
  render_options(out, r, st);
  render_engines(out, r, st);
  render_fixes(out, r, st);
  render_recipe(out, r, st);
  render_launch(out, r, st);
  render_notes(out, r, st);
  return out;
}

}  // namespace gpurent
