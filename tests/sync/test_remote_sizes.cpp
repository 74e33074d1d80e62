// SPDX-License-Identifier: MIT
// The probe `down --destroy` runs before it asks: the real script under the local /bin/sh, and
// its reader held to exact answers (a property test over random answers and random bytes).
#include <catch2/catch.hpp>

#include <fstream>
#include <algorithm>
#include <random>

#include "sync/remote_sizes.hpp"
#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"

using namespace gpurent;

TEST_CASE("remote sizes: the script says what is at each path, by index", "[sync][remote_sizes]")
{
  gpurent::test::TempDir dir;
  const auto root = dir.path();
  std::filesystem::create_directories(root / "home" / "gpurent" / "train" / "ckpt");
  std::filesystem::create_directories(root / "empty dir");
  std::ofstream(root / "home" / "gpurent" / "train" / "ckpt" / "step 1.pt") << std::string(1000, 'x');
  std::ofstream(root / "home" / "gpurent" / "train" / "a\nb.txt") << "abc";
  std::ofstream(root / "one.bin") << std::string(7, 'y');
  const std::vector<std::string> paths{"~/gpurent/train", (root / "empty dir").string(), (root / "missing").string(),
                                       (root / "one.bin").string(), "~/it's; not $(here)"};
  const auto run = gpurent::testing::run_sh(remote_sizes_command(paths), {}, root / "home", {{"HOME", (root / "home").string()}});
  REQUIRE(run.status == 0);
  const auto sizes = parse_remote_sizes(run.out, paths.size());
  REQUIRE(sizes);
  CHECK((*sizes)[0].exists);
  CHECK((*sizes)[0].bytes == 1003);
  CHECK((*sizes)[0].files == 2);
  CHECK((*sizes)[1].exists);
  CHECK((*sizes)[1].files == 0);
  CHECK((*sizes)[1].bytes == 0);
  CHECK_FALSE((*sizes)[2].exists);
  CHECK((*sizes)[3].exists);
  CHECK((*sizes)[3].bytes == 7);
  CHECK((*sizes)[3].files == 1);
  CHECK_FALSE((*sizes)[4].exists);
}

TEST_CASE("remote sizes: the reader takes exactly one answer per path", "[sync][remote_sizes]")
{
  CHECK(parse_remote_sizes("", 0));
  CHECK(parse_remote_sizes("0 1 5 1\n1 0 0 0\n", 2));
  CHECK(parse_remote_sizes("1 0 0 0\n0 1 5 1\n", 2));  // any order
  CHECK_FALSE(parse_remote_sizes("0 1 5 1\n", 2));               // one missing
  CHECK_FALSE(parse_remote_sizes("0 1 5 1\n0 1 5 1\n", 1));      // repeated
  CHECK_FALSE(parse_remote_sizes("2 1 5 1\n", 1));               // not asked
  CHECK_FALSE(parse_remote_sizes("0 2 5 1\n", 1));               // exists is 0 or 1
  CHECK_FALSE(parse_remote_sizes("0 1 -5 1\n", 1));
  CHECK_FALSE(parse_remote_sizes("0 1 5\n", 1));
  CHECK_FALSE(parse_remote_sizes("0 1 5 1 9\n", 1));
  CHECK_FALSE(parse_remote_sizes("0  1 5 1\n", 1));
  CHECK_FALSE(parse_remote_sizes("0 1 5 1", 1));                 // cut short
  CHECK_FALSE(parse_remote_sizes("0 1 99999999999999999999999 1\n", 1));
}

TEST_CASE("remote sizes: property: what is written is read back, and random bytes never crash", "[sync][remote_sizes]")
{
  std::mt19937_64 rng(4711);
  for (int round = 0; round < 500; ++round) {
    const std::size_t n = rng() % 6;
    std::vector<RemotePathSize> want(n);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) {
      want[i] = RemotePathSize{rng() % 2 == 0, rng(), rng() % 100000};
      order[i] = i;
    }
    std::shuffle(order.begin(), order.end(), rng);
    std::string text;
    for (const auto i : order) {
      text += std::to_string(i) + " " + (want[i].exists ? "1" : "0") + " " + std::to_string(want[i].bytes) + " " +
              std::to_string(want[i].files) + "\n";
    }
    const auto got = parse_remote_sizes(text, n);
    REQUIRE(got);
    for (std::size_t i = 0; i < n; ++i) {
      CHECK((*got)[i].exists == want[i].exists);
      CHECK((*got)[i].bytes == want[i].bytes);
      CHECK((*got)[i].files == want[i].files);
    }
    // Any one byte changed: read exactly, or refused; never more answers than asked.
    if (!text.empty()) {
      std::string bad = text;
      bad[rng() % bad.size()] = static_cast<char>(rng() % 256);
      if (auto r = parse_remote_sizes(bad, n)) {
        CHECK(r->size() == n);
      }
    }
    std::string noise(rng() % 40, '\0');
    for (auto& c : noise) {
      c = "01 \n9x-"[rng() % 7];
    }
    if (auto r = parse_remote_sizes(noise, rng() % 4)) {
      CHECK(r->size() <= 3);
    }
  }
}
