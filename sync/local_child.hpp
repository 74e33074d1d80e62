// SPDX-License-Identifier: MIT
#pragma once
// A local program that runs beside gpurent with its stdin, stdout and stderr on pipes, driven by
// the caller (run_local_process, sync/local_process.hpp, runs one to its end instead). With it,
// these two are the only places gpurent starts a program on the user's machine; it runs OpenSSH's
// `ssh` for a backup's bytes (sync/openssh_bulk.hpp). The child is in a process group of its own
// (a Ctrl-C reaches gpurent, which then ends it), and it is always ended and reaped: a child still
// running when the object goes is sent SIGTERM, then SIGKILL after a second.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct LocalChildRequest {
  std::vector<std::string> argv;                             // argv[0] is looked up on PATH
  std::vector<std::pair<std::string, std::string>> set_env;  // set (or replaced) in the child's environment
  std::vector<std::string> unset_env;                        // removed from the child's environment
  std::filesystem::path cwd;                                 // empty: the current directory
  // A process group of its own (Ctrl-C reaches gpurent, which ends the child); false: gpurent's
  // group, so a Ctrl-C reaches both (a short `git` run).
  bool own_group = true;
  std::size_t err_kept = 64 * 1024;  // the first bytes of stderr kept; the rest is read and dropped
};

class LocalChild {
public:
  // Errc::not_found when the program is not on PATH; Errc::internal when it cannot be started.
  [[nodiscard]] static Result<std::unique_ptr<LocalChild>> start(const LocalChildRequest& request);
  LocalChild(const LocalChild&) = delete;
  LocalChild& operator=(const LocalChild&) = delete;
  ~LocalChild();

  // Writes `input` to stdin (then closes it when `close_input`), while stdout goes to `on_out`,
  // until `done()` (may be empty) answers true after some output or stdout ends. stderr is kept
  // meanwhile (its first 64 KiB). false in the result: stdout ended. An error from `on_out` ends
  // the call with that error. A child that stops reading its stdin ends the writing, not the call.
  // `tick` (may be empty) is called about once a second meanwhile.
  [[nodiscard]] Result<bool> pump(std::string_view input, bool close_input, const std::function<Result<void>(const char*, std::size_t)>& on_out,
                                  const std::function<bool()>& done, const std::function<void()>& tick = {});
  // Waits for the child to exit (closing stdin first) and returns its exit status (128 + N when
  // killed by signal N).
  [[nodiscard]] int wait();
  // Ends the child now (SIGTERM, then SIGKILL after `grace`) and reaps it; nothing when it was reaped.
  void kill(std::chrono::milliseconds grace = std::chrono::milliseconds(1000));
  [[nodiscard]] const std::string& err() const noexcept { return m_err; }
  [[nodiscard]] pid_t pid() const noexcept { return m_pid; }

private:
  LocalChild(pid_t pid, int in, int out, int err, std::size_t err_kept)
      : m_pid(pid), m_in(in), m_out(out), m_errfd(err), m_err_kept(err_kept)
  {
  }
  void close_fd(int& fd);
  void read_err();

  pid_t m_pid;
  int m_in;
  int m_out;
  int m_errfd;
  std::size_t m_err_kept;
  bool m_reaped = false;
  int m_status = -1;
  std::string m_err;
};

}  // namespace gpurent
