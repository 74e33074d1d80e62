// SPDX-License-Identifier: MIT
#include "sync/local_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace gpurent {
namespace {

constexpr int k_out_pipe_size = 1024 * 1024;  // fewer wake-ups for a stream of hundreds of MiB

int exit_status(int status)
{
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status);
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

std::string_view env_name(std::string_view entry)
{
  return entry.substr(0, entry.find('='));
}

}  // namespace

Result<std::unique_ptr<LocalChild>> LocalChild::start(const LocalChildRequest& req)
{
  if (req.argv.empty()) {
    return fail(Errc::internal, "LocalChild: no program");
  }
  // stdin is a socket, so that writing to a child that has exited is EPIPE (MSG_NOSIGNAL), never
  // a SIGPIPE; stdout and stderr are pipes.
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  const auto close_all = [&] {
    for (int* p : {in, out, err}) {
      for (int i = 0; i < 2; ++i) {
        if (p[i] >= 0) {
          ::close(p[i]);
        }
      }
    }
  };
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    return fail(Errc::internal, std::string("cannot create a pipe: ") + std::strerror(e));
  }
  ::shutdown(in[0], SHUT_WR);  // the child's end only reads
  (void)::fcntl(out[0], F_SETPIPE_SZ, k_out_pipe_size);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!req.cwd.empty()) {
    ::posix_spawn_file_actions_addchdir_np(&actions, req.cwd.c_str());
  }
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  sigset_t none;
  sigset_t defaults;
  ::sigemptyset(&none);
  ::sigemptyset(&defaults);
  for (const int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    ::sigaddset(&defaults, sig);
  }
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setpgroup(&attr, 0);  // its own group: a Ctrl-C at the terminal reaches gpurent only
  ::posix_spawnattr_setflags(&attr, static_cast<short>((req.own_group ? POSIX_SPAWN_SETPGROUP : 0) | POSIX_SPAWN_SETSIGMASK |
                                                       POSIX_SPAWN_SETSIGDEF));
  std::vector<char*> argv;
  for (const auto& a : req.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<std::string> set;
  for (const auto& [k, v] : req.set_env) {
    set.push_back(k + "=" + v);
  }
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const auto name = env_name(*e);
    const bool dropped = std::any_of(req.unset_env.begin(), req.unset_env.end(), [&](const std::string& n) { return n == name; }) ||
                         std::any_of(req.set_env.begin(), req.set_env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!dropped) {
      envp.push_back(*e);
    }
  }
  for (auto& s : set) {
    envp.push_back(s.data());
  }
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    if (rc == ENOENT) {
      return fail(Errc::not_found, req.argv[0] + " is not installed (not found on PATH)");
    }
    return fail(Errc::internal, "cannot start " + req.argv[0] + ": " + std::strerror(rc));
  }
  ::fcntl(err[0], F_SETFL, O_NONBLOCK);
  return std::unique_ptr<LocalChild>(new LocalChild(pid, in[1], out[0], err[0], req.err_kept));
}

LocalChild::~LocalChild()
{
  kill();
}

void LocalChild::close_fd(int& fd)
{
  if (fd >= 0) {
    ::close(fd);
  }
  fd = -1;
}

void LocalChild::read_err()
{
  std::array<char, 4096> buf{};
  while (m_errfd >= 0) {
    const auto n = ::read(m_errfd, buf.data(), buf.size());
    if (n > 0) {
      m_err.append(buf.data(), std::min(static_cast<std::size_t>(n), m_err_kept - std::min(m_err_kept, m_err.size())));
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n == 0 || errno != EAGAIN) {
      close_fd(m_errfd);
    }
    return;
  }
}

Result<bool> LocalChild::pump(std::string_view input, bool close_input, const std::function<Result<void>(const char*, std::size_t)>& on_out,
                              const std::function<bool()>& done, const std::function<void()>& tick)
{
  std::vector<char> buf(1024 * 1024);
  std::size_t fed = 0;
  auto next_tick = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    if (tick && std::chrono::steady_clock::now() >= next_tick) {
      tick();
      next_tick = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    if (fed == input.size() && close_input) {
      close_fd(m_in);
    }
    if (m_out < 0) {
      return false;
    }
    const bool writing = m_in >= 0 && fed < input.size();
    std::array<pollfd, 3> fds{{{m_out, POLLIN, 0}, {m_errfd, POLLIN, 0}, {writing ? m_in : -1, POLLOUT, 0}}};
    if (::poll(fds.data(), fds.size(), tick ? 1000 : -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      return fail(Errc::internal, std::string("poll: ") + std::strerror(errno));
    }
    if (writing && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      const auto n = ::send(m_in, input.data() + fed, input.size() - fed, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        fed += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        close_fd(m_in);  // the child stopped reading: its exit status and stderr say why
        fed = input.size();
      }
    }
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      read_err();
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const auto n = ::read(m_out, buf.data(), buf.size());
      if (n > 0) {
        TRY(on_out(buf.data(), static_cast<std::size_t>(n)));
        if (done && done()) {
          return true;
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(m_out);
      }
    }
  }
}

int LocalChild::wait()
{
  close_fd(m_in);
  close_fd(m_out);
  if (m_errfd >= 0) {
    ::fcntl(m_errfd, F_SETFL, 0);  // what it says as it exits
    read_err();
  }
  close_fd(m_errfd);
  if (!m_reaped) {
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_reaped = true;
    m_status = exit_status(status);
  }
  return m_status;
}

void LocalChild::kill(std::chrono::milliseconds grace)
{
  close_fd(m_in);
  close_fd(m_out);
  close_fd(m_errfd);
  if (m_reaped) {
    return;
  }
  int status = 0;
  ::kill(m_pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (true) {
    const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
    if (r == m_pid || (r < 0 && errno != EINTR)) {
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(m_pid, SIGKILL);
      while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  m_reaped = true;
  m_status = exit_status(status);
}

}  // namespace gpurent
