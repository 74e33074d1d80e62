// SPDX-License-Identifier: MIT
#include "sync/local_process.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

extern char** environ;

namespace gpurent {
namespace {

class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset()
  {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = -1;
  }
  [[nodiscard]] int get() const noexcept { return m_fd; }
  int& ref() noexcept { return m_fd; }

private:
  int m_fd = -1;
};

struct Pipe {
  Fd read;
  Fd write;
  bool open()
  {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return false;
    }
    read.ref() = fds[0];
    write.ref() = fds[1];
    return true;
  }
};

bool unset(const std::vector<std::string>& names, const char* entry)
{
  const std::string_view e(entry);
  const auto eq = e.find('=');
  const auto name = e.substr(0, eq);
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n == name; });
}

int exit_status(int status)
{
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace

Result<LocalProcessResult> run_local_process(const LocalProcessRequest& req)
{
  if (req.argv.empty()) {
    return fail(Errc::internal, "run_local_process: no program");
  }
  Pipe in;
  Pipe out;
  Pipe err;
  if (!in.open() || !out.open() || !err.open()) {
    return fail(Errc::internal, std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in.read.get(), STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, out.write.get(), STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, err.write.get(), STDERR_FILENO);
  if (!req.cwd.empty()) {
    ::posix_spawn_file_actions_addchdir_np(&actions, req.cwd.c_str());
  }
  std::vector<char*> argv;
  for (const auto& a : req.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!unset(req.unset_env, *e)) {
      envp.push_back(*e);
    }
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    if (rc == ENOENT) {
      return fail(Errc::not_found, req.argv[0] + " is not installed (not found on PATH)");
    }
    return fail(Errc::internal, "cannot start " + req.argv[0] + ": " + std::strerror(rc));
  }
  in.read.reset();
  out.write.reset();
  err.write.reset();
  ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK);

  // A child that stops reading its stdin must not kill gpurent with SIGPIPE: the signal is
  // blocked while feeding, and one raised by this thread is taken back before unblocking.
  sigset_t pipe_set;
  sigset_t old_set;
  ::sigemptyset(&pipe_set);
  ::sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  bool broken_pipe = false;

  LocalProcessResult result;
  std::size_t fed = 0;
  if (req.input.empty()) {
    in.write.reset();
  }
  bool too_much = false;
  std::array<char, 65536> buf{};
  while (out.read.get() >= 0 || err.read.get() >= 0) {
    std::array<pollfd, 3> fds{{{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}, {in.write.get(), POLLOUT, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    if (in.write.get() >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const auto n = ::write(in.write.get(), req.input.data() + fed, req.input.size() - fed);
      if (n > 0) {
        fed += static_cast<std::size_t>(n);
      }
      broken_pipe = broken_pipe || (n < 0 && errno == EPIPE);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || fed == req.input.size()) {
        in.write.reset();  // done, or the child stopped reading (EPIPE)
      }
    }
    for (int i = 0; i < 2; ++i) {
      Fd& fd = i == 0 ? out.read : err.read;
      if (fd.get() < 0 || (fds[static_cast<std::size_t>(i)].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
        continue;
      }
      const auto n = ::read(fd.get(), buf.data(), buf.size());
      if (n > 0) {
        std::string& into = i == 0 ? result.out : result.err;
        if (i == 1 && into.size() > (1U << 20)) {
          continue;  // a runaway stderr is cut, not kept
        }
        into.append(buf.data(), static_cast<std::size_t>(n));
        if (i == 0 && into.size() > req.max_output) {
          too_much = true;
          ::kill(pid, SIGKILL);
          out.read.reset();
          err.read.reset();
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fd.reset();
      }
    }
  }
  in.write.reset();
  if (broken_pipe && ::sigismember(&old_set, SIGPIPE) == 0) {
    const timespec now{};
    (void)::sigtimedwait(&pipe_set, nullptr, &now);
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (too_much) {
    return fail(Errc::internal, req.argv[0] + " printed more than " + std::to_string(req.max_output) + " bytes");
  }
  result.status = exit_status(status);
  return result;
}

}  // namespace gpurent
