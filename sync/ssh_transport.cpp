// SPDX-License-Identifier: MIT
// The SshSession port over libssh2 1.10 (sync/ssh_detail.hpp; the sync/ssh_*.cpp files are the
// only ones that include libssh2): the connection, the SSH handshake, authentication, an
// interactive shell, and the factory libgpurent_io.so exports. Bulk data goes through SFTP with
// 2 MiB reads (ssh_sftp.cpp); listing and hashing are one exec each, and exec channels are
// pumped non-blocking so stdout, stderr and stdin never deadlock each other (ssh_exec.cpp).
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "sync/ssh_detail.hpp"

namespace gpurent::ssh_detail {
namespace {

void init_library()
{
  static std::once_flag once;
  std::call_once(once, [] { libssh2_init(0); });
}

std::string last_error(LIBSSH2_SESSION* s)
{
  char* msg = nullptr;
  int len = 0;
  libssh2_session_last_error(s, &msg, &len, 0);
  return msg != nullptr ? std::string(msg, static_cast<std::size_t>(len)) : std::string("unknown error");
}

// Opens a TCP connection with a deadline; the socket is blocking afterwards.
Result<int> connect_socket(const SshTarget& t, std::chrono::seconds timeout)
{
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(t.port);
  if (const int rc = getaddrinfo(t.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return fail(Errc::unavailable, "ssh to " + to_string(t) + ": cannot resolve the host (" + gai_strerror(rc) + "); check the name");
  }
  std::string why = "no address";
  Errc code = Errc::unavailable;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      continue;
    }
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, static_cast<int>(timeout.count() * 1000));
      if (rc == 0) {
        ::close(fd);
        why = "timed out after " + std::to_string(timeout.count()) + " s";
        code = Errc::timeout;
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      why = errno == ECONNREFUSED ? std::string("connection refused") : std::string(std::strerror(errno));
      ::close(fd);
      continue;
    }
    fcntl(fd, F_SETFL, flags);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    freeaddrinfo(res);
    return fd;
  }
  freeaddrinfo(res);
  return fail(code, "ssh to " + to_string(t) + ": " + why + "; check that the server is up and the port is right");
}

// libssh2's own read (its default callback: -errno on failure, ENOENT as EAGAIN), then the ACK
// for what was read sent at once (TCP_QUICKACK). sshd leaves Nagle's algorithm on for a session
// without a terminal, so a reply it sends in two segments holds the second until the first is
// acknowledged, and Linux delays that acknowledgement up to 40 ms: every request answered that
// way waited ~40 ms, on any link (a channel open took 45-49 ms on loopback; docs/benchmarks.md
// "Issue #43: the 40 ms acknowledgement"). TCP_QUICKACK is not sticky, so it is set after each read.
ssize_t recv_and_ack(libssh2_socket_t fd, void* buffer, std::size_t length, int flags, void** /*abstract*/)
{
  const ssize_t n = ::recv(fd, buffer, length, flags);
  if (n < 0) {
    return errno == ENOENT ? -EAGAIN : -errno;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  return n;
}

}  // namespace

Error session_error(LIBSSH2_SESSION* s, const std::string& target, const std::string& what)
{
  const int code = libssh2_session_last_errno(s);
  if (code == LIBSSH2_ERROR_TIMEOUT) {
    return Error{Errc::timeout, what + " on " + target + ": timed out; check the connection and re-run (a backup resumes)"};
  }
  if (code == LIBSSH2_ERROR_SOCKET_DISCONNECT || code == LIBSSH2_ERROR_SOCKET_RECV || code == LIBSSH2_ERROR_SOCKET_SEND ||
      code == LIBSSH2_ERROR_CHANNEL_CLOSED || code == LIBSSH2_ERROR_CHANNEL_EOF_SENT) {
    return Error{Errc::unavailable, what + " on " + target + ": the connection was lost (" + last_error(s) +
                                        "); re-run when the server answers (a backup resumes)"};
  }
  return Error{Errc::unavailable, what + " on " + target + ": " + last_error(s) + "; re-run, or check the server's SSH setup"};
}

LibsshSession::~LibsshSession()
{
  if (m_sftp != nullptr) {
    libssh2_sftp_shutdown(m_sftp);
  }
  libssh2_session_set_timeout(m_session, 1000);  // a dead link does not hold the end for long
  libssh2_session_set_blocking(m_session, 1);
  libssh2_session_disconnect(m_session, "gpurent done");
  // Nothing more is read: a channel still open (ExecStream::end_unwaited) is freed without
  // waiting a round trip for the server's close.
  ::shutdown(m_fd, SHUT_RDWR);
  libssh2_session_free(m_session);
  ::close(m_fd);
}

void LibsshSession::wait_socket(int extra_fd, short extra_events, bool* extra_ready, int timeout_ms) const
{
  pollfd p[2]{};
  p[0].fd = m_fd;
  const int dir = libssh2_session_block_directions(m_session);
  p[0].events = static_cast<short>(POLLIN | ((dir & LIBSSH2_SESSION_BLOCK_OUTBOUND) != 0 ? POLLOUT : 0));
  p[1].fd = extra_fd;
  p[1].events = extra_events;
  ::poll(p, extra_fd >= 0 ? 2 : 1, timeout_ms);
  if (extra_ready != nullptr) {
    *extra_ready = extra_fd >= 0 && (p[1].revents & (extra_events | POLLHUP | POLLERR)) != 0;
  }
}

Result<void> LibsshSession::handshake(const SshOptions& o, std::chrono::steady_clock::time_point started)
{
  libssh2_session_set_blocking(m_session, 1);
  libssh2_session_set_timeout(m_session, static_cast<long>(o.connect_timeout.count()) * 1000);
  if (libssh2_session_handshake(m_session, m_fd) != 0) {
    return std::unexpected(session_error(m_session, to_string(m_target), "SSH handshake"));
  }
  // The connection's cost before authentication (which may wait for a passphrase typed by hand).
  m_link.connect = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  TRY(verify_host_key(o));
  TRY(authenticate(o));
  libssh2_session_set_timeout(m_session, k_op_timeout_ms);
  libssh2_keepalive_config(m_session, 1, static_cast<unsigned>(o.keepalive.count()));
  m_openssh.target = m_target;
  m_openssh.agent_socket = o.use_agent ? o.agent_socket : std::string();
  m_openssh.connect_timeout = o.connect_timeout;
  m_openssh.keepalive = o.keepalive;
  m_openssh.prefer_aes_gcm = cpu_has_aes_gcm();
  m_openssh.identities.clear();
  for (const auto& key : o.identities) {
    std::error_code ec;
    if (std::filesystem::exists(key, ec)) {
      m_openssh.identities.push_back(key);
    }
  }
  m_bulk = o.bulk;
  m_note = o.note;
  return {};
}

Result<void> LibsshSession::authenticate(const SshOptions& o)
{
  const std::string& user = m_target.user;
  const auto user_len = static_cast<unsigned>(user.size());
  // The keys are offered at once: asking first which methods the server accepts (a "none"
  // request) cost every connection a round trip (issue #43), so that is asked only to explain
  // a failure, below.
  std::vector<std::string> tried;
  if (o.use_agent && !o.agent_socket.empty()) {
    LIBSSH2_AGENT* agent = libssh2_agent_init(m_session);
    if (agent != nullptr) {
      libssh2_agent_set_identity_path(agent, o.agent_socket.c_str());
      if (libssh2_agent_connect(agent) == 0 && libssh2_agent_list_identities(agent) == 0) {
        libssh2_agent_publickey* id = nullptr;
        libssh2_agent_publickey* prev = nullptr;
        while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
          if (libssh2_agent_userauth(agent, user.c_str(), id) == 0) {
            libssh2_agent_disconnect(agent);
            libssh2_agent_free(agent);
            return {};
          }
          prev = id;
        }
        tried.emplace_back("the SSH agent");
      }
      libssh2_agent_disconnect(agent);
      libssh2_agent_free(agent);
    }
  }
  for (const auto& key : o.identities) {
    std::error_code ec;
    if (!std::filesystem::exists(key, ec)) {
      continue;
    }
    tried.push_back(key.string());
    if (libssh2_userauth_publickey_fromfile_ex(m_session, user.c_str(), user_len, nullptr, key.c_str(), "") == 0) {
      return {};
    }
    const int err = libssh2_session_last_errno(m_session);
    if (err == LIBSSH2_ERROR_SOCKET_DISCONNECT || err == LIBSSH2_ERROR_SOCKET_RECV || err == LIBSSH2_ERROR_TIMEOUT) {
      return std::unexpected(session_error(m_session, to_string(m_target), "authentication"));
    }
    if (err == LIBSSH2_ERROR_FILE && o.passphrase) {  // probably encrypted: ask
      if (const auto pass = o.passphrase(key)) {
        if (libssh2_userauth_publickey_fromfile_ex(m_session, user.c_str(), user_len, nullptr, key.c_str(), pass->c_str()) == 0) {
          m_key_prompted = true;  // `ssh` in batch mode could not unlock it
          return {};
        }
      }
    }
  }
  const char* methods = libssh2_userauth_list(m_session, user.c_str(), user_len);
  if (methods == nullptr && libssh2_userauth_authenticated(m_session) != 0) {
    return {};  // a server that asks for no authentication
  }
  if (methods != nullptr && std::strstr(methods, "publickey") == nullptr) {
    return fail(Errc::unauthorized, "ssh to " + to_string(m_target) + ": the server does not accept keys (only " + methods +
                                        "); enable public-key login on the server");
  }
  bool tried_rsa = false;
  for (const auto& key : o.identities) {
    std::ifstream pub(key.string() + ".pub");
    std::string type;
    pub >> type;
    tried_rsa |= type == "ssh-rsa";
  }
  std::string list;
  for (const auto& t : tried) {
    list += (list.empty() ? "" : ", ") + t;
  }
  return fail(Errc::unauthorized, "ssh to " + to_string(m_target) + ": authentication failed" +
                                      (list.empty() ? std::string(" (no key found)") : " with " + list) +
                                      (tried_rsa ? " (this libssh2 signs RSA keys with SHA-1, which OpenSSH 8.8+ servers refuse unless PubkeyAcceptedAlgorithms has +ssh-rsa: prefer an ed25519 key)" : "") +
                                      "; pass the right key with --identity (an encrypted key needs GPURENT_SSH_PASSPHRASE or SSH_ASKPASS) and check the server's authorized_keys");
}

Result<int> LibsshSession::run_interactive(const std::string& command, const InteractiveIo& io)
{
  libssh2_session_set_blocking(m_session, 1);
  LIBSSH2_CHANNEL* ch = libssh2_channel_open_session(m_session);
  if (ch == nullptr) {
    return std::unexpected(session_error(m_session, to_string(m_target), "open a channel"));
  }
  std::pair<int, int> size{80, 24};
  if (io.pty) {
    if (io.window_size) {
      size = io.window_size();
    }
    if (libssh2_channel_request_pty_ex(ch, io.term.c_str(), static_cast<unsigned>(io.term.size()), nullptr, 0, size.first,
                                       size.second, 0, 0) != 0) {
      libssh2_channel_free(ch);
      return std::unexpected(session_error(m_session, to_string(m_target), "request a terminal"));
    }
  }
  const int rc = command.empty() ? libssh2_channel_shell(ch)
                                 : libssh2_channel_exec(ch, command.c_str());
  if (rc != 0) {
    libssh2_channel_free(ch);
    return std::unexpected(session_error(m_session, to_string(m_target), "start the shell"));
  }
  libssh2_session_set_blocking(m_session, 0);
  std::vector<char> buf(64 * 1024);
  std::string pending;
  bool in_open = io.in_fd >= 0;
  Result<int> result = 0;
  auto write_all = [](int fd, const char* p, std::size_t n) {
    while (n > 0) {
      const auto w = ::write(fd, p, n);
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w <= 0) {
        return;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  };
  while (true) {
    bool progressed = false;
    for (int stream = 0; stream < 2; ++stream) {
      const auto n = libssh2_channel_read_ex(ch, stream, buf.data(), buf.size());
      if (n > 0) {
        write_all(stream == 0 ? io.out_fd : io.err_fd, buf.data(), static_cast<std::size_t>(n));
        progressed = true;
      } else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
        result = std::unexpected(session_error(m_session, to_string(m_target), "read from the server"));
      }
    }
    if (!result || libssh2_channel_eof(ch) != 0) {
      break;
    }
    if (!pending.empty()) {
      const auto n = libssh2_channel_write(ch, pending.data(), pending.size());
      if (n > 0) {
        pending.erase(0, static_cast<std::size_t>(n));
        progressed = true;
      }
    }
    if (io.pty && io.window_size) {
      const auto now = io.window_size();
      if (now != size) {
        size = now;
        libssh2_channel_request_pty_size(ch, size.first, size.second);
      }
    }
    int seconds_to_next = 0;
    libssh2_keepalive_send(m_session, &seconds_to_next);
    if (!progressed) {
      bool in_ready = false;
      wait_socket(in_open && pending.empty() ? io.in_fd : -1, POLLIN, &in_ready, 200);
      if (in_ready) {
        const auto n = ::read(io.in_fd, buf.data(), buf.size());
        if (n > 0) {
          pending.append(buf.data(), static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          in_open = false;
          while (libssh2_channel_send_eof(ch) == LIBSSH2_ERROR_EAGAIN) {
            wait_socket();
          }
        }
      }
    }
  }
  libssh2_session_set_blocking(m_session, 1);
  libssh2_channel_close(ch);
  libssh2_channel_wait_closed(ch);
  if (result) {
    result = libssh2_channel_get_exit_status(ch);
  }
  libssh2_channel_free(ch);
  return result;
}

}  // namespace gpurent::ssh_detail

extern "C" void gpurent_ssh_connect(const gpurent::SshTarget* target, const gpurent::SshOptions* options,
                                    gpurent::Result<std::unique_ptr<gpurent::SshSession>>* out)
{
  using namespace gpurent;
  using namespace gpurent::ssh_detail;
  init_library();
  const auto started = std::chrono::steady_clock::now();
  auto fd = connect_socket(*target, options->connect_timeout);
  if (!fd) {
    *out = std::unexpected(fd.error());
    return;
  }
  LIBSSH2_SESSION* s = libssh2_session_init();
  if (s == nullptr) {
    ::close(*fd);
    *out = fail(Errc::internal, "cannot start an SSH session: out of memory");
    return;
  }
  libssh2_session_callback_set(s, LIBSSH2_CALLBACK_RECV, reinterpret_cast<void*>(&recv_and_ack));
  auto session = std::make_unique<LibsshSession>(*target, *fd, s);
  if (auto r = session->handshake(*options, started); !r) {
    *out = std::unexpected(r.error());
    return;
  }
  *out = std::unique_ptr<SshSession>(std::move(session));
}
