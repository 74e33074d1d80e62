// SPDX-License-Identifier: MIT
// `gpurent models [--json]`: the built-in model catalogue (cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/services.hpp"
#include "sizing/model_catalog.hpp"

namespace gpurent {
namespace {

std::string attention_name(const ModelArch& m)
{
  switch (m.attention()) {
  case AttentionKind::mla: return "mla";
  case AttentionKind::sliding_hybrid: return "sliding";
  case AttentionKind::full: break;
  }
  return "full";
}

nlohmann::json to_json(const ModelArch& m)
{
  return nlohmann::json{
      {"name", m.name},
      {"hf_ids", m.hf_ids},
      {"family", m.family},
      {"params", m.params},
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"heads", m.heads},
      {"kv_heads", m.kv_heads},
      {"head_dim", m.head_dim},
      {"vocab", m.vocab},
      {"intermediate", m.intermediate},
      {"experts", m.experts},
      {"experts_active", m.experts_active},
      {"max_context", m.max_context},
      {"tied_embeddings", m.tied_embeddings},
      {"sliding_window", m.sliding_window},
      {"attention", attention_name(m)},
      {"source", m.source},
  };
}

// "128k" for 131072, "40k" for 40960, "8k" for 8192.
std::string short_context(std::uint32_t tokens)
{
  if (tokens >= 1024 && tokens % 1024 == 0) {
    return fmt::format("{}k", tokens / 1024);
  }
  return std::to_string(tokens);
}

std::string params_b(std::uint64_t params)
{
  const double b = static_cast<double>(params) / 1e9;
  return b < 10.0 ? fmt::format("{:.2f}", b) : fmt::format("{:.1f}", b);
}

void print_table(Services& s)
{
  // 80 columns: the numbers, then the first (base) HF id. An id that does not fit goes whole on
  // a line of its own below the row (a table never cuts an id).
  constexpr std::size_t k_width = 80;
  s.out << fmt::format("{:<17} {:>7} {:>3} {:>5} {:>7} {:>4} {:>6} {}\n", "NAME", "PARAMS", "LYR", "HIDDN",
                       "HEADS", "CTX", "EXPRTS", "HF ID");
  for (const auto& m : model_catalog()) {
    const std::string heads = fmt::format("{}/{}", m.heads, m.kv_heads);
    const std::string experts = m.is_moe() ? fmt::format("{}/{}", m.experts_active, m.experts) : "-";
    const std::string id = m.hf_ids.empty() ? "-" : m.hf_ids.front();
    const std::string row = fmt::format("{:<17} {:>6}B {:>3} {:>5} {:>7} {:>4} {:>6}", m.name, params_b(m.params),
                                        m.layers, m.hidden, heads, short_context(m.max_context), experts);
    if (row.size() + 1 + id.size() <= k_width) {
      s.out << row << ' ' << id << '\n';
    } else {
      s.out << row << "\n" << std::string(k_width - std::min(k_width, id.size() + 1), ' ') << id << '\n';
    }
  }
  s.out << fmt::format("{} models. HEADS = query/KV heads, EXPERTS = active/total; a long HF ID is on\n"
                       "the line below its row. Any HF id or a path to a config.json also works;\n"
                       "`gpurent models --json` gives every field and its source.\n",
                       model_catalog().size());
}

}  // namespace

void add_models_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("models", "list the built-in model catalogue (architecture and exact size)");
  sub->callback([&s] {
    if (s.global.json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& m : model_catalog()) {
        all.push_back(to_json(m));
      }
      s.out << nlohmann::json{{"models", std::move(all)}}.dump(2) << '\n';
    } else {
      print_table(s);
    }
    s.exit_code = 0;
  });
}

}  // namespace gpurent
