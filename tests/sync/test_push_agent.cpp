// SPDX-License-Identifier: MIT
// The push agent (sync/push_agent.hpp) run by the local /bin/sh (dash on Debian: POSIX sh)
// with GNU tar, dd and openssl, fed by the real sources (sync/push_sources.hpp): a tree
// extracted and hashed, listed back, large files written as byte ranges in any order and
// finished (or refused when a range is wrong); and its readers over crafted and random output.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/backup_agent.hpp"
#include "sync/git_output.hpp"
#include "sync/job_agent.hpp"
#include "sync/push_agent.hpp"
#include "sync/push_plan.hpp"
#include "sync/push_sources.hpp"
#include "sync/sha256.hpp"

using namespace gpurent;
using namespace std::string_literals;
using gpurent::testing::run_sh;
using gpurent::testing::slurp;
using gpurent::testing::write_file;

namespace {

template <class Source>
std::string drain(Source& src)
{
  std::string all;
  char buf[7001];  // an odd size: pieces never line up with tar blocks
  while (true) {
    auto n = src.read(buf, sizeof buf);
    REQUIRE(n.has_value());
    if (*n == 0) {
      return all;
    }
    all.append(buf, *n);
  }
}

// Splits the agent's stdout into the listing and what follows it.
std::pair<std::vector<RemoteEntry>, std::string> split_agent_output(const std::string& out)
{
  AgentListingReader reader;
  std::size_t i = 0;
  while (i < out.size() && !reader.done()) {
    REQUIRE(reader.feed(std::string_view(out).substr(i, 1)).has_value());
    ++i;
  }
  REQUIRE(reader.done());
  auto listing = reader.result();
  REQUIRE(listing.has_value());
  return {*listing, out.substr(i)};
}

// The whole tree under `src` as a push sends it: walked, every entry through one TarSource.
LocalTree walked(const std::filesystem::path& src)
{
  auto tree = walk_local_tree(src, WalkOptions{});
  REQUIRE(tree.has_value());
  return std::move(*tree);
}

std::vector<std::size_t> every(std::size_t n)
{
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  return all;
}

struct Packed {
  explicit Packed(const std::filesystem::path& src)
      : tree(walked(src)), all(every(tree.entries.size())), source(src, tree.entries, all, done), input(drain(source))
  {
  }
  LocalTree tree;
  std::vector<std::size_t> all;
  std::atomic<std::uint64_t> done{0};
  TarSource source;
  std::string input;
};

struct Temp {
  Temp() : dir(std::filesystem::temp_directory_path() / ("gpurent-pushagent-" + std::to_string(::getpid())))
  {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Temp()
  {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  std::filesystem::path dir;
};

}  // namespace

TEST_CASE("push agent under /bin/sh: extracts a tree, hashes what it got, lists it back", "[sync][push][shell]")
{
  Temp t;
  const auto src = t.dir / "src";
  write_file(src / "a.txt", "hello");
  write_file(src / "sub" / "deep" / "b.bin", std::string(70000, 'b'));
  write_file(src / "empty", "");
  std::string long_name(150, 'L');
  long_name += ".txt";
  write_file(src / long_name, "long");
  write_file(src / "odd\nname", "odd");
  std::filesystem::create_symlink("a.txt", src / "link");
  ::chmod((src / "a.txt").c_str(), 0600);
  Packed packed(src);
  const LocalTree& tree = packed.tree;
  const TarSource& source = packed.source;
  const std::string& input = packed.input;
  const std::atomic<std::uint64_t>& done = packed.done;
  CHECK(done.load() == 5 + 70000 + 4 + 3);
  CHECK(source.troubled().empty());

  const auto dest = t.dir / "remote dir";  // created by the agent
  const auto r = run_sh(push_agent_command(dest.string(), true), input, t.dir);
  INFO(r.err);
  REQUIRE(r.status == 0);
  auto [listing, rest] = split_agent_output(r.out);
  CHECK(listing.empty());
  const auto trailer = parse_push_trailer(rest, source.files());
  REQUIRE(trailer.has_value());
  CHECK(trailer->tar_status == 0);
  CHECK(trailer->hashes.tool == "openssl");
  for (const auto& f : source.files()) {
    CHECK(trailer->hashes.sums.at(f) == source.sent_hashes().at(f));
    CHECK(slurp(dest / f) == slurp(src / f));
  }
  CHECK(std::filesystem::read_symlink(dest / "link") == "a.txt");
  struct stat st {};
  REQUIRE(::stat((dest / "a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);

  // Listed back, the plan has nothing left to send.
  const auto again = run_sh(push_agent_command(dest.string(), true), {}, t.dir);
  REQUIRE(again.status == 0);
  const auto [listed, nothing] = split_agent_output(again.out);
  CHECK(nothing.empty());
  const PushPlan plan = plan_push(tree.entries, listed, 1 << 20);
  CHECK(plan.files_to_send == 0);
  CHECK(plan.stream.empty());
}

TEST_CASE("push agent under /bin/sh: a long list is hashed by parallel runs that read as one, and leaves no temporary file",
          "[sync][push][shell]")
{
  Temp t;
  const auto src = t.dir / "src";
  std::mt19937 rng(43);
  for (int i = 0; i < 1500; ++i) {
    write_file(src / ("d" + std::to_string(i % 7)) / ("file-" + std::to_string(i) + "-with-a-longer-name.bin"),
               std::string(static_cast<std::size_t>(rng() % 3000), static_cast<char>('a' + i % 26)));
  }
  write_file(src / "odd\nname", "odd");
  write_file(src / "-dash", "dash");
  Packed packed(src);
  const TarSource& source = packed.source;
  const std::string& input = packed.input;
  REQUIRE(source.files().size() == 1502);
  const auto tmp = t.dir / "tmp";
  std::filesystem::create_directories(tmp);
  const auto r = run_sh("TMPDIR=" + tmp.string() + "; export TMPDIR\n" + push_agent_command((t.dir / "dst").string(), true), input, t.dir);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const auto trailer = parse_push_trailer(split_agent_output(r.out).second, source.files());
  REQUIRE(trailer.has_value());
  CHECK(trailer->hashes.tool == "openssl");
  CHECK(trailer->hashes.sums.size() == source.files().size());
  for (const auto& f : source.files()) {
    CHECK(trailer->hashes.sums.at(f) == source.sent_hashes().at(f));
  }
  CHECK(std::filesystem::is_empty(tmp));  // the list, its parts and their sums removed
}

TEST_CASE("push agent under /bin/sh: closed unused it creates nothing, and a directory it cannot make is a clear error",
          "[sync][push][shell]")
{
  Temp t;
  // The listing is read while the local tree is walked; a refused push then closes the agent.
  const auto dest = t.dir / "new" / "dir";
  const auto unused = run_sh(push_agent_command(dest.string(), true), {}, t.dir);
  REQUIRE(unused.status == 0);
  const auto [listed, rest] = split_agent_output(unused.out);
  CHECK(listed.empty());
  CHECK(rest.empty());
  CHECK_FALSE(std::filesystem::exists(t.dir / "new"));

  // Sent something, it makes the directory then.
  write_file(t.dir / "src" / "a.txt", "a");
  Packed packed(t.dir / "src");
  const TarSource& source = packed.source;
  const std::string& input = packed.input;
  const auto sent = run_sh(push_agent_command(dest.string(), true), input, t.dir);
  REQUIRE(sent.status == 0);
  const auto trailer = parse_push_trailer(split_agent_output(sent.out).second, source.files());
  REQUIRE(trailer.has_value());
  CHECK(slurp(dest / "a.txt") == "a");

  // A file where the directory should be: an error that says so, after the (empty) listing.
  write_file(t.dir / "blocked", "a file");
  const auto blocked = run_sh(push_agent_command((t.dir / "blocked").string(), true), input, t.dir);
  CHECK(blocked.status == 3);
  const auto [none, after] = split_agent_output(blocked.out);
  CHECK(none.empty());
  const auto refused = parse_push_trailer(after, source.files());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == Errc::refused);
  CHECK(refused.error().message.find("could not create the remote directory") != std::string::npos);
  CHECK(slurp(t.dir / "blocked") == "a file");
  // Any other stop of the agent is not mistaken for it.
  CHECK(parse_push_trailer("gpurent-agent-error\0protocol\0"s, {}).error().code == Errc::invalid_input);
}

TEST_CASE("push agent under /bin/sh: large files as byte ranges in any order, finished only when whole and right",
          "[sync][push][shell]")
{
  Temp t;
  std::string data(3 * 1024 * 1024 + 11, '\0');
  std::mt19937 rng(5);
  for (auto& c : data) {
    c = static_cast<char>(rng());
  }
  write_file(t.dir / "local" / "w.bin", data);
  ::chmod((t.dir / "local" / "w.bin").c_str(), 0640);
  const auto dest = t.dir / "remote";  // made by the first range to arrive: no listing agent made it
  std::atomic<std::uint64_t> done{0};
  const std::uint64_t part = 1024 * 1024 + 5;
  for (const std::uint64_t off : std::vector<std::uint64_t>{2 * part, 0, part}) {  // out of order
    const std::uint64_t len = std::min<std::uint64_t>(part, data.size() - off);
    RangeSource range(t.dir / "local" / "w.bin", off, len, done);
    const std::string bytes = drain(range);
    const auto r = run_sh(range_write_command(dest.string(), "sub/w.bin", off, len), bytes, t.dir);
    REQUIRE(r.status == 0);
    const auto res = parse_range_result(r.out);
    REQUIRE(res.has_value());
    CHECK(res->dd_status == 0);
    CHECK(res->sha256 == range.sha256());
    CHECK(res->sha256 == sha256_hex(std::string_view(data).substr(off, len)));
  }
  CHECK(done.load() == data.size());
  CHECK_FALSE(std::filesystem::exists(dest / "sub" / "w.bin"));  // not before it is finished
  // Every range that arrived whole is in the server's range ledger, in the order written.
  const auto ledger = run_sh(push_ledger_command(dest.string(), {"sub/w.bin", "absent.bin"}), {}, t.dir);
  const auto ledgers = parse_push_ledgers(ledger.out);
  REQUIRE(ledgers.has_value());
  REQUIRE(ledgers->size() == 1);
  const auto& lines = ledgers->at("sub/w.bin");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == PushLedgerRange{2 * part, data.size() - 2 * part, sha256_hex(std::string_view(data).substr(2 * part))});
  CHECK(lines[1] == PushLedgerRange{0, part, sha256_hex(std::string_view(data).substr(0, part))});
  // A range cut short (the client killed) is written but never recorded as finished.
  const auto cut = run_sh(range_write_command(dest.string(), "sub/w.bin", 0, part), data.substr(0, 100), t.dir);
  CHECK(parse_range_result(cut.out)->dd_status == 0);
  CHECK(parse_push_ledgers(run_sh(push_ledger_command(dest.string(), {"sub/w.bin"}), {}, t.dir).out)->at("sub/w.bin").size() == 3);
  // Put the bytes back for the check below.
  REQUIRE(run_sh(range_write_command(dest.string(), "sub/w.bin", 0, part), data.substr(0, part), t.dir).status == 0);
  const std::string whole = sha256_hex(data);
  const auto fin = run_sh(finalize_command(dest.string(), {BigFileFinal{"sub/w.bin", data.size(), whole, 0640, 1'700'000'000}}), {}, t.dir);
  const auto results = parse_finalize_output(fin.out);
  REQUIRE(results.has_value());
  CHECK(results->at("sub/w.bin").renamed);
  CHECK(results->at("sub/w.bin").sha256 == whole);
  CHECK(slurp(dest / "sub" / "w.bin") == data);
  CHECK_FALSE(std::filesystem::exists(dest / "sub" / "w.bin.gpurent-partial.ranges"));  // gone with the partial
  struct stat st {};
  REQUIRE(::stat((dest / "sub" / "w.bin").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(st.st_mtim.tv_sec == 1'700'000'000);

  // A partial file with a wrong byte, or one too short, stays a partial file.
  write_file(dest / "x.bin.gpurent-partial", "abcdef");
  write_file(dest / "short.bin.gpurent-partial", "abc");
  const auto bad = run_sh(finalize_command(dest.string(), {BigFileFinal{"x.bin", 6, sha256_hex("abcdeF"), 0644, 0},
                                                           BigFileFinal{"short.bin", 6, sha256_hex("abc\0\0\0"s), 0644, 0}}),
                          {}, t.dir);
  const auto bad_results = parse_finalize_output(bad.out);
  REQUIRE(bad_results.has_value());
  CHECK_FALSE(bad_results->at("x.bin").renamed);
  CHECK(bad_results->at("x.bin").sha256 == sha256_hex("abcdef"));
  CHECK_FALSE(bad_results->at("short.bin").renamed);
  CHECK_FALSE(std::filesystem::exists(dest / "x.bin"));
  CHECK_FALSE(std::filesystem::exists(dest / "short.bin"));
}

TEST_CASE("push agent readers: crafted, cut and random output", "[sync][push][property]")
{
  {
    const std::string h(64, 'c');
    const auto l = parse_push_ledgers("a\0" "0 10 "s + h + "\nbad line\n5 x " + h + "\n10 5 " + h + "\n20 5 " + h.substr(0, 10) + "\0"s);
    REQUIRE(l.has_value());
    CHECK(l->at("a") == std::vector<PushLedgerRange>{{0, 10, h}, {10, 5, h}});  // the cut last line and the bad ones skipped
    CHECK_FALSE(parse_push_ledgers("a\0"s).has_value());
    CHECK(parse_push_ledgers("")->empty());
  }
  const std::vector<std::string> asked = {"a", "b"};
  const std::string hex_a(64, 'a');
  const std::string good = "gpurent-push\0" "0\0openssl\0"s + hex_a + " *a\n";
  const auto t = parse_push_trailer(good, asked);
  REQUIRE(t.has_value());
  CHECK(t->tar_status == 0);
  CHECK(t->hashes.sums.at("a") == hex_a);
  CHECK_FALSE(t->hashes.sums.contains("b"));
  CHECK(parse_push_trailer("gpurent-push\0" "2\0none\0"s, asked)->tar_status == 2);
  CHECK_FALSE(parse_push_trailer("", asked).has_value());
  CHECK_FALSE(parse_push_trailer("gpurent-push\0x\0"s, asked).has_value());
  CHECK(parse_range_result("gpurent-range\0" "0\0"s + hex_a + "\0"s)->sha256 == hex_a);
  CHECK(parse_range_result("gpurent-range\0" "0\0\0"s)->sha256.empty());
  CHECK(parse_range_result("gpurent-range\0cd\0\0"s).error().code == Errc::not_found);
  CHECK_FALSE(parse_range_result("gpurent-range\0" "0\0zz\0"s).has_value());
  const auto fin = parse_finalize_output("ok\0a b\0"s + hex_a + "\0bad\0c\0\0"s);
  REQUIRE(fin.has_value());
  CHECK(fin->at("a b").renamed);
  CHECK_FALSE(fin->at("c").renamed);
  CHECK_FALSE(parse_finalize_output("ok\0a\0"s).has_value());
  CHECK(push_agent_preamble({"x", "y z"}) == "6\nx\0y z\0"s);
  std::mt19937 rng(9);
  for (int i = 0; i < 3000; ++i) {
    std::string junk = i % 3 == 0 ? good : std::string{};
    const auto n = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    for (std::size_t k = 0; k < n; ++k) {
      const char pool[] = {'\0', 'o', 'k', 'b', 'a', 'd', '0', '1', ' ', '*', '\n'};
      junk.insert(std::uniform_int_distribution<std::size_t>(0, junk.size())(rng), 1, pool[rng() % sizeof pool]);
    }
    (void)parse_push_trailer(junk, asked);
    (void)parse_range_result(junk);
    (void)parse_finalize_output(junk);
  }
}

TEST_CASE("the fuzz seeds in tests/data/run are valid input for their readers", "[sync][push]")
{
  const std::string dir = std::string(GPURENT_TEST_DATA) + "/run/";
  const auto seed = [&](const char* name) { return slurp(dir + name).substr(1); };  // after the reader-picking byte
  const auto jobs = parse_job_list(seed("seed_job_list.bin"));
  REQUIRE(jobs.has_value());
  CHECK(jobs->size() == 1);
  CHECK(parse_job_start(seed("seed_job_start.bin")).has_value());
  const auto trailer = parse_push_trailer(seed("seed_push_trailer.bin"), {"a", "b/c"});
  REQUIRE(trailer.has_value());
  CHECK(trailer->hashes.sums.size() == 2);
  CHECK(parse_finalize_output(seed("seed_finalize.bin"))->size() == 2);
  const auto listing = parse_ls_files(seed("seed_ls_files.bin"));
  REQUIRE(listing.has_value());
  CHECK(listing->files == std::vector<std::string>{".gitignore", "a b.py", "src/main.py"});
  CHECK(listing->nested == std::vector<std::string>{"nested"});
}
