// SPDX-License-Identifier: MIT
#pragma once
// Runs a script with the local /bin/sh (dash on Debian, so remote scripts are held to POSIX sh)
// the way sshd would run an exec request: stdin fed, stdout and stderr captured, in a chosen
// working directory and with chosen environment variables (e.g. HOME). For the tests of the
// remote scripts (push agent, job agent).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace gpurent::testing {

struct ShellRun {
  std::string out;
  std::string err;
  int status = -1;
};

inline ShellRun run_sh(const std::string& script, const std::string& input = {}, const std::filesystem::path& cwd = {},
                       const std::map<std::string, std::string>& env = {})
{
  int in[2];
  int out[2];
  int err[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) {
    return {};
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    return {};
  }
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
      ::close(fd);
    }
    for (const auto& [k, v] : env) {
      ::setenv(k.c_str(), v.c_str(), 1);
    }
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      ::_exit(126);
    }
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::signal(SIGPIPE, SIG_IGN);
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  ShellRun run;
  std::size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  bool out_open = true;
  bool err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd p[3] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    ::poll(p, 3, 1000);
    if (in_fd >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const auto n = ::write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) {
        written += static_cast<std::size_t>(n);
      }
      if (n < 0 || written == input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const auto n = ::read(i == 0 ? out[0] : err[0], buf, sizeof buf);
        if (n <= 0) {
          (i == 0 ? out_open : err_open) = false;
        } else {
          (i == 0 ? run.out : run.err).append(buf, static_cast<std::size_t>(n));
        }
      }
    }
  }
  if (in_fd >= 0) {
    ::close(in_fd);
  }
  ::close(out[0]);
  ::close(err[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return run;
}

}  // namespace gpurent::testing
