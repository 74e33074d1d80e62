// SPDX-License-Identifier: MIT
// The build's generator of the built-in card catalogue: reads data/cards.json with the strict
// reader (providers/card_data.cpp; any error stops the build, naming the card and key) and writes
// a C++ source that builds the same CardData from initialisers, compiled into gpurent_providers.
// `gpurent plan` thus parses no card JSON at start-up (it was a quarter of plan's instructions).
//   gen_card_catalog <data/cards.json> <out.cpp>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/codegen.hpp"
#include "providers/card_data.hpp"

namespace {

using gpurent::Card;
using gpurent::CardData;

using gpurent::codegen::exact;
using gpurent::codegen::literal;
using gpurent::codegen::strings;

void optional_whole(std::ostringstream& out, const char* field, const std::optional<std::uint32_t>& v)
{
  if (v) {
    out << "  c." << field << " = " << *v << "U;\n";
  }
}

void optional_double(std::ostringstream& out, const char* field, const std::optional<double>& v)
{
  if (v) {
    out << "  c." << field << " = " << exact(*v) << ";\n";
  }
}

// One function per card: every field that differs from a default Card.
void card(std::ostringstream& out, const Card& c, std::size_t index)
{
  const Card def;
  out << "\nvoid add_" << index << "(std::vector<Card>& cards)\n{\n  Card c;\n";
  out << "  c.id = " << literal(c.id) << ";\n";
  out << "  c.display = " << literal(c.display) << ";\n";
  out << "  c.label_gb = " << c.label_gb << "U;\n";
  out << "  c.usable = Bytes{" << c.usable.n << "ULL};\n";
  if (!c.aliases.empty()) {
    out << "  c.aliases = " << strings(c.aliases) << ";\n";
  }
  if (c.source != def.source) {
    out << "  c.source = " << literal(c.source) << ";\n";
  }
  optional_whole(out, "compute_capability", c.compute_capability);
  if (c.arch != def.arch) {
    out << "  c.arch = " << literal(c.arch) << ";\n";
  }
  optional_whole(out, "mem_bw_gbs", c.mem_bw_gbs);
  optional_double(out, "tflops.bf16", c.tflops.bf16);
  optional_double(out, "tflops.fp16", c.tflops.fp16);
  optional_double(out, "tflops.fp8", c.tflops.fp8);
  optional_double(out, "tflops.fp4", c.tflops.fp4);
  optional_double(out, "tflops.int8", c.tflops.int8);
  optional_whole(out, "link.nvlink_gen", c.link.nvlink_gen);
  optional_whole(out, "link.nvlink_gb_per_s", c.link.nvlink_gb_per_s);
  optional_whole(out, "link.pcie_gen", c.link.pcie_gen);
  if (c.link.nvlink_bridge) {
    out << "  c.link.nvlink_bridge = true;\n";
  }
  for (const auto& [figure, text] : c.sources) {
    out << "  c.sources.emplace(" << literal(figure) << ", " << literal(text) << ");\n";
  }
  if (c.gaps != def.gaps) {
    out << "  c.gaps = " << literal(c.gaps) << ";\n";
  }
  if (c.origin != def.origin) {
    out << "  c.origin = " << literal(c.origin) << ";\n";
  }
  out << "  cards.push_back(std::move(c));\n}\n";
}

std::string generate(const CardData& data, const std::string& from)
{
  std::ostringstream out;
  out << "// Generated from " << from << " by providers/gen/gen_card_catalog.cpp; do not edit.\n"
      << "#include <utility>\n#include <vector>\n\n#include \"providers/card_data.hpp\"\n\n"
      << "namespace gpurent {\nnamespace {\n";
  for (std::size_t i = 0; i < data.cards.size(); ++i) {
    card(out, data.cards[i], i);
  }
  out << "\nCardData make()\n{\n  CardData d;\n  d.cards.reserve(" << data.cards.size() << ");\n";
  for (std::size_t i = 0; i < data.cards.size(); ++i) {
    out << "  add_" << i << "(d.cards);\n";
  }
  for (const auto& a : data.ambiguous) {
    out << "  d.ambiguous.push_back(AmbiguousCardName{" << literal(a.key) << ", " << strings(a.cards) << "});\n";
  }
  out << "  return d;\n}\n\n}  // namespace\n\n"
      << "const CardData& builtin_card_data()\n{\n  static const CardData k_data = make();\n  return k_data;\n}\n\n"
      << "}  // namespace gpurent\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 3) {
    std::cerr << "usage: gen_card_catalog <data/cards.json> <out.cpp>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "gen_card_catalog: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const auto data = gpurent::card_data_from_json(text.str());
  if (!data) {
    std::cerr << argv[1] << ": " << data.error().message << "\n";
    return 1;
  }
  const std::string code = generate(*data, "data/cards.json");
  return gpurent::codegen::replace_file(argv[2], code) ? 0 : 1;
}
