// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "common/toml_reader.hpp"

using namespace gpurent;

TEST_CASE("TomlReader: what the config uses parses, in file order, with lines", "[common][toml]")
{
  const auto doc = parse_toml(R"(# gpurent config
budget_usd = 250.5   # spend guard
default_provider = "runpod"
offers_max_age_hours = 12
flag = true
"quoted key" = 'C:\literal'
esc = "a\"b\\c\u00e9\t"

[prices.gpucloud]
"rtx-pro-6000x8" = 12.5
[ prices . "cloud gpu" ]
rtx-4090 = -1e-2
)");
  REQUIRE(doc.has_value());
  REQUIRE(doc->entries.size() == 8);
  CHECK(doc->entries[0].key == "budget_usd");
  CHECK(doc->entries[0].value.kind == TomlValue::Kind::number);
  CHECK(doc->entries[0].value.number == 250.5);
  CHECK(doc->entries[0].line == 2);
  CHECK(doc->entries[1].value.text == "runpod");
  CHECK(doc->entries[3].value.kind == TomlValue::Kind::boolean);
  CHECK(doc->entries[3].value.boolean);
  CHECK(doc->entries[4].key == "quoted key");
  CHECK(doc->entries[4].value.text == "C:\\literal");
  CHECK(doc->entries[5].value.text == "a\"b\\c\xc3\xa9\t");
  CHECK(doc->entries[6].section == std::vector<std::string>{"prices", "gpucloud"});
  CHECK(doc->entries[6].key == "rtx-pro-6000x8");
  CHECK(doc->entries[7].key == "rtx-4090");
  CHECK(doc->entries[7].section == std::vector<std::string>{"prices", "cloud gpu"});
  CHECK(doc->entries[7].value.number == Approx(-0.01));
  CHECK(doc->sections.size() == 2);  // [prices] is only implied: not a section of its own
  CHECK(toml_section_name(doc->sections[1]) == "prices.\"cloud gpu\"");
  CHECK(doc->section_lines == std::vector<int>{9, 11});
  CHECK(parse_toml("")->entries.empty());
  CHECK(parse_toml("\r\n# only a comment\r\n")->entries.empty());
  CHECK(parse_toml("a = 1\r\n")->entries.at(0).value.number == 1.0);
  // Full TOML 1.0 now (toml++): digit separators, dotted keys, multi-line literal strings.
  CHECK(parse_toml("a = 1_000")->entries.at(0).value.number == 1000.0);
  const auto dotted = parse_toml("prices.gpucloud.\"rtx-4090\" = 0.5\nb = '''x\ny'''\n");
  REQUIRE(dotted.has_value());
  CHECK(dotted->entries.at(0).section == std::vector<std::string>{"prices", "gpucloud"});
  CHECK(dotted->entries.at(1).value.text == "x\ny");
}

TEST_CASE("TomlReader: TOML errors and values the config has no use for name the line", "[common][toml]")
{
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a = 1\nb 2", "line 2: "},
      {"a = [1, 2]", "line 1: `a`: arrays are not used"},
      {"a = {x = 1}", "line 1: `a`: inline tables are not used"},
      {"a = \"open", "line 1: "},
      {"a = 1\na = 2", "line 2: "},
      {"[x]\n[x]", "line 2: "},
      {"[[x]]\nk = 1", "line 1: `x`: arrays are not used"},
      {"a = 2026-01-01", "line 1: `a`: dates and times are not used"},
      {"a = nan", "line 1: `a`: nan and inf"},
      {"a = inf", "line 1: `a`: nan and inf"},
      {"a = 01", "line 1: "},
      {"a = \"x\" y", "line 1: "},
      {"[x", "line 1: "},
      {"a = \"\\q\"", "line 1: "},
      {"= 1", "line 1: "},
      {"a =", "line 1: "},
      {"a = \"x\x01y\"", "line 1: "},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    const auto r = parse_toml(text);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::invalid_input);
    CHECK_THAT(r.error().message, Catch::Contains(want));
  }
  CHECK_THAT(parse_toml(std::string(k_toml_max_bytes + 1, '#')).error().message, Catch::Contains("larger than 1 MiB"));
  CHECK_THAT(parse_toml(std::string("a = 1\0", 6)).error().message, Catch::Contains("NUL"));
}

TEST_CASE("TomlReader: an error quoting a key with a decoded newline stays one line", "[common][toml]")
{
  // The committed-by-mistake crash-0 (now fuzz/crashes/fuzz_config/crash-0-multiline-error):
  // fuzz_config aborted because the error quoted the key "te 2.00 GiB.\nGPU 0 ..." with its
  // decoded newline, so the message spanned two lines.
  const auto r = parse_toml("a = 1\n  \"te 2.00 GiB.\\nGPU 0 has a total capacity \" 23\n");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find('\n') == std::string::npos);
  CHECK_THAT(r.error().message, Catch::StartsWith("line 2: "));
}

TEST_CASE("TomlReader: random and mutated input never crashes and errors carry a line", "[common][toml]")
{
  std::mt19937 rng(20261130);
  const std::string alphabet = "ab_-09 .=#[]\"'\\\ntrue\r\t{}ue+e\x01\xc3\xff";
  const std::string seed = "budget_usd = 1.5\n[prices.gpucloud]\n\"rtx-pro-6000x8\" = 12.5 # c\nname = 'x'\n";
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    if (i % 2 == 0) {
      const std::size_t n = rng() % 120;
      for (std::size_t k = 0; k < n; ++k) {
        s.push_back(alphabet[rng() % alphabet.size()]);
      }
    } else {
      s = seed;
      for (int m = 0; m < 4; ++m) {
        const std::size_t pos = rng() % s.size();
        switch (rng() % 3) {
        case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(pos, 1); break;
        default: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
    }
    const auto r = parse_toml(s);
    if (!r) {
      INFO(s);
      CHECK(r.error().message.rfind("line ", 0) == 0);
      CHECK(r.error().message.size() < 300);
    } else {
      for (const auto& e : r->entries) {
        CHECK(e.line >= 1);
        CHECK_FALSE(e.key.empty());
      }
    }
  }
}

TEST_CASE("TomlReader: the inputs that crash toml++ 3.3 are ordinary errors", "[common][toml]")
{
  // marzer/tomlplusplus#301: an assertion on a table header that cannot start a key; and the hole
  // in is_non_ascii_horizontal_whitespace (U+00A1..U+03F9 outside a string: unreachable code),
  // found by fuzz_config (fuzz/crashes/fuzz_config/tomlpp-*).
  for (const char* text : {"[{rices.gpucloud]\n", "[[[1]]]\n", "[[=\n", "y\xc3\x81", "a = 1 \xc3\x81\n", "[a\xc3\x81]\n"}) {
    INFO(text);
    const auto r = parse_toml(text);
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::StartsWith("line 1: "));
  }
  // Inside strings and comments such characters are plain text.
  const auto ok = parse_toml("a = \"\xc3\x81\" # \xc3\x81\n");
  REQUIRE(ok.has_value());
  CHECK(ok->entries.at(0).value.text == "\xc3\x81");
}
