// SPDX-License-Identifier: MIT
// Push planning (sync/push_plan.hpp): what is sent, and how the work is cut for channels.
#include <catch2/catch.hpp>

#include <numeric>
#include <random>

#include "sync/push_plan.hpp"

using namespace gpurent;

namespace {
constexpr std::int64_t k_s = 1'000'000'000LL;

LocalEntry file(std::string p, std::uint64_t size, std::int64_t mtime_ns)
{
  return LocalEntry{std::move(p), EntryKind::file, size, mtime_ns, 0644, {}};
}
RemoteEntry rfile(std::string p, std::uint64_t size, std::int64_t mtime_ns)
{
  return RemoteEntry{std::move(p), EntryKind::file, size, mtime_ns, 0644, {}};
}
// At most `parts` groups, none empty, which joined are the stream in order.
void check_groups(const std::vector<std::vector<std::size_t>>& groups, const std::vector<std::size_t>& stream, std::size_t parts)
{
  REQUIRE(!groups.empty());
  CHECK(groups.size() <= parts);
  std::vector<std::size_t> joined;
  for (const auto& g : groups) {
    CHECK_FALSE(g.empty());
    joined.insert(joined.end(), g.begin(), g.end());
  }
  CHECK(joined == stream);
}
// 1 to `most` files of 0 to `largest` bytes, and the stream of them all in order.
std::pair<std::vector<LocalEntry>, std::vector<std::size_t>> random_stream(std::mt19937& rng, std::size_t most, std::uint64_t largest)
{
  std::vector<LocalEntry> local;
  const auto n = std::uniform_int_distribution<std::size_t>(1, most)(rng);
  for (std::size_t i = 0; i < n; ++i) {
    local.push_back(file("f" + std::to_string(i), std::uniform_int_distribution<std::uint64_t>(0, largest)(rng), 0));
  }
  std::vector<std::size_t> stream(n);
  std::iota(stream.begin(), stream.end(), std::size_t{0});
  return {std::move(local), std::move(stream)};
}
}  // namespace

TEST_CASE("plan_push: new, changed and unchanged files, directories, links and kinds", "[sync][push]")
{
  const std::vector<LocalEntry> local = {
      LocalEntry{"src", EntryKind::directory, 0, 5 * k_s, 0755, {}},
      file("src/same.py", 10, 100 * k_s + 123),          // same second as the server's copy
      file("src/touched.py", 10, 101 * k_s),             // another second
      file("src/grown.py", 11, 100 * k_s),
      file("src/new.py", 1, 100 * k_s),
      LocalEntry{"new_dir", EntryKind::directory, 0, 5 * k_s, 0755, {}},
      LocalEntry{"link", EntryKind::symlink, 0, 5 * k_s, 0777, "src/same.py"},
      LocalEntry{"link2", EntryKind::symlink, 0, 5 * k_s, 0777, "a"},
      file("was_dir", 3, 100 * k_s),
      file("weights.bin", 100, 100 * k_s),
      file("weights2.bin", 100, 100 * k_s),
  };
  const std::vector<RemoteEntry> remote = {
      RemoteEntry{"src", EntryKind::directory, 4096, 1 * k_s, 0755, {}},
      rfile("src/same.py", 10, 100 * k_s + 999'000'000),
      rfile("src/touched.py", 10, 100 * k_s),
      rfile("src/grown.py", 10, 100 * k_s),
      RemoteEntry{"link", EntryKind::symlink, 11, 5 * k_s, 0777, "src/same.py"},
      RemoteEntry{"link2", EntryKind::symlink, 1, 5 * k_s, 0777, "b"},
      RemoteEntry{"was_dir", EntryKind::directory, 4096, 100 * k_s, 0755, {}},
      rfile("weights2.bin", 100, 100 * k_s),
      rfile("outputs/ckpt.pt", 1 << 20, 100 * k_s),  // only on the server: kept, never deleted
  };
  const PushPlan plan = plan_push(local, remote, 100);
  std::vector<std::string> stream;
  for (const auto i : plan.stream) {
    stream.push_back(local[i].path);
  }
  CHECK(stream == std::vector<std::string>{"src/touched.py", "src/grown.py", "src/new.py", "new_dir", "link2", "was_dir"});
  REQUIRE(plan.big.size() == 1);
  CHECK(local[plan.big[0]].path == "weights.bin");
  CHECK(plan.files_total == 7);
  CHECK(plan.bytes_total == 10 + 10 + 11 + 1 + 3 + 100 + 100);
  CHECK(plan.files_to_send == 5);
  CHECK(plan.bytes_to_send == 10 + 11 + 1 + 3 + 100);
  CHECK(plan_push(local, {}, 1000).files_to_send == 7);
}

TEST_CASE("split_stream and split_ranges: consecutive, balanced, complete", "[sync][push][property]")
{
  std::mt19937 rng(3);
  for (int round = 0; round < 200; ++round) {
    const auto [local, stream] = random_stream(rng, 300, 200'000);
    const std::size_t n = local.size();
    const auto parts = std::uniform_int_distribution<std::size_t>(1, 6)(rng);
    const auto groups = split_stream(stream, local, parts);
    check_groups(groups, stream, parts);
    if (n >= 50 * parts) {
      // No group carries much more than its share: the largest item at most on top of it.
      std::uint64_t total = 0;
      std::uint64_t largest = 0;
      for (const auto& e : local) {
        total += e.size + 1024;
        largest = std::max<std::uint64_t>(largest, e.size + 1024);
      }
      for (const auto& g : groups) {
        std::uint64_t w = 0;
        for (const auto i : g) {
          w += local[i].size + 1024;
        }
        CHECK(w <= total / parts + largest);
      }
    }
    const auto range_size = std::uniform_int_distribution<std::uint64_t>(1, 300'000)(rng);
    const auto ranges = split_ranges(stream, local, range_size);
    std::map<std::size_t, std::uint64_t> covered;
    for (const auto& r : ranges) {
      CHECK(r.length <= range_size);
      CHECK(r.offset == covered[r.entry]);  // in order, no gap, no overlap
      covered[r.entry] += r.length;
    }
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(covered[i] == local[i].size);
    }
  }
  CHECK(split_stream({}, {}, 3).empty());
  // Spans a killed push left verified are not cut again.
  const std::vector<LocalEntry> two = {file("a", 100, 0), file("b", 30, 0)};
  const auto left = split_ranges({0, 1}, two, 40, {{0, {Span{0, 40}, Span{60, 10}}}});
  CHECK(left.size() == 3);
  CHECK((left[0].entry == 0 && left[0].offset == 40 && left[0].length == 20));
  CHECK((left[1].entry == 0 && left[1].offset == 70 && left[1].length == 30));
  CHECK((left[2].entry == 1 && left[2].offset == 0 && left[2].length == 30));
  // The first range longer (the connection that sends at once), the rest cut as usual.
  const auto led = split_ranges({0, 1}, two, 30, {}, 45);
  REQUIRE(led.size() == 4);
  CHECK((led[0].entry == 0 && led[0].offset == 0 && led[0].length == 45));
  CHECK((led[1].entry == 0 && led[1].offset == 45 && led[1].length == 30));
  CHECK((led[2].entry == 0 && led[2].offset == 75 && led[2].length == 25));
  CHECK((led[3].entry == 1 && led[3].offset == 0 && led[3].length == 30));
  // Not where the first file has spans done, nor longer than the file.
  CHECK(split_ranges({0, 1}, two, 40, {{0, {Span{0, 40}}}}, 45).front().length == 40);
  CHECK(split_ranges({0, 1}, two, 40, {}, 100).front().length == 40);
}

TEST_CASE("split_stream with a first share: the first connection, which starts at once, carries its share", "[sync][push][property]")
{
  using secs = std::chrono::duration<double>;
  // The tree at 50 ms: 1.48 s over one connection, another costing 0.47 s: the first carries 66%.
  CHECK(first_stream_share(secs(1.48), secs(0.47), 2) == Approx((1.48 + 0.47) / 2 / 1.48));
  CHECK(first_stream_share(secs(1.48), secs(0.47), 1) == 1);
  CHECK(first_stream_share(secs(0), secs(0.47), 4) == Approx(0.25));     // nothing known: equal
  CHECK(first_stream_share(secs(1.0), secs(5.0), 2) == Approx(0.9));      // set-up longer than the send: capped
  CHECK(first_stream_share(secs(10.0), secs(0.0), 4) == Approx(0.25));    // free connections: equal
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const auto [local, stream] = random_stream(rng, 400, 100'000);
    std::uint64_t total = 0;
    std::uint64_t largest = 0;
    for (const auto& e : local) {
      total += e.size + 1024;
      largest = std::max<std::uint64_t>(largest, e.size + 1024);
    }
    const auto parts = std::uniform_int_distribution<std::size_t>(2, 6)(rng);
    const double share = std::uniform_real_distribution<double>(1.0 / static_cast<double>(parts), 0.9)(rng);
    const auto groups = split_stream(stream, local, parts, share);
    check_groups(groups, stream, parts);
    std::uint64_t first = 0;
    for (const auto i : groups.front()) {
      first += local[i].size + 1024;
    }
    const auto want = static_cast<std::uint64_t>(static_cast<double>(total) * share);
    CHECK(first + largest >= want);  // within one item of its share
    CHECK(first <= want + largest);
  }
}

TEST_CASE("choose_push_sessions: more connections only where the window, not the set-up, bounds the push", "[sync][push]")
{
  using namespace std::chrono_literals;
  const std::uint64_t mib = 1024 * 1024;
  // Loopback: a round trip of 0.1 ms never lets the 2 MiB window bind.
  CHECK(choose_push_sessions(59 * mib, 100us, 900ms, 6) == 1);
  CHECK(choose_push_sessions(10240 * mib, 100us, 900ms, 6) == 1);
  // 50 ms, a connection costing 1.2 s (a slow remote shell): 59 MiB of small files (1.5 s through
  // one window) stay on one; 256 MiB (6.4 s) takes four.
  CHECK(choose_push_sessions(59 * mib, 50ms, 1200ms, 6) == 1);
  CHECK(choose_push_sessions(256 * mib, 50ms, 1200ms, 6) == 4);
  // 50 ms, a connection costing 0.47 s, as measured (docs/benchmarks.md, session 24): the 20,000-file
  // tree (59 MiB) takes three (1: 2.8 s, 2: 2.1 s, 3: 2.0 s, 4: 1.9-2.0 s, 6: 2.4 s), 256 MiB six
  // (4: 3.5-3.6 s, 6: 3.4-3.6 s).
  CHECK(choose_push_sessions(59 * mib, 50ms, 470ms, 6) == 3);
  CHECK(choose_push_sessions(256 * mib, 50ms, 470ms, 6) == 6);
  // A 10 GiB checkpoint at 100 ms: as many as allowed.
  CHECK(choose_push_sessions(10240 * mib, 100ms, 1s, 6) == 6);
  CHECK(choose_push_sessions(10240 * mib, 100ms, 1s, 3) == 3);
  // Nothing to send, no round trip measured, one allowed: one.
  CHECK(choose_push_sessions(0, 50ms, 1s, 6) == 1);
  CHECK(choose_push_sessions(256 * mib, 0ms, 1s, 6) == 1);
  CHECK(choose_push_sessions(256 * mib, 50ms, 1s, 1) == 1);
  // Free connections: the window alone decides, so the most.
  CHECK(choose_push_sessions(256 * mib, 50ms, 0ms, 6) == 6);
  // Never more when the set-up grows, never fewer when the data grows (property over a grid).
  for (std::uint64_t b = 1; b <= 16384; b *= 2) {
    for (int rtt_ms = 1; rtt_ms <= 200; rtt_ms *= 3) {
      std::size_t last = 6;
      for (int setup_ms = 0; setup_ms <= 4000; setup_ms += 250) {
        const auto n = choose_push_sessions(b * mib, std::chrono::milliseconds(rtt_ms), std::chrono::milliseconds(setup_ms), 6);
        CHECK(n <= last);
        CHECK(n >= 1);
        last = n;
      }
      CHECK(choose_push_sessions(2 * b * mib, std::chrono::milliseconds(rtt_ms), 1s, 6) >=
            choose_push_sessions(b * mib, std::chrono::milliseconds(rtt_ms), 1s, 6));
    }
  }
}
