// SPDX-License-Identifier: MIT
// write_file_atomically: the new text with the asked mode, or the old file untouched.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "providers/atomic_file.hpp"
#include "fakes/temp_dir.hpp"

namespace {

std::string read_all(const std::filesystem::path& p)
{
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

unsigned mode_of(const std::filesystem::path& p)
{
  struct stat st{};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 0777U;
}

}  // namespace

TEST_CASE("write_file_atomically: new file, replaced file, asked mode", "[atomic_file]")
{
  gpurent::test::TempDir dir;
  const auto path = dir.path() / "record.json";
  REQUIRE(gpurent::write_file_atomically(path.string(), "first\n", 0600));
  CHECK(read_all(path) == "first\n");
  CHECK(mode_of(path) == 0600U);
  const auto old_umask = ::umask(0777);  // the umask cannot narrow the asked mode
  const auto replaced = gpurent::write_file_atomically(path.string(), std::string(100000, 'x'), 0640);
  ::umask(old_umask);
  REQUIRE(replaced);
  CHECK(read_all(path) == std::string(100000, 'x'));
  CHECK(mode_of(path) == 0640U);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".gpurent-tmp"));
}

TEST_CASE("write_file_atomically: a failure leaves the old file as it was", "[atomic_file]")
{
  gpurent::test::TempDir dir;
  // The target is a non-empty directory: the rename fails after the temporary file was written.
  const auto target = dir.path() / "busy";
  std::filesystem::create_directories(target / "inside");
  const auto r = gpurent::write_file_atomically(target.string(), "new\n", 0600);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("nothing was changed") != std::string::npos);
  CHECK(std::filesystem::is_directory(target / "inside"));
  CHECK_FALSE(std::filesystem::exists(target.string() + ".gpurent-tmp"));
  // A parent that does not exist: nothing is created.
  const auto nowhere = dir.path() / "missing" / "file";
  REQUIRE_FALSE(gpurent::write_file_atomically(nowhere.string(), "x", 0600));
  CHECK_FALSE(std::filesystem::exists(dir.path() / "missing"));
}
