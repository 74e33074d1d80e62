// SPDX-License-Identifier: MIT
#pragma once
// Small file helpers for tests: seeded random bytes, read a whole file, write one (creating its
// directories), and a FileStreamHandler that keeps every file it is handed.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "sync/transport.hpp"

namespace gpurent::testing {

// n bytes from a seeded generator: the same for the same seed.
inline std::string random_bytes(std::size_t n, unsigned seed)
{
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) {
    c = static_cast<char>(rng());
  }
  return s;
}

inline std::string slurp(const std::filesystem::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text)
{
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

struct CollectFiles final : FileStreamHandler {
  std::map<std::string, std::string> files;
  std::string current;
  Result<void> begin_file(const std::string& name, std::uint64_t) override
  {
    current = name;
    files[name];
    return {};
  }
  Result<void> file_data(const char* d, std::size_t n) override
  {
    files[current].append(d, n);
    return {};
  }
  Result<void> end_file() override { return {}; }
};

}  // namespace gpurent::testing
