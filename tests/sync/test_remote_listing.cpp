// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/manifest.hpp"
#include "sync/remote_listing.hpp"
#include "sync/sha256.hpp"

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
  // Found by fuzz_remote_listing (fuzz/crashes/): a second sign let a huge negative number past
  // the range check and overflowed the nanoseconds.
  CHECK_FALSE(parse_epoch_ns("--9999999999999.0").has_value());
  CHECK_FALSE(parse_epoch_ns("--1").has_value());
  CHECK_FALSE(parse_epoch_ns("-+1").has_value());
}

TEST_CASE("parse_hash_output: sha256sum -z, shasum and none", "[sync][listing]")
{
  using namespace std::string_literals;
  const std::string h1(64, 'a');
  const std::string h2(64, 'b');
  auto z = parse_hash_output("sha256sum\0"s + h1 + "  a\nb\0"s + h2 + "  c d\0"s, {"a\nb", "c d"});
  REQUIRE(z.has_value());
  CHECK(z->sums.at("a\nb") == h1);
  CHECK(z->sums.at("c d") == h2);
  auto s = parse_hash_output("shasum\0"s + h1 + "  x\n" + h2 + " *y\n", {"x", "y"});
  REQUIRE(s.has_value());
  CHECK(s->sums.size() == 2);
  CHECK(parse_hash_output("none\0"s, {})->tool == "none");
  CHECK_FALSE(parse_hash_output("", {}).has_value());
  CHECK_FALSE(parse_hash_output("bash: bad\0"s, {}).has_value());
  CHECK(parse_hash_output("sha256sum\0garbage\0"s, {})->sums.empty());
}

TEST_CASE("parse_hash_output: sha256sum and shasum records count only for the names asked", "[sync][listing]")
{
  // Found by fuzz_backup_agent and fuzz_remote_listing (fuzz/crashes/): a record whose name
  // was not sent to the script (a server printing extra lines, or two records run together)
  // must not stand as the hash of some file.
  using namespace std::string_literals;
  const std::string h1(64, 'a');
  const std::string h2(64, 'b');
  const auto z = parse_hash_output("sha256sum\0"s + h1 + "  a\0"s + h2 + "  b/cshasum\0"s, {"a", "b/c"});
  REQUIRE(z.has_value());
  CHECK(z->sums == std::map<std::string, std::string>{{"a", h1}});
  const auto s = parse_hash_output("shasum\0"s + h1 + " *a\n" + h2 + " *`/c\n", {"a", "b/c"});
  REQUIRE(s.has_value());
  CHECK(s->sums == std::map<std::string, std::string>{{"a", h1}});
  CHECK(parse_hash_output("shasum\0"s + h1 + " *a\n", {})->sums.empty());
}

TEST_CASE("parse_hash_output: openssl dgst -r records matched against the names asked, in order", "[sync][listing]")
{
  using namespace std::string_literals;
  const std::string h1(64, '1');
  const std::string h2(64, '2');
  const std::string h3(64, '3');
  const std::vector<std::string> asked{"-dash", "gone", "two\nlines", "back\\slash", "last"};
  // openssl prints names raw and skips a file it cannot open ("gone"), reporting it on stderr.
  auto h = parse_hash_output("openssl\0"s + h1 + " *-dash\n" + h2 + " *two\nlines\n" + h3 + " *back\\slash\n", asked);
  REQUIRE(h.has_value());
  CHECK(h->tool == "openssl");
  CHECK(h->sums.size() == 3);
  CHECK(h->sums.at("-dash") == h1);
  CHECK(h->sums.at("two\nlines") == h2);
  CHECK(h->sums.at("back\\slash") == h3);
  CHECK_FALSE(h->sums.contains("gone"));
  CHECK_FALSE(h->sums.contains("last"));
  // OpenSSL 3 escapes a newline in a name the way coreutils does.
  auto e = parse_hash_output("openssl\0"s + h1 + " *-dash\n\\" + h2 + " *two\\nlines\n", asked);
  REQUIRE(e.has_value());
  CHECK(e->sums.at("two\nlines") == h2);
  CHECK(e->sums.size() == 2);
  // Garbage stops the matching: what came before stands, nothing after is believed.
  auto g = parse_hash_output("openssl\0"s + h1 + " *-dash\nnot a record\n" + h3 + " *last\n", asked);
  REQUIRE(g.has_value());
  CHECK(g->sums.size() == 1);
  // A record for a name that was not asked is never taken.
  CHECK(parse_hash_output("openssl\0"s + h1 + " *other\n", asked)->sums.empty());
  // Upper-case or short digests are not digests.
  CHECK(parse_hash_output("openssl\0"s + std::string(64, 'A') + " *last\n", {"last"})->sums.empty());
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
  CHECK(remote_shell_path("~/ckpt") == "'./ckpt'");
  CHECK(remote_shell_path("/a b") == "'/a b'");
}

TEST_CASE("relative remote paths start with ./: a name starting with '-' is never an option", "[sync][security]")
{
  CHECK(remote_shell_path("-x") == "'./-x'");
  CHECK(remote_shell_path("~/-x") == "'./-x'");
  CHECK(remote_shell_path("--help") == "'./--help'");
  CHECK(remote_shell_path("a/b") == "'./a/b'");
  CHECK(remote_shell_path("./a") == "'./a'");
  CHECK(remote_shell_path(".") == "'.'");
  CHECK(remote_shell_path("/-x") == "'/-x'");
  // find takes no "--" before its paths: a root named "-x" reaches it as a path, listed.
  gpurent::test::TempDir tmp;
  tmp.write("-x/a.txt", "abc");
  tmp.write("-x/sub/b.txt", "d");
  const auto r = gpurent::testing::run_sh(find_listing_command("-x"), {}, tmp.path());
  INFO(r.err);
  CHECK(r.status == 0);
  const auto entries = parse_find_listing(r.out);
  REQUIRE(entries.has_value());
  std::vector<std::string> paths;
  for (const auto& e : *entries) {
    paths.push_back(e.path);
  }
  std::sort(paths.begin(), paths.end());
  CHECK(paths == std::vector<std::string>{"a.txt", "sub", "sub/b.txt"});
  // The hashes of its files, from inside it.
  const auto h = gpurent::testing::run_sh(hash_command("-x"), std::string("a.txt\0", 6), tmp.path());
  const auto sums = parse_hash_output(h.out, {"a.txt"});
  REQUIRE(sums.has_value());
  CHECK(sums->sums.count("a.txt") == 1);
}

TEST_CASE("manifest: numbers that are not whole numbers are refused, not cast", "[sync][manifest]")
{
  // Found by fuzz_manifest (fuzz/crashes/fuzz_manifest/): nlohmann converts a float to an
  // integer with a cast, undefined behaviour when it is out of range.
  const std::string entry = R"("path": "a", "type": "file", "size": 5, "mtime_ns": 1, "mode": 420)";
  CHECK(parse_manifest(R"({"version": 1, "files": [{)" + entry + "}]}")->entries.size() == 1);
  for (const char* bad : {R"({"version": 1844674400171744001711644218446, "files": []})",
                          R"({"version": 1.0, "files": []})", R"({"version": 1, "finished_unix": 1e300, "files": []})",
                          R"({"version": 1, "files": [{"path": "a", "type": "file", "size": 1e30, "mtime_ns": 1, "mode": 420}]})",
                          R"({"version": 1, "files": [{"path": "a", "type": "file", "size": 5, "mtime_ns": -1e300, "mode": 420}]})",
                          R"({"version": 1, "files": [{"path": "a", "type": "file", "size": 5, "mtime_ns": 1, "mode": 4.2e20}]})",
                          R"({"version": 1, "files": [{"path": "a", "type": "file", "size": 5, "mtime_ns": 1, "mode": "644"}]})"}) {
    INFO(bad);
    const auto m = parse_manifest(bad);
    REQUIRE_FALSE(m.has_value());
    CHECK(m.error().code == Errc::invalid_input);
  }
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

TEST_CASE("parse_hash_output: openssl records round-trip for random names and unreadable files", "[sync][listing][property]")
{
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> asked;
    std::map<std::string, std::string> expected;
    std::string out = std::string("openssl") + '\0';
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const std::string name = random_name(rng) + std::to_string(i);  // distinct
      asked.push_back(name);
      if (rng() % 4 == 0) {
        continue;  // unreadable on the server: no record
      }
      std::string hex;
      for (int k = 0; k < 64; ++k) {
        hex.push_back("0123456789abcdef"[rng() % 16]);
      }
      expected[name] = hex;
      out += hex + " *" + name + "\n";
    }
    INFO(round);
    const auto h = parse_hash_output(out, asked);
    REQUIRE(h.has_value());
    CHECK(h->sums == expected);
  }
}

namespace {

// Runs hash_command(dir) with /bin/sh locally, with only the named tools on PATH.
std::string run_hash_script(const std::filesystem::path& work, const std::filesystem::path& dir,
                            const std::vector<std::string>& tools, const std::string& names)
{
  const auto bin = work / "bin";
  std::filesystem::remove_all(bin);
  std::filesystem::create_directories(bin);
  for (const auto& tool : tools) {
    for (const char* d : {"/usr/bin/", "/bin/"}) {
      if (std::filesystem::exists(std::string(d) + tool)) {
        std::filesystem::create_symlink(std::string(d) + tool, bin / tool);
        break;
      }
    }
  }
  std::ofstream(work / "script.sh") << hash_command(dir.string());
  std::ofstream(work / "names", std::ios::binary) << names;
  const std::string cmd = "PATH='" + bin.string() + "' /bin/sh '" + (work / "script.sh").string() + "' < '" +
                          (work / "names").string() + "' > '" + (work / "out").string() + "' 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) != -1);
  std::ifstream in(work / "out", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("hash_command: openssl first, then sha256sum, shasum, none, odd names survive each", "[sync][listing]")
{
  const auto work = std::filesystem::temp_directory_path() / ("gpurent-hash-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(work);
  const auto dir = work / "tree dir";
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "a.bin") << "alpha";
  std::ofstream(dir / "two\nlines") << "beta";
  std::ofstream(dir / "-dash") << "gamma";
  const std::vector<std::string> asked{"sub/a.bin", "two\nlines", "missing", "-dash"};
  std::string names;
  for (const auto& n : asked) {
    names += n;
    names.push_back('\0');
  }
  const std::map<std::string, std::string> expected{
      {"sub/a.bin", sha256_hex("alpha")}, {"two\nlines", sha256_hex("beta")}, {"-dash", sha256_hex("gamma")}};

  SECTION("openssl")
  {
    const auto h = parse_hash_output(run_hash_script(work, dir, {"openssl", "xargs", "sha256sum", "cat"}, names), asked);
    REQUIRE(h.has_value());
    CHECK(h->tool == "openssl");
    CHECK(h->sums == expected);
  }
  SECTION("sha256sum when there is no openssl")
  {
    const auto h = parse_hash_output(run_hash_script(work, dir, {"xargs", "sha256sum", "cat"}, names), asked);
    REQUIRE(h.has_value());
    CHECK(h->tool == "sha256sum");
    CHECK(h->sums == expected);
  }
  SECTION("none: the names are read and nothing is claimed")
  {
    const auto h = parse_hash_output(run_hash_script(work, dir, {"xargs", "cat"}, names), asked);
    REQUIRE(h.has_value());
    CHECK(h->tool == "none");
    CHECK(h->sums.empty());
  }
  std::filesystem::remove_all(work);
}
