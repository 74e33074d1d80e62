// SPDX-License-Identifier: MIT
#pragma once
// A temporary directory, and tests/e2e/hf_double.py (the Hugging Face Hub test double with its
// CDN) started on 127.0.0.1 for one test and stopped at its end.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

namespace gpurent::test {

class TempDir {
public:
  TempDir()
  {
    std::random_device rd;
    m_path = std::filesystem::temp_directory_path() /
             ("gpurent-hf-test-" + std::to_string(rd()) + std::to_string(::getpid()));
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

private:
  std::filesystem::path m_path;
};

class HubDouble {
public:
  // `files`: a directory of <org>/<name>/ repositories to serve (empty: the built-in acme/* ones only).
  explicit HubDouble(const std::filesystem::path& dir, const std::filesystem::path& files = {}) : m_dir(dir)
  {
    const auto port_file = dir / "port";
    const auto pid_file = dir / "pid";
    std::string cmd = std::string("python3 '") + GPURENT_SOURCE_DIR + "/tests/e2e/hf_double.py' --port-file '" +
                      port_file.string() + "' --log '" + (dir / "requests.log").string() + "' --idle 60";
    if (!files.empty()) {
      cmd += " --files '" + files.string() + "'";
    }
    cmd += " >/dev/null 2>&1 & echo $! > '" + pid_file.string() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    for (int i = 0; i < 500 && !std::filesystem::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream(pid_file) >> m_pid;
    REQUIRE(std::filesystem::exists(port_file));
    std::ifstream(port_file) >> m_port;
    REQUIRE(m_port > 0);
  }
  ~HubDouble()
  {
    if (m_pid > 0) {
      ::kill(static_cast<pid_t>(m_pid), SIGTERM);
    }
  }
  HubDouble(const HubDouble&) = delete;
  HubDouble& operator=(const HubDouble&) = delete;
  [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] std::string log() const
  {
    std::ifstream in(m_dir / "requests.log");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

private:
  std::filesystem::path m_dir;
  long m_pid = 0;
  int m_port = 0;
};

}  // namespace gpurent::test
