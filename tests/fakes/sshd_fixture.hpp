// SPDX-License-Identifier: MIT
#pragma once
// A real OpenSSH sshd on 127.0.0.1 for Catch2 tests, built on tests/e2e/sshd.sh (same keys,
// same config, same variables). Usage:
//   gpurent::testing::SshdFixture sshd;             // starts it (REQUIREs success)
//   sshd.target();                                  // SshTarget{user, "127.0.0.1", port}
//   sshd.options();                                 // SshOptions with the ed25519 key + known_hosts
//   sshd.var("SSHD_KEY_RSA");                       // any variable sshd.sh documents
//   sshd.kill_connections();                        // cut every open session (kill by PID)
// It is stopped (by PID) and its directory removed when the object goes out of scope.
// Needs GPURENT_SOURCE_DIR (set for every test executable) and /usr/sbin/sshd.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "sync/transport.hpp"

namespace gpurent::testing {

class SshdFixture {
public:
  // `remote_tmpdir`: the sessions' TMPDIR is remote_tmpdir() (what the server's mktemp leaves is seen there).
  explicit SshdFixture(const std::string& path_prefix = {}, bool remote_tmpdir = false)
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent-sshd.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("sshd fixture: mkdtemp failed");
    }
    m_dir = tmpl;
    const std::string script = (std::filesystem::path(GPURENT_SOURCE_DIR) / "tests" / "e2e" / "sshd.sh").string();
    // sshd -D is started in the background by the script and keeps running after bash exits.
    const std::string tmpdir = remote_tmpdir ? (m_dir / "remote-tmp").string() : std::string();
    const std::string cmd = "SSHD_PATH_PREFIX='" + path_prefix + "' SSHD_TMPDIR='" + tmpdir + "' bash -c 'source \"" + script + "\" && sshd_start \"" +
                            (m_dir / "sshd").string() + "\"' >/dev/null 2>&1 </dev/null";
    if (std::system(cmd.c_str()) != 0) {
      std::filesystem::remove_all(m_dir);
      throw std::runtime_error("sshd fixture: sshd did not start (see tests/e2e/sshd.sh)");
    }
    std::ifstream env(m_dir / "sshd" / "sshd.env");
    std::string line;
    while (std::getline(env, line)) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) {
        m_vars[line.substr(0, eq)] = line.substr(eq + 1);
      }
    }
    m_pid = static_cast<pid_t>(std::stol(var("SSHD_PID")));
  }
  ~SshdFixture()
  {
    kill_connections();
    ::kill(m_pid, SIGTERM);
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  SshdFixture(const SshdFixture&) = delete;
  SshdFixture& operator=(const SshdFixture&) = delete;

  [[nodiscard]] std::string var(const std::string& name) const { return m_vars.at(name); }
  [[nodiscard]] std::filesystem::path dir() const { return m_dir; }
  [[nodiscard]] std::filesystem::path remote_tmpdir() const { return m_dir / "remote-tmp"; }
  [[nodiscard]] SshTarget target() const
  {
    return SshTarget{var("SSHD_USER"), "127.0.0.1", static_cast<std::uint16_t>(std::stoi(var("SSHD_PORT")))};
  }
  [[nodiscard]] SshOptions options(const std::string& key_var = "SSHD_KEY") const
  {
    SshOptions o;
    o.identities = {var(key_var)};
    o.use_agent = false;
    o.known_hosts = var("SSHD_KNOWN_HOSTS");
    o.connect_timeout = std::chrono::seconds(10);
    return o;
  }
  // A libssh2 session to it with options() (the IO module's factory).
  [[nodiscard]] Result<std::unique_ptr<SshSession>> connect() const
  {
    Result<std::unique_ptr<SshSession>> out = std::unexpected(Error{});
    const auto t = target();
    const auto o = options();
    gpurent_ssh_connect(&t, &o, &out);
    return out;
  }
  // Kills the per-connection sshd processes (children of the listener), by PID.
  void kill_connections() const
  {
    const std::string cmd = "for c in $(pgrep -P " + std::to_string(m_pid) + "); do kill -9 $c; done 2>/dev/null";
    [[maybe_unused]] const int rc = std::system(cmd.c_str());
  }

private:
  std::filesystem::path m_dir;
  std::map<std::string, std::string> m_vars;
  pid_t m_pid = 0;
};

}  // namespace gpurent::testing
