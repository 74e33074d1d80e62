// SPDX-License-Identifier: MIT
// The readers of git's answers for `push` (sync/git_output.hpp): ls-files -z with nested
// repositories, check-ignore -z -v -n, rev-parse HEAD; every truncation and random bytes give
// an error value or paths that stay under the pushed directory.
#include <catch2/catch.hpp>

#include <random>

#include "sync/git_output.hpp"

using namespace gpurent;
using namespace std::string_literals;

namespace {

// Fields joined, each ended by a NUL (as git's -z output): built in steps, not with a chain of
// + on literals, which GCC 12 warns about falsely (-Warray-bounds).
std::string nul_fields(std::initializer_list<std::string_view> fields)
{
  std::string out;
  for (const auto f : fields) {
    out.append(f);
    out.push_back('\0');
  }
  return out;
}

}  // namespace

TEST_CASE("parse_ls_files: files and nested repositories, sorted and unique", "[sync][push][git_output]")
{
  const auto l = parse_ls_files(nul_fields({"src/b.py", "a.py", "nested/", "a.py", "odd\nname", "sp ace/x"}));
  REQUIRE(l.has_value());
  CHECK(l->files == std::vector<std::string>{"a.py", "odd\nname", "sp ace/x", "src/b.py"});
  CHECK(l->nested == std::vector<std::string>{"nested"});
  CHECK(parse_ls_files("").value().files.empty());
  for (const auto& bad : {"a\0b"s, "/etc/passwd\0"s, "../x\0"s, "a/../../x\0"s, "a//b\0"s, "./a\0"s, "\0"s, "/\0"s}) {
    INFO(bad);
    CHECK_FALSE(parse_ls_files(bad).has_value());
  }
}

TEST_CASE("parse_check_ignore: the rule that leaves each path out", "[sync][push][git_output]")
{
  const std::string out =
      nul_fields({".gitignore", "3", "build/", "build", "", "", "", "src/a.py", "/home/u/.config/git/ignore", "1", "*.pem", "k.pem"});
  const auto r = parse_check_ignore(out);
  REQUIRE(r.has_value());
  CHECK(r->size() == 2);
  CHECK(r->at("build") == ".gitignore:3: build/");
  CHECK(r->at("k.pem") == "/home/u/.config/git/ignore:1: *.pem");
  CHECK_FALSE(parse_check_ignore(nul_fields({".gitignore", "x", "p", "a"})).has_value());  // not a line number
  CHECK_FALSE(parse_check_ignore(nul_fields({"", "1", "p", "a"})).has_value());            // a pattern without its source
  for (std::size_t n = 1; n < out.size(); ++n) {
    const auto cut = parse_check_ignore(out.substr(0, n));
    CHECK((!cut.has_value() || cut->size() <= 2));
  }
}

TEST_CASE("parse_commit_id: 40 or 64 hex digits", "[sync][push][git_output]")
{
  std::string id(40, 'a');
  id.push_back('\n');
  CHECK(parse_commit_id(id) == std::string(40, 'a'));
  CHECK(parse_commit_id(std::string(64, '0')) == std::string(64, '0'));
  CHECK_FALSE(parse_commit_id("HEAD\n").has_value());
  CHECK_FALSE(parse_commit_id(std::string(39, 'a')).has_value());
  CHECK_FALSE(parse_commit_id(std::string(40, 'A')).has_value());
}

TEST_CASE("git readers: random bytes never escape the pushed directory", "[sync][push][git_output][property]")
{
  std::mt19937 rng(11);
  const std::string alphabet = "ab/./\0\n*"s;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const auto n = rng() % 40;
    for (std::size_t k = 0; k < n; ++k) {
      s += alphabet[rng() % alphabet.size()];
    }
    if (const auto l = parse_ls_files(s)) {
      for (const auto* v : {&l->files, &l->nested}) {
        for (const auto& p : *v) {
          CHECK(safe_relative_path(p));
        }
      }
    }
    (void)parse_check_ignore(s);
    (void)parse_commit_id(s);
  }
}
