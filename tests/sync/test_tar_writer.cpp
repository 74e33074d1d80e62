// SPDX-License-Identifier: MIT
// The tar writer (sync/tar_writer.hpp): what it writes GNU tar reads back (long names and
// link targets, directories, symlinks, modes, times), and so does gpurent's own TarReader.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/tar_reader.hpp"
#include "sync/tar_writer.hpp"

using namespace gpurent;

namespace {

std::string archive(const std::vector<std::pair<TarMember, std::string>>& members)
{
  std::string out;
  for (const auto& [m, data] : members) {
    out += tar_header(m);
    out += data;
    out.append(tar_padding(data.size()), '\0');
  }
  out += tar_trailer(out.size());
  return out;
}

}  // namespace

TEST_CASE("tar_writer: GNU tar extracts what it writes; TarReader reads it", "[sync][tar]")
{
  const std::string long_dir(120, 'd');
  const std::string long_name = long_dir + "/" + std::string(150, 'f') + ".txt";
  const std::string long_target = std::string(130, 't');
  const std::vector<std::pair<TarMember, std::string>> members = {
      {TarMember{"dir", EntryKind::directory, 0, 1'600'000'000, 0750, {}}, ""},
      {TarMember{"dir/a.txt", EntryKind::file, 5, 1'600'000'123, 0640, {}}, "hello"},
      {TarMember{"dir/empty", EntryKind::file, 0, 1'600'000'000, 0600, {}}, ""},
      {TarMember{"dir/exec", EntryKind::file, 3, 1'600'000'000, 0755, {}}, "#!x"},
      {TarMember{long_name, EntryKind::file, 4, 1'600'000'000, 0644, {}}, "long"},
      {TarMember{"odd\nname \xC3\xBC", EntryKind::file, 1, 1'600'000'000, 0644, {}}, "o"},
      {TarMember{"link", EntryKind::symlink, 0, 1'600'000'000, 0777, "dir/a.txt"}, ""},
      {TarMember{"longlink", EntryKind::symlink, 0, 1'600'000'000, 0777, long_target}, ""},
  };
  const std::string tar = archive(members);
  CHECK(tar.size() % k_tar_record == 0);

  gpurent::testing::CollectFiles c;
  TarReader reader(c);
  REQUIRE(reader.feed(tar.data(), tar.size()).has_value());
  CHECK(reader.finished());
  CHECK(c.files.at("dir/a.txt") == "hello");
  CHECK(c.files.at(long_name) == "long");
  CHECK(c.files.at("odd\nname \xC3\xBC") == "o");

  const auto dir = std::filesystem::temp_directory_path() / ("gpurent-tarw-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto r = gpurent::testing::run_sh("tar -xf - --no-same-owner", tar, dir);
  INFO(r.err);
  REQUIRE(r.status == 0);
  struct stat st {};
  REQUIRE(::stat((dir / "dir/a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(st.st_mtim.tv_sec == 1'600'000'123);
  REQUIRE(::stat((dir / "dir/exec").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  REQUIRE(::stat((dir / "dir").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(std::filesystem::file_size(dir / "dir/empty") == 0);
  CHECK(gpurent::testing::slurp(dir / long_name) == "long");
  CHECK(std::filesystem::read_symlink(dir / "link") == "dir/a.txt");
  CHECK(std::filesystem::read_symlink(dir / "longlink") == long_target);
  CHECK(std::filesystem::exists(dir / "odd\nname \xC3\xBC"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("tar_writer: sizes of 8 GiB and more in base-256, negative times as 0", "[sync][tar]")
{
  const std::string h = tar_header(TarMember{"big", EntryKind::file, 10ULL << 30, -5, 0644, {}});
  REQUIRE(h.size() == k_tar_block);
  CHECK(parse_tar_number(std::string_view(h).substr(124, 12)) == (10ULL << 30));
  CHECK((static_cast<unsigned char>(h[124]) & 0x80) != 0);
  CHECK(parse_tar_number(std::string_view(h).substr(136, 12)) == 0);
  const std::string small = tar_header(TarMember{"s", EntryKind::file, 12345, 7, 0644, {}});
  CHECK(parse_tar_number(std::string_view(small).substr(124, 12)) == 12345);
  CHECK(tar_trailer(0).size() == k_tar_record);
  CHECK(tar_trailer(512).size() == k_tar_record - 512);
  CHECK(tar_trailer(k_tar_record - 1024).size() == 1024);
}
