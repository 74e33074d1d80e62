// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>

#include "fakes/tar_builder.hpp"
#include "sync/tar_stream.hpp"

using namespace gpurent;
using gpurent::testing::make_tar;
using namespace std::string_literals;

namespace {
struct Collect final : FileStreamHandler {
  std::vector<std::pair<std::string, std::string>> files;
  std::uint64_t announced = 0;
  Result<void> begin_file(const std::string& name, std::uint64_t size) override
  {
    files.emplace_back(name, "");
    announced = size;
    return {};
  }
  Result<void> file_data(const char* d, std::size_t n) override
  {
    files.back().second.append(d, n);
    return {};
  }
  Result<void> end_file() override
  {
    CHECK(files.back().second.size() == announced);
    return {};
  }
};

std::vector<std::pair<std::string, std::string>> random_files(std::mt19937& rng)
{
  std::vector<std::pair<std::string, std::string>> files;
  const auto n = std::uniform_int_distribution<int>(0, 12)(rng);
  for (int i = 0; i < n; ++i) {
    std::string name = "d" + std::to_string(i) + "/";
    const auto len = std::uniform_int_distribution<int>(1, 180)(rng);
    for (int k = 0; k < len; ++k) {
      name.push_back(static_cast<char>(std::uniform_int_distribution<int>(1, 255)(rng)));
      if (name.back() == '/') {
        name.back() = 'x';
      }
    }
    std::string data(std::uniform_int_distribution<std::size_t>(0, 3000)(rng), '\0');
    for (auto& c : data) {
      c = static_cast<char>(rng());
    }
    files.emplace_back(name, data);
  }
  return files;
}
// Reads what `command` prints (a tar stream) into `c`: true when the archive ended properly.
bool read_command(Collect& c, const std::string& command)
{
  std::FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  const auto reader = tar_engine().make_reader(c, 0);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    REQUIRE(reader->feed(buf, n).has_value());
  }
  ::pclose(p);
  REQUIRE(reader->flush().has_value());
  return reader->finished();
}
}  // namespace

TEST_CASE("tar reader: property: any archive fed in any pieces yields the files", "[sync][tar]")
{
  std::mt19937 rng(21);
  for (int round = 0; round < 60; ++round) {
    const auto files = random_files(rng);
    const std::string tar = make_tar(files);
    Collect c;
    const auto reader = tar_engine().make_reader(c, 0);
    const std::size_t piece = std::uniform_int_distribution<std::size_t>(1, 2000)(rng);
    for (std::size_t i = 0; i < tar.size(); i += piece) {
      REQUIRE(reader->feed(tar.data() + i, std::min(piece, tar.size() - i)).has_value());
    }
    REQUIRE(reader->flush().has_value());
    CHECK(reader->finished());
    CHECK(c.files == files);
  }
}

TEST_CASE("tar reader: corruption and truncation are detected", "[sync][tar]")
{
  const std::string tar = make_tar({{"a", "hello"}, {"b", std::string(700, 'z')}});
  SECTION("a flipped header byte fails the checksum")
  {
    std::string bad = tar;
    bad[10] ^= 0x20;
    Collect c;
    const auto reader = tar_engine().make_reader(c, 0);
    REQUIRE(reader->feed(bad.data(), bad.size()).has_value());  // held: less than the 1 MiB batch
    const auto r = reader->flush();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.starts_with("tar stream: "));
    CHECK_FALSE(reader->feed(tar.data(), 10).has_value());  // and every later call says so too
    CHECK_FALSE(reader->flush().has_value());
    CHECK_FALSE(reader->finished());
  }
  SECTION("a flipped header byte of a later member fails too, after the members before it")
  {
    std::string bad = tar;
    bad[1024 + 10] ^= 0x20;
    Collect c;
    const auto reader = tar_engine().make_reader(c, 0);
    REQUIRE(reader->feed(bad.data(), bad.size()).has_value());
    CHECK_FALSE(reader->flush().has_value());
    REQUIRE(c.files.size() == 1);
    CHECK(c.files[0].second == "hello");
  }
  SECTION("a stream cut in the middle is not finished (and the reader stops cleanly)")
  {
    Collect c;
    const auto reader = tar_engine().make_reader(c, 0);
    REQUIRE(reader->feed(tar.data(), 700).has_value());
    REQUIRE(reader->flush().has_value());
    CHECK_FALSE(reader->finished());
  }
}

TEST_CASE("tar reader: what follows the archive is kept up to its limit", "[sync][tar]")
{
  const std::string tar = make_tar({{"a", "hello"}});
  const std::string trailer = "gpurent-sums\0" + std::string(100, 's');
  for (const std::size_t piece : {std::size_t{1}, std::size_t{511}, std::size_t{4096}, tar.size() + trailer.size()}) {
    Collect c;
    const auto reader = tar_engine().make_reader(c, 64);
    const std::string all = tar + trailer;
    for (std::size_t i = 0; i < all.size(); i += piece) {
      REQUIRE(reader->feed(all.data() + i, std::min(piece, all.size() - i)).has_value());
    }
    REQUIRE(reader->flush().has_value());
    CHECK(reader->finished());
    // tar's zeros after the two end blocks up to the record, then the trailer, cut at 64 bytes
    const std::string expected = (std::string(tar.size() - 3 * 512 - 512, '\0') + trailer).substr(0, 64);
    CHECK(reader->after_end() == expected);
    CHECK(reader->after_end_truncated());
  }
}

TEST_CASE("tar reader: the handler's error stops the stream and is returned", "[sync][tar]")
{
  struct Refuse final : FileStreamHandler {
    int begun = 0;
    Result<void> begin_file(const std::string& name, std::uint64_t) override
    {
      ++begun;
      if (name == "b") {
        return fail(Errc::internal, "disk full");
      }
      return {};
    }
    Result<void> file_data(const char*, std::size_t) override { return {}; }
    Result<void> end_file() override { return {}; }
  } refuse;
  const std::string tar = make_tar({{"a", "1"}, {"b", "2"}, {"c", "3"}});
  const auto reader = tar_engine().make_reader(refuse, 0);
  REQUIRE(reader->feed(tar.data(), tar.size()).has_value());
  const auto r = reader->flush();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "disk full");
  CHECK(refuse.begun == 2);
  CHECK_FALSE(reader->finished());
}

TEST_CASE("tar reader: a sparse member from GNU tar arrives whole, holes as zeros", "[sync][tar]")
{
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent-sparse.XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::filesystem::path dir = tmpl;
  {
    std::FILE* f = std::fopen((dir / "holey").c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite("head", 1, 4, f);
    std::fseek(f, 3 * 1024 * 1024, SEEK_SET);
    std::fwrite("tail", 1, 4, f);
    std::fclose(f);
  }
  Collect c;
  CHECK(read_command(c, "cd '" + dir.string() + "' && tar -cf - --format=gnu --sparse holey"));
  std::filesystem::remove_all(dir);
  REQUIRE(c.files.size() == 1);
  std::string expected = "head";
  expected.resize(3 * 1024 * 1024, '\0');
  expected += "tail";
  CHECK(c.files[0].second == expected);
}

TEST_CASE("tar reader: reads what GNU tar writes (long and odd names)", "[sync][tar]")
{
  std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent-tar.XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::filesystem::path dir = tmpl;
  std::string long_name(150, 'L');  // built in steps: GCC 12 warns falsely (-Warray-bounds) on the + chain
  long_name += '/';
  long_name.append(120, 'n');
  std::filesystem::create_directories(dir / std::string(150, 'L'));
  const std::vector<std::pair<std::string, std::string>> files = {
      {"plain.txt", "plain"}, {"new\nline", "nl"}, {long_name, std::string(5000, 'q')}, {"empty", ""}};
  for (const auto& [name, data] : files) {
    std::FILE* f = std::fopen((dir / name).c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }
  std::string list;
  for (const auto& [name, data] : files) {
    list += name + '\0';
  }
  std::FILE* lf = std::fopen((dir / "list").c_str(), "wb");
  std::fwrite(list.data(), 1, list.size(), lf);
  std::fclose(lf);
  const std::string cmd = "cd '" + dir.string() + "' && tar -cf - --format=gnu --null --verbatim-files-from --no-recursion -T list";
  Collect c;
  CHECK(read_command(c, cmd));
  std::filesystem::remove_all(dir);
  CHECK(c.files == files);
}

TEST_CASE("tar reader: property: archives larger than the 1 MiB batch, in pieces small and large, with a trailer", "[sync][tar]")
{
  std::mt19937 rng(77);
  for (int round = 0; round < 6; ++round) {
    std::vector<std::pair<std::string, std::string>> files;
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int i = 0; i < n; ++i) {
      std::string data(std::uniform_int_distribution<std::size_t>(0, 400'000)(rng), '\0');
      for (auto& ch : data) {
        ch = static_cast<char>(rng());
      }
      files.emplace_back("dir/f" + std::to_string(i) + std::string(static_cast<std::size_t>(i * 7 % 130), 'n'), data);
    }
    const std::string tar = make_tar(files);
    const std::string trailer = "gpurent-sums\0"s + std::to_string(round);
    const std::string all = tar + trailer;
    Collect c;
    const auto reader = tar_engine().make_reader(c, 1 << 16);
    for (std::size_t i = 0; i < all.size();) {
      const std::size_t piece = rng() % 4 == 0 ? std::uniform_int_distribution<std::size_t>(1 << 20, 3 << 20)(rng)
                                               : std::uniform_int_distribution<std::size_t>(1, 70'000)(rng);
      const std::size_t k = std::min(piece, all.size() - i);
      REQUIRE(reader->feed(all.data() + i, k).has_value());
      i += k;
    }
    REQUIRE(reader->flush().has_value());
    CHECK(reader->finished());
    CHECK(c.files == files);
    std::string_view rest = reader->after_end();
    while (!rest.empty() && rest.front() == '\0') {
      rest.remove_prefix(1);
    }
    CHECK(rest == trailer);
    CHECK_FALSE(reader->after_end_truncated());
  }
}
