// SPDX-License-Identifier: MIT
#pragma once
// A directory under the system temp dir, unique per process and instance, removed at the end.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace gpurent::test {

class TempDir {
public:
  explicit TempDir(const std::string& prefix = "gpurent-test")
  {
    static int n = 0;
    m_path = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }
  // Writes `text` to path()/name (creating its directory) and returns that path.
  std::filesystem::path write(const std::string& name, const std::string& text) const
  {
    const auto file = m_path / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

private:
  std::filesystem::path m_path;
};

}  // namespace gpurent::test
