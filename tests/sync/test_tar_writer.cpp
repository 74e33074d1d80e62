// SPDX-License-Identifier: MIT
// The tar writer (sync/tar_stream.hpp, libarchive): what it writes GNU tar reads back (long names
// and link targets, directories, symlinks, modes, times), and so does gpurent's own reader.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "fakes/tar_builder.hpp"
#include "sync/tar_stream.hpp"

using namespace gpurent;

namespace {

using gpurent::testing::tar_archive;

// A header's numeric field: octal digits, or GNU base-256 (high bit of the first byte set).
std::uint64_t field_number(std::string_view f)
{
  std::uint64_t v = 0;
  if ((static_cast<unsigned char>(f[0]) & 0x80) != 0) {
    for (std::size_t i = 1; i < f.size(); ++i) {
      v = (v << 8) | static_cast<unsigned char>(f[i]);
    }
    return v;
  }
  for (const char c : f) {
    if (c >= '0' && c <= '7') {
      v = v * 8 + static_cast<std::uint64_t>(c - '0');
    }
  }
  return v;
}

}  // namespace

TEST_CASE("tar_writer: GNU tar extracts what it writes, gpurent's reader reads it", "[sync][tar]")
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
  const std::string tar = tar_archive(members);
  CHECK(tar.size() % k_tar_record == 0);

  gpurent::testing::CollectFiles c;
  const auto reader = tar_engine().make_reader(c, 0);
  REQUIRE(reader->feed(tar.data(), tar.size()).has_value());
  REQUIRE(reader->flush().has_value());
  CHECK(reader->finished());
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
  const auto writer = tar_engine().make_writer();
  std::string h;
  REQUIRE(writer->begin_member(TarMember{"big", EntryKind::file, 10ULL << 30, -5, 0644, {}}, h).has_value());
  REQUIRE(h.size() == k_tar_block);
  CHECK((static_cast<unsigned char>(h[124]) & 0x80) != 0);
  CHECK(field_number(std::string_view(h).substr(124, 12)) == (10ULL << 30));
  CHECK(field_number(std::string_view(h).substr(136, 12)) == 0);
  CHECK(std::string_view(h).substr(257, 8) == std::string_view("ustar  \0", 8));

  const auto small_writer = tar_engine().make_writer();
  std::string small;
  REQUIRE(small_writer->begin_member(TarMember{"s", EntryKind::file, 12345, 7, 0644, {}}, small).has_value());
  CHECK((static_cast<unsigned char>(small[124]) & 0x80) == 0);
  CHECK(field_number(std::string_view(small).substr(124, 12)) == 12345);
  CHECK(field_number(std::string_view(small).substr(136, 12)) == 7);
}

TEST_CASE("tar_writer: data passes through in place, sizes are kept, the end is a whole record", "[sync][tar]")
{
  const auto writer = tar_engine().make_writer();
  std::string out;
  REQUIRE(writer->begin_member(TarMember{"f", EntryKind::file, 700, 0, 0644, {}}, out).has_value());
  CHECK(out.size() == k_tar_block);
  const std::string data(700, 'x');
  REQUIRE(writer->member_data(data.data(), 300).has_value());
  CHECK(out.size() == k_tar_block);  // the data stays in the caller's buffer
  CHECK_FALSE(writer->end_member(out).has_value());  // 400 bytes are still owed
  CHECK_FALSE(writer->member_data(data.data(), 401).has_value());
  REQUIRE(writer->member_data(data.data() + 300, 400).has_value());
  REQUIRE(writer->end_member(out).has_value());
  CHECK(out.size() == k_tar_block + (1024 - 700));  // the padding to a whole block
  REQUIRE(writer->finish(out).has_value());
  CHECK((out.size() + 700) % k_tar_record == 0);
  CHECK(out.size() + 700 == k_tar_record);
  CHECK_FALSE(writer->begin_member(TarMember{"g", EntryKind::file, 0, 0, 0644, {}}, out).has_value());  // finished
}
