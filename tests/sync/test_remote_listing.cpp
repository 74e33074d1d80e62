// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>

#include "sync/manifest.hpp"
#include "sync/remote_listing.hpp"

using namespace gpurent;

namespace {
std::string random_name(std::mt19937& rng)
{
  std::string s;
  const auto n = std::uniform_int_distribution<int>(1, 16)(rng);
  for (int i = 0; i < n; ++i) {
    char c = '\0';
    while (c == '\0' || c == '/') {
      c = static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng));
    }
    s.push_back(c);
  }
  return s;
}

RemoteEntry random_entry(std::mt19937& rng)
{
  RemoteEntry e;
  e.path = random_name(rng) + "/" + random_name(rng);
  e.kind = static_cast<EntryKind>(std::uniform_int_distribution<int>(0, 3)(rng));
  e.size = std::uniform_int_distribution<std::uint64_t>(0, 1ULL << 40)(rng);
  e.mtime_ns = std::uniform_int_distribution<std::int64_t>(-1'000'000'000'000'000'000LL, 4'000'000'000'000'000'000LL)(rng);
  e.mode = std::uniform_int_distribution<std::uint32_t>(0, 07777)(rng);
  if (e.kind == EntryKind::symlink) {
    e.link_target = random_name(rng);
  }
  return e;
}
}  // namespace

TEST_CASE("parse_find_listing: renders and parses back any entries, newlines and all", "[sync][listing]")
{
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<RemoteEntry> entries;
    const auto n = std::uniform_int_distribution<int>(0, 20)(rng);
    for (int i = 0; i < n; ++i) {
      entries.push_back(random_entry(rng));
    }
    const auto parsed = parse_find_listing(render_find_listing(entries));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == entries);
  }
}

TEST_CASE("parse_find_listing: GNU find output and malformed input", "[sync][listing]")
{
  using namespace std::string_literals;
  const auto ok = parse_find_listing("f\0" "12\0" "1700000000.5000000000\0" "644\0" "dir/a\nb\0" "\0"
                                     "l\0" "3\0" "1700000000\0" "777\0" "ln\0" "/etc\0"s);
  REQUIRE(ok.has_value());
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[0].path == "dir/a\nb");
  CHECK((*ok)[0].mtime_ns == 1'700'000'000'500'000'000LL);
  CHECK((*ok)[0].mode == 0644);
  CHECK((*ok)[1].kind == EntryKind::symlink);
  CHECK((*ok)[1].link_target == "/etc");
  CHECK_FALSE(parse_find_listing("f\0" "12\0"s).has_value());                                  // short
  CHECK_FALSE(parse_find_listing("f\0" "x\0" "1\0" "644\0" "a\0" "\0"s).has_value());           // size
  CHECK_FALSE(parse_find_listing("f\0" "1\0" "1\0" "999\0" "a\0" "\0"s).has_value());           // mode
  CHECK_FALSE(parse_find_listing("f\0" "1\0" "1\0" "644\0" "a\0" "no-trailing-nul"s).has_value());
  CHECK(parse_find_listing("").has_value());
}

TEST_CASE("parse_epoch_ns: seconds with any number of fraction digits", "[sync][listing]")
{
  CHECK(parse_epoch_ns("0") == 0);
  CHECK(parse_epoch_ns("1.5") == 1'500'000'000LL);
  CHECK(parse_epoch_ns("1700000000.1234567890") == 1'700'000'000'123'456'789LL);
  CHECK(parse_epoch_ns("-1.25") == -1'250'000'000LL);
  CHECK_FALSE(parse_epoch_ns("").has_value());
  CHECK_FALSE(parse_epoch_ns("1.").has_value());
  CHECK_FALSE(parse_epoch_ns("1.2x").has_value());
  CHECK_FALSE(parse_epoch_ns("99999999999999").has_value());
}

TEST_CASE("parse_hash_output: sha256sum -z, shasum and none", "[sync][listing]")
{
  using namespace std::string_literals;
  const std::string h1(64, 'a');
  const std::string h2(64, 'b');
  auto z = parse_hash_output("sha256sum\0"s + h1 + "  a\nb\0"s + h2 + "  c d\0"s);
  REQUIRE(z.has_value());
  CHECK(z->sums.at("a\nb") == h1);
  CHECK(z->sums.at("c d") == h2);
  auto s = parse_hash_output("shasum\0"s + h1 + "  x\n" + h2 + " *y\n");
  REQUIRE(s.has_value());
  CHECK(s->sums.size() == 2);
  CHECK(parse_hash_output("none\0"s)->tool == "none");
  CHECK_FALSE(parse_hash_output("").has_value());
  CHECK_FALSE(parse_hash_output("bash: bad\0"s).has_value());
  CHECK(parse_hash_output("sha256sum\0garbage\0"s)->sums.empty());
}

TEST_CASE("shell_quote: the shell reads back exactly the original bytes", "[sync][listing]")
{
  std::mt19937 rng(5);
  for (int i = 0; i < 25; ++i) {
    std::string s = random_name(rng) + "'\"$`\\ \n*";
    const std::string cmd = "printf %s " + shell_quote(s);
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[256];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
      out.append(buf, n);
    }
    ::pclose(p);
    CHECK(out == s);
  }
  CHECK(remote_shell_path("~") == ".");
  CHECK(remote_shell_path("~/ckpt") == "'ckpt'");
  CHECK(remote_shell_path("/a b") == "'/a b'");
}

TEST_CASE("manifest: render/parse round trip, including names that are not UTF-8", "[sync][manifest]")
{
  std::mt19937 rng(9);
  for (int round = 0; round < 30; ++round) {
    Manifest m;
    m.host = "root@h:22";
    m.finished_unix = 1'700'000'000;
    for (int i = 0; i < 10; ++i) {
      const auto e = random_entry(rng);
      ManifestEntry me{e.kind, e.size, e.mtime_ns, e.mode, e.kind == EntryKind::file ? std::string(64, 'c') : "", e.link_target};
      if (me.kind == EntryKind::other) {
        me.kind = EntryKind::file;
        me.sha256 = std::string(64, 'c');
      }
      if (me.kind != EntryKind::symlink) {
        me.link_target.clear();
      }
      m.entries[e.path] = me;
    }
    const auto back = parse_manifest(render_manifest(m));
    REQUIRE(back.has_value());
    CHECK(*back == m);
  }
  CHECK_FALSE(parse_manifest("{").has_value());
  CHECK_FALSE(parse_manifest("{\"version\":2,\"files\":[]}").has_value());
  CHECK_FALSE(parse_manifest("{\"version\":1,\"files\":[{\"type\":\"file\"}]}").has_value());
  CHECK(is_valid_utf8("ascii ü 日本"));
  CHECK_FALSE(is_valid_utf8("\xff"));
  CHECK_FALSE(is_valid_utf8("\xc0\x80"));      // overlong
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));  // surrogate
}
