// SPDX-License-Identifier: MIT
// The build's generator of the built-in model catalogue: reads data/models.json with the strict
// reader (sizing/model_data.cpp; any error stops the build, naming the entry and key) and writes a
// C++ source that builds the same std::vector<ModelArch> from initialisers, compiled into
// gpurent_sizing. `gpurent plan` thus parses no JSON at start-up.
//   gen_model_catalog <data/models.json> <out.cpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/codegen.hpp"
#include "sizing/model_data.hpp"

namespace {

using nlohmann::ordered_json;

using gpurent::codegen::literal;

std::string value(const ordered_json& v)
{
  if (v.is_string()) {
    return literal(v.get<std::string>());
  }
  if (v.is_boolean()) {
    return v.get<bool>() ? "true" : "false";
  }
  if (v.is_number_unsigned()) {
    const auto n = v.get<std::uint64_t>();
    return std::to_string(n) + (n > 0x7fffffffU ? "ULL" : "");
  }
  if (v.is_array()) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += (i ? ", " : "") + value(v[i]);
    }
    return out + "}";
  }
  throw std::runtime_error("unexpected value " + v.dump());
}

// Every field of every model, and of a default ModelArch: a field is written when it differs from
// the default, with the JSON key as the member's name (the writer's keys are ModelArch's names).
std::string generate(const std::vector<gpurent::ModelArch>& models, const std::string& from)
{
  const gpurent::ModelArch defaults;
  const auto all = ordered_json::parse(gpurent::models_to_json(models, "", true))["models"];
  const auto def = ordered_json::parse(gpurent::models_to_json({&defaults, 1}, "", true))["models"][0];
  std::ostringstream out;
  out << "// Generated from " << from << " by sizing/gen/gen_model_catalog.cpp; do not edit.\n"
      << "#include <utility>\n#include <vector>\n\n#include \"sizing/model_data.hpp\"\n\n"
      << "namespace gpurent {\nnamespace {\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    out << "\nvoid add_" << i << "(std::vector<ModelArch>& out)\n{\n  ModelArch m;\n";
    for (const auto& [key, v] : all[i].items()) {
      if (key == "quantized") {
        if (v.empty()) {
          continue;
        }
        out << "  m.quantized = {\n";
        for (const auto& q : v) {
          out << "      {";
          // Every member, designated (-Wmissing-field-initializers counts a left-out one).
          bool first = true;
          for (const auto& [qk, qv] : q.items()) {
            out << (first ? "" : ", ") << "." << qk << " = " << value(qv);
            first = false;
          }
          out << "},\n";
        }
        out << "  };\n";
      } else if (v != def[key]) {
        out << "  m." << key << " = " << value(v) << ";\n";
      }
    }
    out << "  out.push_back(std::move(m));\n}\n";
  }
  out << "\n}  // namespace\n\nstd::vector<ModelArch> generated_model_catalog()\n{\n"
      << "  std::vector<ModelArch> all;\n  all.reserve(" << all.size() << ");\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    out << "  add_" << i << "(all);\n";
  }
  out << "  return all;\n}\n\n}  // namespace gpurent\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc != 3) {
    std::cerr << "usage: gen_model_catalog <data/models.json> <out.cpp>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << argv[1] << ": cannot be read\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto models = gpurent::models_from_json(text.str());
  if (!models) {
    std::cerr << argv[1] << ": " << models.error().message << "\n";
    return 1;
  }
  std::string code;
  try {
    code = generate(*models, "data/models.json");
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  return gpurent::codegen::replace_file(argv[2], code) ? 0 : 1;
}
