// SPDX-License-Identifier: MIT
// `gpurent cards [--json]`: every card as the providers sell it (data/cards.json, plus the
// config's [cards.<id>]): compute capability, usable memory, bandwidth, tensor throughput, link.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/services.hpp"
#include "common/units.hpp"
#include "providers/card.hpp"

namespace gpurent {
namespace {

using Json = nlohmann::ordered_json;

template <class T>
Json card_or_null(const std::optional<T>& v)
{
  return v ? Json(*v) : Json(nullptr);
}

Json card_json(const Card& c)
{
  Json sources = Json::object();
  for (const auto& [k, v] : c.sources) {
    sources[k] = v;
  }
  return Json{{"id", c.id},
              {"display", c.display},
              {"label_gb", c.label_gb},
              {"usable_gib", round2(to_gib(c.usable))},
              {"compute_capability", c.compute_capability ? Json(compute_capability_text(c)) : Json(nullptr)},
              {"arch", c.arch},
              {"mem_bw_gbs", card_or_null(c.mem_bw_gbs)},
              {"tflops",
               {{"bf16", card_or_null(c.tflops.bf16)},
                {"fp16", card_or_null(c.tflops.fp16)},
                {"fp8", card_or_null(c.tflops.fp8)},
                {"fp4", card_or_null(c.tflops.fp4)},
                {"int8", card_or_null(c.tflops.int8)}}},
              {"link",
               {{"nvlink_gen", card_or_null(c.link.nvlink_gen)},
                {"nvlink_gb_per_s", card_or_null(c.link.nvlink_gb_per_s)},
                {"pcie_gen", card_or_null(c.link.pcie_gen)},
                {"nvlink_bridge", c.link.nvlink_bridge}}},
              {"aliases", c.aliases},
              {"sources", sources},
              {"gaps", c.gaps},
              {"origin", c.origin}};
}

std::string tflops_cell(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : std::string("-"); }

std::string card_link_text(const Card& c)
{
  std::string out;
  if (c.link.nvlink_gen && c.link.nvlink_bridge) {
    out = fmt::format("PCIe {} (NVLink{} bridge)", c.link.pcie_gen ? std::to_string(*c.link.pcie_gen) : std::string("?"),
                      *c.link.nvlink_gen);
  } else if (c.link.nvlink_gen) {
    out = fmt::format("NVLink{} {}", *c.link.nvlink_gen,
                      c.link.nvlink_gb_per_s ? fmt::format("{} GB/s", *c.link.nvlink_gb_per_s) : std::string("?"));
  } else if (c.link.pcie_gen) {
    out = fmt::format("PCIe {}", *c.link.pcie_gen);
  }
  return out.empty() ? "-" : out;
}

void print_cards_table(Services& s)
{
  s.out << fmt::format("{:<15} {:>4} {:>7} {:>6} {:>5} {:>5} {:>5} {}\n", "CARD", "CC", "GiB", "GB/s", "BF16", "FP8",
                       "FP4", "LINK");
  std::size_t gaps = 0;
  for (const Card& c : card_catalog()) {
    gaps += c.gaps.empty() ? 0U : 1U;
    s.out << fmt::format("{:<15} {:>4} {:>7.2f} {:>6} {:>5} {:>5} {:>5} {}{}\n", c.id, compute_capability_text(c).substr(0, 4),
                         round2(to_gib(c.usable)), c.mem_bw_gbs ? std::to_string(*c.mem_bw_gbs) : std::string("-"),
                         tflops_cell(c.tflops.bf16 ? c.tflops.bf16 : c.tflops.fp16), tflops_cell(c.tflops.fp8), tflops_cell(c.tflops.fp4),
                         card_link_text(c), c.origin == "config" ? "  (config)" : "");
  }
  s.out << fmt::format("{} cards. CC = compute capability (decides which kernels run); GiB = what CUDA\n"
                       "reports; dense tensor TFLOPS (BF16, or FP16 where the card has no BF16); '-' = the\n"
                       "card lacks it or no vendor figure was found ({} cards say which in `--json` \"gaps\").\n"
                       "[cards.<id>] in the config file adds or overrides a card.\n",
                       card_catalog().size(), gaps);
}

}  // namespace

void add_cards_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("cards", "list the GPU cards: compute capability, memory, bandwidth, TFLOPS, link");
  sub->callback([&s] {
    if (s.global.json) {
      Json all = Json::array();
      for (const Card& c : card_catalog()) {
        all.push_back(card_json(c));
      }
      s.out << Json{{"cards", std::move(all)}}.dump(2) << '\n';
    } else {
      print_cards_table(s);
    }
    s.exit_code = 0;
  });
}

}  // namespace gpurent
