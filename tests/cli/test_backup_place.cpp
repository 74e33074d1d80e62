// SPDX-License-Identifier: MIT
// Where a backup goes without --to: backup_dir/NAME, else the user's data directory; never the
// working directory (a project that push uploads).
#include <catch2/catch.hpp>

#include <sstream>

#include "cli/backup_place.hpp"
#include "cli/services.hpp"
#include "common/clock.hpp"

namespace {

gpurent::Result<std::filesystem::path> place(std::map<std::string, std::string> env, std::optional<std::string> dir,
                                             std::string_view name)
{
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  gpurent::SystemClock clock;
  gpurent::Services s{out, err, in, std::move(env), clock};
  return gpurent::default_backup_dir(s, dir, name);
}

}  // namespace

TEST_CASE("Backups default to a directory per server under the user's data directory", "[cli][backup]")
{
  CHECK(place({{"HOME", "/home/u"}}, std::nullopt, "train1").value() == "/home/u/.local/share/gpurent/backups/train1");
  CHECK(place({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "/data"}}, std::nullopt, "train1").value() ==
        "/data/gpurent/backups/train1");
  // A relative XDG_DATA_HOME is invalid (XDG Base Directory): ignored.
  CHECK(place({{"HOME", "/home/u"}, {"XDG_DATA_HOME", "rel"}}, std::nullopt, "t").value() ==
        "/home/u/.local/share/gpurent/backups/t");
  CHECK(place({{"HOME", "/home/u"}}, std::string("/mnt/bk"), "t").value() == "/mnt/bk/t");
  // The name is one path component, whatever the server was called.
  CHECK(place({{"HOME", "/h"}}, std::nullopt, "../../etc").value() == "/h/.local/share/gpurent/backups/.._.._etc");
  CHECK(place({{"HOME", "/h"}}, std::nullopt, "..").value() == "/h/.local/share/gpurent/backups/server");
  CHECK(gpurent::backup_dir_name("a b/c") == "a_b_c");
  const auto none = place({}, std::nullopt, "t");
  REQUIRE_FALSE(none);
  CHECK(none.error().code == gpurent::Errc::usage);
  CHECK(none.error().message.find("--to") != std::string::npos);
}
