// SPDX-License-Identifier: MIT
// A command's captured output (sync/captured_output.hpp): kept up to its limit, a clear error
// past it, and nothing more kept, whatever the sizes of the pieces that arrive.
#include <catch2/catch.hpp>

#include <random>

#include "sync/captured_output.hpp"

using namespace gpurent;

TEST_CASE("captured output: up to the limit, then a clear error and nothing more kept", "[sync][security]")
{
  CapturedOutput out("stdout", "root@gpu:22", 10);
  CHECK(out.append("12345").has_value());
  CHECK(out.append("67890").has_value());  // exactly the limit
  CHECK(out.text() == "1234567890");
  const auto over = out.append("x");
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().code == Errc::invalid_input);
  CHECK(over.error().message.find("root@gpu:22") != std::string::npos);
  CHECK(over.error().message.find("more than 10 bytes on its stdout") != std::string::npos);
  CHECK(out.text() == "1234567890");
  CHECK(out.take() == "1234567890");

  CHECK(limit_text(k_captured_output_limit) == "64 MiB");
  CHECK(limit_text(k_tree_output_limit) == "1 GiB");
  CHECK(limit_text(512 * 1024) == "512 KiB");
  CHECK(limit_text(1000) == "1000 bytes");
}

TEST_CASE("captured output: a flood in random pieces never holds more than the limit", "[sync][security][property]")
{
  std::mt19937 rng(44);
  for (int round = 0; round < 200; ++round) {
    const std::size_t limit = std::uniform_int_distribution<std::size_t>(0, 5000)(rng);
    CapturedOutput err("stderr", "h", limit);
    std::size_t sent = 0;
    bool failed = false;
    while (sent < limit + 10000) {
      const std::string piece(std::uniform_int_distribution<std::size_t>(0, 700)(rng), 'y');
      const auto r = err.append(piece);
      sent += piece.size();
      CHECK(err.text().size() <= limit);
      if (!r) {
        failed = true;
        CHECK(sent > limit);
        break;
      }
      CHECK(err.text().size() == sent);
    }
    CHECK(failed);
  }
}
