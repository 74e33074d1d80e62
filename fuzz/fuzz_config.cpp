// SPDX-License-Identifier: MIT
// libFuzzer target for the config file parser (common/toml_reader: toml++ through gpurent's wrapper): any bytes must give a
// document or a one-line error naming the line, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/toml_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto doc = gpurent::parse_toml(text);
  if (!doc) {
    const auto& m = doc.error().message;
    if (m.empty() || m.find('\n') != std::string_view::npos) {
      std::abort();  // errors are one line
    }
    return 0;
  }
  for (const auto& e : doc->entries) {
    if (e.key.empty() || e.line < 1) {
      std::abort();
    }
  }
  return 0;
}
