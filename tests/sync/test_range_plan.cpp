// SPDX-License-Identifier: MIT
// Byte ranges of large files (sync/range_plan.hpp) and the server's side of a fetched range
// (sync/range_agent.hpp, run with the local /bin/sh as sshd would run it).
#include <catch2/catch.hpp>

#include <fstream>
#include <random>

#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/range_agent.hpp"
#include "sync/range_plan.hpp"
#include "sync/sha256.hpp"

using namespace gpurent;

namespace {
constexpr std::uint64_t k_mib = 1024 * 1024;
const std::string k_hex(64, 'a');
}  // namespace

TEST_CASE("Range plan: the pieces cover exactly the bytes no finished range holds", "[sync][ranges]")
{
  CHECK(spans_to_fetch(10, {}, 4) == std::vector<Span>{{0, 4}, {4, 4}, {8, 2}});
  CHECK(spans_to_fetch(10, {{4, 4}}, 4) == std::vector<Span>{{0, 4}, {8, 2}});
  CHECK(spans_to_fetch(10, {{0, 10}}, 4).empty());
  CHECK(spans_to_fetch(0, {}, 4) == std::vector<Span>{{0, 0}});  // an empty file is still created
  CHECK(spans_to_fetch(10, {{8, 100}}, 3) == std::vector<Span>{{0, 3}, {3, 3}, {6, 2}});  // clipped to the file

  // Property: for random finished sets, pieces + finished = [0, size), no overlap, no piece too big.
  std::mt19937_64 rng(28);
  for (int round = 0; round < 500; ++round) {
    const std::uint64_t size = rng() % 5000;
    const std::uint64_t piece = 1 + rng() % 700;
    std::vector<Span> done;
    for (std::uint64_t at = 0; size > 0 && at < size;) {
      const std::uint64_t len = 1 + rng() % 600;
      if (rng() % 2 == 0) {
        done.push_back(Span{at, std::min(len, size - at)});
      }
      at += len;
    }
    std::vector<int> hits(size, 0);
    for (const auto& d : done) {
      for (auto i = d.offset; i < d.offset + d.length; ++i) {
        ++hits[i];
      }
    }
    for (const auto& p : spans_to_fetch(size, done, piece)) {
      REQUIRE(p.length <= piece);
      for (auto i = p.offset; i < p.offset + p.length; ++i) {
        ++hits[i];
      }
    }
    for (std::uint64_t i = 0; i < size; ++i) {
      REQUIRE(hits[i] == 1);
    }
  }
}

TEST_CASE("Range plan: pieces per connection (two for backup, one for push), 8 MiB at least, the cap at most", "[sync][ranges]")
{
  CHECK(piece_size(1024 * k_mib, 8, 64 * k_mib) == 64 * k_mib);
  CHECK(piece_size(200 * k_mib, 4, 64 * k_mib) == 25 * k_mib);
  CHECK(piece_size(20 * k_mib, 4, 64 * k_mib) == 8 * k_mib);
  CHECK(piece_size(20 * k_mib, 4, 1 * k_mib) == 1 * k_mib);
  // push: one piece per connection
  CHECK(piece_size(256 * k_mib, 4, 64 * k_mib, 1) == 64 * k_mib);
  CHECK(piece_size(200 * k_mib, 4, 64 * k_mib, 1) == 50 * k_mib);
  CHECK(piece_size(1024 * k_mib, 4, 64 * k_mib, 1) == 64 * k_mib);
  CHECK(piece_size(20 * k_mib, 4, 64 * k_mib, 0) == 8 * k_mib);  // 0 reads as 1
}

TEST_CASE("Range plan: N range channels share one receive-window budget, whatever N", "[sync][ranges]")
{
  CHECK(range_window(1) == 16 * k_mib);
  CHECK(range_window(2) == 8 * k_mib);
  CHECK(range_window(8) == 2 * k_mib);
  CHECK(range_window(64) == 256 * 1024);
  for (std::size_t n = 1; n <= 64; ++n) {
    CHECK(static_cast<std::uint64_t>(range_window(n)) * n <= k_range_window_budget);
  }
}

TEST_CASE("Range ledger: what is rendered reads back, anything else is refused, never repaired", "[sync][ranges]")
{
  const RangeLedger l{300, 1700000000123456789LL, {{{0, 100}, k_hex}, {{100, 50}, std::string(64, 'b')}, {{200, 100}, k_hex}}};
  const auto back = parse_range_ledger(render_range_ledger(l));
  REQUIRE(back);
  CHECK(*back == l);
  CHECK(done_spans(*back) == std::vector<Span>{{0, 100}, {100, 50}, {200, 100}});

  const auto refused = [](const std::string& text) {
    const auto r = parse_range_ledger(text);
    return !r && r.error().code == Errc::invalid_input;
  };
  const std::string h = "\"" + k_hex + "\"";
  CHECK(refused(""));
  CHECK(refused("[]"));
  CHECK(refused(R"({"gpurent_range_ledger":2,"size":1,"mtime_ns":0,"done":[]})"));
  CHECK(refused(R"({"gpurent_range_ledger":1,"size":-1,"mtime_ns":0,"done":[]})"));
  CHECK(refused(R"({"gpurent_range_ledger":1,"size":10,"mtime_ns":0,"done":[{"offset":5,"length":6,"sha256":)" + h + "}]}"));
  CHECK(refused(R"({"gpurent_range_ledger":1,"size":10,"mtime_ns":0,"done":[{"offset":4,"length":2,"sha256":)" + h +
                R"(},{"offset":5,"length":1,"sha256":)" + h + "}]}"));
  CHECK(refused(R"({"gpurent_range_ledger":1,"size":10,"mtime_ns":0,"done":[{"offset":0,"length":2,"sha256":"ABC"}]})"));
  CHECK(refused(R"({"gpurent_range_ledger":1,"size":10,"mtime_ns":0,"done":[{"offset":0,"length":2}]})"));
  CHECK(parse_range_ledger(R"({"gpurent_range_ledger":1,"size":10,"mtime_ns":-5,"done":[]})"));
}

TEST_CASE("Range agent: the server sends exactly the range, and the SHA-256 of what it sent", "[sync][ranges]")
{
  test::TempDir tmp;
  std::string data(3 * k_mib + 123, '\0');
  std::mt19937 rng(7);
  for (auto& c : data) {
    c = static_cast<char>(rng());
  }
  {
    std::ofstream(tmp.path() / "ckpt bin", std::ios::binary) << data;
  }
  const std::string path = (tmp.path() / "ckpt bin").string();
  for (const auto& [off, len] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 10}, {k_mib - 1, 2 * k_mib + 7}, {0, data.size()}}) {
    const auto run = testing::run_sh(range_read_command(path, off, len));
    CHECK(run.status == 0);
    REQUIRE(run.out == data.substr(off, len));
    const auto report = parse_range_read_report(run.err);
    REQUIRE(report);
    CHECK_FALSE(report->missing);
    CHECK(report->dd_status == 0);
    CHECK(report->sha256 == sha256_hex(data.substr(off, len)));
  }
  // Past the end: fewer bytes (the file shrank); the caller sees the count.
  const auto past = testing::run_sh(range_read_command(path, data.size() - 5, 100));
  CHECK(past.out == data.substr(data.size() - 5));
  // A missing file.
  const auto gone = testing::run_sh(range_read_command((tmp.path() / "nope").string(), 0, 10));
  CHECK(gone.status == 3);
  const auto r = parse_range_read_report(gone.err);
  REQUIRE(r);
  CHECK(r->missing);
}

TEST_CASE("Range agent: the report is the last one on stderr, anything else is refused", "[sync][ranges]")
{
  const std::string good = std::string("gpurent-range\0", 14) + "0" + '\0' + k_hex + '\0';
  CHECK(parse_range_read_report("motd noise\n" + good)->sha256 == k_hex);
  CHECK(parse_range_read_report(std::string("gpurent-range\0", 14) + "0" + '\0' + '\0')->sha256.empty());
  CHECK_FALSE(parse_range_read_report(""));
  CHECK_FALSE(parse_range_read_report(std::string("gpurent-range\0", 14) + "x" + '\0' + k_hex + '\0'));
  CHECK_FALSE(parse_range_read_report(std::string("gpurent-range\0", 14) + "0" + '\0' + "XYZ" + '\0'));
  CHECK_FALSE(parse_range_read_report(std::string("gpurent-range\0", 14) + "0" + '\0'));
}
