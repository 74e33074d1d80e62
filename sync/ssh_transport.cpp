// SPDX-License-Identifier: MIT
// The SshSession port over libssh2 1.10: the ONLY file that includes libssh2. Bulk data goes
// through SFTP with 2 MiB reads (libssh2 keeps up to 8 MiB of 30,000-byte requests in flight
// and grows the window); listing and hashing are one exec each; exec channels are pumped
// non-blocking so stdout, stderr and stdin never deadlock each other.
#include <fcntl.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

#include "sync/base64.hpp"
#include "sync/backup_agent.hpp"
#include "sync/remote_listing.hpp"
#include "sync/tar_reader.hpp"
#include "sync/transport.hpp"

namespace gpurent {
namespace {

constexpr std::size_t k_read_chunk = 2 * 1024 * 1024;  // the libssh2 1.10 sweet spot (backup_baseline §4b)
constexpr unsigned k_exec_window = 16U * 1024U * 1024U;
constexpr long k_op_timeout_ms = 120'000;

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

std::string key_type_name(std::string_view blob)
{
  if (blob.size() < 4) {
    return "unknown";
  }
  const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(blob[0])} << 24) |
                          (std::uint32_t{static_cast<unsigned char>(blob[1])} << 16) |
                          (std::uint32_t{static_cast<unsigned char>(blob[2])} << 8) | std::uint32_t{static_cast<unsigned char>(blob[3])};
  return n <= blob.size() - 4 ? std::string(blob.substr(4, n)) : std::string("unknown");
}

int knownhost_key_type(int hostkey_type)
{
  switch (hostkey_type) {
  case LIBSSH2_HOSTKEY_TYPE_RSA: return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
  case LIBSSH2_HOSTKEY_TYPE_DSS: return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
  case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
  case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
  case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
  case LIBSSH2_HOSTKEY_TYPE_ED25519: return LIBSSH2_KNOWNHOST_KEY_ED25519;
  default: return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
  }
}

std::string host_spec(const SshTarget& t)
{
  return t.port == 22 ? t.host : "[" + t.host + "]:" + std::to_string(t.port);
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

class LibsshSession;

// Drives one exec channel non-blocking: feeds stdin, collects stdout and stderr.
class ExecChannel {
public:
  ExecChannel(LibsshSession& owner, LIBSSH2_CHANNEL* ch, std::string input)
      : m_owner(owner), m_channel(ch), m_input(std::move(input))
  {
  }
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;
  ~ExecChannel();
  // Runs to the end; stdout goes to `on_out` when given (an error from it aborts), else is kept.
  [[nodiscard]] Result<ExecResult> finish(const DataSink& on_out = {});
  // Writes all of stdin and EOF now (blocking), so the command starts working at once.
  [[nodiscard]] Result<void> send_input_now();
  // Reads stdout into `on_out` (stderr is kept) without writing stdin, until `done()` or the end
  // of the output; for a command that answers before it reads its input.
  [[nodiscard]] Result<void> read_until(const DataSink& on_out, const std::function<bool()>& done);
  // What finish() writes to stdin (then EOF); set after read_until().
  void set_input(std::string input) { m_input = std::move(input); }
  // The general form of finish(): input pulled from `in` (empty: none besides set_input's),
  // stderr to `on_err` when given, `stop` asked at least every 200 ms (see ExecStream::finish).
  [[nodiscard]] Result<ExecStreamEnd> pump(const DataSource& in, const DataSink& on_out, const DataSink& on_err,
                                           const std::function<bool()>& stop);

private:
  // One non-blocking read of stdout and stderr; `progressed` tells whether anything came.
  [[nodiscard]] Result<void> read_streams(const DataSink& on_out, std::vector<char>& buf, bool& progressed,
                                          const DataSink& on_err = {});
  // Ends the channel: close, wait for the server's close (briefly when `hurry`), exit status.
  void close_channel(bool hurry, ExecStreamEnd& end);

  LibsshSession& m_owner;
  LIBSSH2_CHANNEL* m_channel;
  std::string m_input;
  std::size_t m_written = 0;
  bool m_eof_sent = false;
  ExecResult m_result;
};

class LibsshHashJob final : public RemoteHashJob {
public:
  LibsshHashJob(std::unique_ptr<ExecChannel> ch, std::vector<std::string> rel_paths)
      : m_channel(std::move(ch)), m_rel_paths(std::move(rel_paths))
  {
  }
  Result<RemoteHashes> wait() override
  {
    TRY_ASSIGN(const auto r, m_channel->finish());
    m_channel.reset();
    TRY_ASSIGN(auto parsed, parse_hash_output(r.out, m_rel_paths));
    return RemoteHashes{std::move(parsed.tool), std::move(parsed.sums)};
  }

private:
  std::unique_ptr<ExecChannel> m_channel;
  std::vector<std::string> m_rel_paths;
};

// An exec channel the caller drives (push, job logs).
class LibsshExecStream final : public ExecStream {
public:
  explicit LibsshExecStream(std::unique_ptr<ExecChannel> ch) : m_channel(std::move(ch)) {}
  Result<void> read_until(const DataSink& on_out, const std::function<bool()>& done) override
  {
    if (!m_channel) {
      return fail(Errc::internal, "exec stream: already finished");
    }
    return m_channel->read_until(on_out, done);
  }
  Result<ExecStreamEnd> finish(const DataSource& in, const DataSink& on_out, const DataSink& on_err,
                               const std::function<bool()>& stop) override
  {
    if (!m_channel) {
      return fail(Errc::internal, "exec stream: already finished");
    }
    auto r = m_channel->pump(in, on_out, on_err, stop);
    m_channel.reset();
    return r;
  }

private:
  std::unique_ptr<ExecChannel> m_channel;
};

// The one-channel backup (sync/backup_agent.hpp) over an exec channel.
class LibsshBackupChannel final : public BackupChannel {
public:
  explicit LibsshBackupChannel(std::unique_ptr<ExecChannel> ch) : m_channel(std::move(ch)) {}

  // Reads the agent's greeting and listing; Errc::unsupported when the server lacks a tool.
  Result<void> start()
  {
    const auto read = m_channel->read_until([this](const char* p, std::size_t n) { return m_listing.feed(std::string_view(p, n)); },
                                            [this] { return m_listing.done(); });
    if (!read && read.error().code == Errc::invalid_input) {
      // Something else on stdout (a noisy .bashrc): the per-step commands may still work.
      return fail(Errc::unsupported, "backup agent: " + read.error().message);
    }
    TRY(read);
    if (!m_listing.done()) {
      // The shell printed something else or stopped: a server we cannot drive this way.
      return fail(Errc::unsupported, "backup agent: no listing from the server");
    }
    m_entries = m_listing.result();
    if (!m_entries && m_entries.error().code == Errc::unsupported) {
      return std::unexpected(m_entries.error());
    }
    return {};
  }

  Result<std::vector<RemoteEntry>> listing() override { return m_entries; }
  bool root_is_file() const override { return m_listing.root_is_file(); }

  Result<BulkCopyReport> copy(const std::vector<std::string>& rel_paths, FileStreamHandler& handler) override
  {
    std::string list;
    for (const auto& p : rel_paths) {
      list += p;
      list.push_back('\0');
    }
    m_channel->set_input(std::move(list));
    AgentCopyReader reader(handler);
    TRY(m_channel->finish([&](const char* p, std::size_t n) { return reader.feed(p, n); }));
    m_channel.reset();
    if (rel_paths.empty()) {
      return BulkCopyReport{};
    }
    return reader.finish(rel_paths);
  }

private:
  std::unique_ptr<ExecChannel> m_channel;
  AgentListingReader m_listing;
  Result<std::vector<RemoteEntry>> m_entries = std::vector<RemoteEntry>{};
};

class LibsshSession final : public SshSession {
public:
  LibsshSession(SshTarget t, int fd, LIBSSH2_SESSION* s) : m_target(std::move(t)), m_fd(fd), m_session(s) {}
  LibsshSession(const LibsshSession&) = delete;
  LibsshSession& operator=(const LibsshSession&) = delete;
  ~LibsshSession() override
  {
    if (m_sftp != nullptr) {
      libssh2_sftp_shutdown(m_sftp);
    }
    libssh2_session_disconnect(m_session, "gpurent done");
    libssh2_session_free(m_session);
    ::close(m_fd);
  }

  Result<void> handshake(const SshOptions& o);

  std::string host_key_fingerprint() const override { return m_fingerprint; }

  Result<ExecResult> exec(const std::string& command, std::string_view stdin_data) override
  {
    TRY_ASSIGN(auto ch, start_exec(command, std::string(stdin_data)));
    return ch->finish();
  }

  Result<std::vector<RemoteEntry>> list_tree(const std::string& root) override
  {
    TRY_ASSIGN(const auto r, exec(find_listing_command(root), {}));
    if (r.exit_status == 0 || (r.exit_status == 1 && !r.out.empty())) {
      auto parsed = parse_find_listing(r.out);
      if (parsed) {
        return parsed;
      }
    }
    if (r.err.find("No such file") != std::string::npos) {
      return fail(Errc::not_found, "remote path " + root + " does not exist on " + to_string(m_target) + "; check the path");
    }
    return list_tree_sftp(root);  // no GNU find: one SFTP walk
  }

  Result<RemoteEntry> stat(const std::string& path) override
  {
    TRY(ensure_sftp());
    const std::string p = sftp_path(path);
    LIBSSH2_SFTP_ATTRIBUTES a{};
    libssh2_session_set_blocking(m_session, 1);
    if (libssh2_sftp_stat_ex(m_sftp, p.c_str(), static_cast<unsigned>(p.size()), LIBSSH2_SFTP_LSTAT, &a) != 0) {
      return std::unexpected(sftp_error("stat " + path));
    }
    RemoteEntry e = from_attrs(a);
    e.path = path;
    return e;
  }

  Result<std::uint64_t> read_file(const std::string& path, std::uint64_t offset, const DataSink& sink) override
  {
    TRY(ensure_sftp());
    const std::string p = sftp_path(path);
    libssh2_session_set_blocking(m_session, 1);
    LIBSSH2_SFTP_HANDLE* h = libssh2_sftp_open_ex(m_sftp, p.c_str(), static_cast<unsigned>(p.size()), LIBSSH2_FXF_READ, 0,
                                                  LIBSSH2_SFTP_OPENFILE);
    if (h == nullptr) {
      return std::unexpected(sftp_error("open " + path));
    }
    libssh2_sftp_seek64(h, offset);
    std::vector<char> buf(k_read_chunk);
    std::uint64_t total = 0;
    Result<std::uint64_t> out = total;
    while (true) {
      const auto n = libssh2_sftp_read(h, buf.data(), buf.size());
      if (n == 0) {
        break;
      }
      if (n < 0) {
        out = std::unexpected(sftp_error("read " + path));
        break;
      }
      if (auto r = sink(buf.data(), static_cast<std::size_t>(n)); !r) {
        out = std::unexpected(r.error());
        break;
      }
      total += static_cast<std::uint64_t>(n);
    }
    libssh2_sftp_close_handle(h);
    if (out) {
      out = total;
    }
    return out;
  }

  Result<StreamReport> stream_files(const std::string& root, const std::vector<std::string>& rel_paths,
                                    FileStreamHandler& handler) override
  {
    std::string list;
    for (const auto& p : rel_paths) {
      list += p;
      list.push_back('\0');
    }
    TRY_ASSIGN(auto ch, start_exec("cd -- " + remote_shell_path(root) +
                                       " && exec tar -cf - --format=gnu --null --verbatim-files-from --no-recursion -T -",
                                   std::move(list)));
    TarReader reader(handler);
    TRY_ASSIGN(const auto r, ch->finish([&](const char* p, std::size_t n) { return reader.feed(p, n); }));
    if (reader.finished()) {
      // GNU tar exits 1 when a file changed, shrank or vanished while it was read ("file changed
      // as we read it"); the caller then lists the files again. The archive itself is complete.
      return StreamReport{r.exit_status != 0};
    }
    if (r.exit_status == 127 || r.err.find("unrecognized option") != std::string::npos ||
        r.err.find("invalid option") != std::string::npos) {
      return fail(Errc::unsupported, "no GNU tar on " + to_string(m_target));
    }
    return fail(Errc::unavailable, "tar stream from " + to_string(m_target) + " ended early (the connection or the remote tar stopped): " +
                                       r.err.substr(0, 200) + "; re-run the backup (it resumes)");
  }

  Result<std::unique_ptr<BackupChannel>> open_backup_channel(const std::string& root) override
  {
    TRY_ASSIGN(auto ch, start_exec(backup_agent_command(root), {}));
    auto channel = std::make_unique<LibsshBackupChannel>(std::move(ch));
    TRY(channel->start());
    return std::unique_ptr<BackupChannel>(std::move(channel));
  }

  Result<std::unique_ptr<RemoteHashJob>> start_sha256(const std::string& root, const std::vector<std::string>& rel_paths) override
  {
    std::string list;
    for (const auto& p : rel_paths) {
      list += p;
      list.push_back('\0');
    }
    TRY_ASSIGN(auto ch, start_exec(hash_command(root), std::move(list)));
    TRY(ch->send_input_now());
    return std::unique_ptr<RemoteHashJob>(std::make_unique<LibsshHashJob>(std::move(ch), rel_paths));
  }

  Result<std::unique_ptr<ExecStream>> open_exec(const std::string& command) override
  {
    TRY_ASSIGN(auto ch, start_exec(command, {}));
    return std::unique_ptr<ExecStream>(std::make_unique<LibsshExecStream>(std::move(ch)));
  }

  Result<int> run_interactive(const std::string& command, const InteractiveIo& io) override;

  // Used by ExecChannel.
  [[nodiscard]] LIBSSH2_SESSION* raw() const { return m_session; }
  [[nodiscard]] const SshTarget& target() const { return m_target; }
  void wait_socket(int extra_fd = -1, short extra_events = 0, bool* extra_ready = nullptr, int timeout_ms = 1000) const
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

private:
  Result<void> verify_host_key(const SshOptions& o);
  Result<void> authenticate(const SshOptions& o);

  Result<std::unique_ptr<ExecChannel>> start_exec(const std::string& command, std::string input)
  {
    libssh2_session_set_blocking(m_session, 1);
    LIBSSH2_CHANNEL* ch = libssh2_channel_open_ex(m_session, "session", 7, k_exec_window, LIBSSH2_CHANNEL_PACKET_DEFAULT, nullptr, 0);
    if (ch == nullptr) {
      return std::unexpected(session_error(m_session, to_string(m_target), "open a channel"));
    }
    if (libssh2_channel_process_startup(ch, "exec", 4, command.c_str(), static_cast<unsigned>(command.size())) != 0) {
      const Error e = session_error(m_session, to_string(m_target), "run a command");
      libssh2_channel_free(ch);
      return std::unexpected(e);
    }
    return std::make_unique<ExecChannel>(*this, ch, std::move(input));
  }

  Result<void> ensure_sftp()
  {
    if (m_sftp == nullptr) {
      libssh2_session_set_blocking(m_session, 1);
      m_sftp = libssh2_sftp_init(m_session);
      if (m_sftp == nullptr) {
        return std::unexpected(session_error(m_session, to_string(m_target), "start SFTP"));
      }
    }
    return {};
  }

  static std::string sftp_path(const std::string& path)
  {
    if (path.empty() || path == "~" || path == "~/") {
      return ".";
    }
    return path.starts_with("~/") ? path.substr(2) : path;
  }

  Error sftp_error(const std::string& what) const
  {
    if (m_sftp != nullptr && libssh2_session_last_errno(m_session) == LIBSSH2_ERROR_SFTP_PROTOCOL) {
      const auto code = libssh2_sftp_last_error(m_sftp);
      if (code == LIBSSH2_FX_NO_SUCH_FILE || code == LIBSSH2_FX_NO_SUCH_PATH) {
        return Error{Errc::not_found, what + " on " + to_string(m_target) + ": no such file; it was removed on the server"};
      }
      if (code == LIBSSH2_FX_PERMISSION_DENIED) {
        return Error{Errc::unauthorized, what + " on " + to_string(m_target) + ": permission denied; check the file's mode"};
      }
    }
    return session_error(m_session, to_string(m_target), what);
  }

  static RemoteEntry from_attrs(const LIBSSH2_SFTP_ATTRIBUTES& a)
  {
    RemoteEntry e;
    const unsigned long type = a.permissions & LIBSSH2_SFTP_S_IFMT;
    e.kind = type == LIBSSH2_SFTP_S_IFREG ? EntryKind::file
             : type == LIBSSH2_SFTP_S_IFDIR ? EntryKind::directory
             : type == LIBSSH2_SFTP_S_IFLNK ? EntryKind::symlink
                                            : EntryKind::other;
    e.size = a.filesize;
    e.mtime_ns = static_cast<std::int64_t>(a.mtime) * 1'000'000'000LL;
    e.mode = static_cast<std::uint32_t>(a.permissions & 07777);
    return e;
  }

  Result<std::vector<RemoteEntry>> list_tree_sftp(const std::string& root)
  {
    TRY(ensure_sftp());
    std::vector<RemoteEntry> out;
    std::vector<std::string> dirs{""};
    const std::string base = sftp_path(root);
    while (!dirs.empty()) {
      const std::string rel = dirs.back();
      dirs.pop_back();
      const std::string full = rel.empty() ? base : base + "/" + rel;
      LIBSSH2_SFTP_HANDLE* h = libssh2_sftp_open_ex(m_sftp, full.c_str(), static_cast<unsigned>(full.size()), 0, 0, LIBSSH2_SFTP_OPENDIR);
      if (h == nullptr) {
        if (rel.empty()) {
          return std::unexpected(sftp_error("list " + root));
        }
        continue;
      }
      std::vector<char> name(4096);
      while (true) {
        LIBSSH2_SFTP_ATTRIBUTES a{};
        const int n = libssh2_sftp_readdir_ex(h, name.data(), name.size(), nullptr, 0, &a);
        if (n <= 0) {
          break;
        }
        const std::string entry(name.data(), static_cast<std::size_t>(n));
        if (entry == "." || entry == "..") {
          continue;
        }
        RemoteEntry e = from_attrs(a);
        e.path = rel.empty() ? entry : rel + "/" + entry;
        if (e.kind == EntryKind::symlink) {
          const std::string lp = full + "/" + entry;
          const int m = libssh2_sftp_symlink_ex(m_sftp, lp.c_str(), static_cast<unsigned>(lp.size()), name.data(),
                                                static_cast<unsigned>(name.size()), LIBSSH2_SFTP_READLINK);
          e.link_target = m > 0 ? std::string(name.data(), static_cast<std::size_t>(m)) : std::string{};
        }
        if (e.kind == EntryKind::directory) {
          dirs.push_back(e.path);
        }
        out.push_back(std::move(e));
      }
      libssh2_sftp_close_handle(h);
    }
    return out;
  }

  SshTarget m_target;
  int m_fd;
  LIBSSH2_SESSION* m_session;
  LIBSSH2_SFTP* m_sftp = nullptr;
  std::string m_fingerprint;
};

ExecChannel::~ExecChannel()
{
  if (m_channel != nullptr) {
    libssh2_session_set_blocking(m_owner.raw(), 1);
    libssh2_channel_free(m_channel);
  }
}

Result<void> ExecChannel::send_input_now()
{
  LIBSSH2_SESSION* s = m_owner.raw();
  libssh2_session_set_blocking(s, 1);
  while (m_written < m_input.size()) {
    const auto n = libssh2_channel_write(m_channel, m_input.data() + m_written, m_input.size() - m_written);
    if (n < 0) {
      return std::unexpected(session_error(s, to_string(m_owner.target()), "send a command's input"));
    }
    m_written += static_cast<std::size_t>(n);
  }
  libssh2_channel_send_eof(m_channel);
  m_eof_sent = true;
  return {};
}

Result<void> ExecChannel::read_streams(const DataSink& on_out, std::vector<char>& buf, bool& progressed, const DataSink& on_err)
{
  for (int stream = 0; stream < 2; ++stream) {
    const auto n = libssh2_channel_read_ex(m_channel, stream, buf.data(), buf.size());
    if (n > 0) {
      if (stream == 0 && on_out) {
        TRY(on_out(buf.data(), static_cast<std::size_t>(n)));
      } else if (stream == 1 && on_err) {
        TRY(on_err(buf.data(), static_cast<std::size_t>(n)));
      } else {
        (stream == 0 ? m_result.out : m_result.err).append(buf.data(), static_cast<std::size_t>(n));
      }
      progressed = true;
    } else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
      return std::unexpected(session_error(m_owner.raw(), to_string(m_owner.target()), "read a command's output"));
    }
  }
  return {};
}

Result<void> ExecChannel::read_until(const DataSink& on_out, const std::function<bool()>& done)
{
  LIBSSH2_SESSION* s = m_owner.raw();
  libssh2_session_set_blocking(s, 0);
  std::vector<char> buf(256 * 1024);
  Result<void> out;
  while (!done()) {
    bool progressed = false;
    out = read_streams(on_out, buf, progressed);
    if (!out || (libssh2_channel_eof(m_channel) != 0 && !progressed)) {
      break;
    }
    if (!progressed) {
      m_owner.wait_socket();
    }
  }
  libssh2_session_set_blocking(s, 1);
  return out;
}

Result<ExecResult> ExecChannel::finish(const DataSink& on_out)
{
  TRY_ASSIGN(ExecStreamEnd end, pump({}, on_out, {}, {}));
  m_result.err = std::move(end.err);
  m_result.exit_status = end.exit_status;
  return std::move(m_result);
}

Result<ExecStreamEnd> ExecChannel::pump(const DataSource& in, const DataSink& on_out, const DataSink& on_err,
                                        const std::function<bool()>& stop)
{
  LIBSSH2_SESSION* s = m_owner.raw();
  libssh2_session_set_blocking(s, 0);
  std::vector<char> buf(256 * 1024);
  std::vector<char> pending;  // input pulled from `in`, not yet written
  std::size_t pending_pos = 0;
  bool in_done = !in;
  ExecStreamEnd end;
  const auto fail_with = [&](Error e) -> Result<ExecStreamEnd> {
    libssh2_session_set_blocking(s, 1);
    return std::unexpected(std::move(e));
  };
  // Writes what it can of data[pos..size); false on a real error. A command that stopped
  // reading ends the sending: its exit status and stderr say why.
  const auto write_some = [&](const char* data, std::size_t size, std::size_t& pos, bool& progressed) {
    const auto n = libssh2_channel_write(m_channel, data + pos, size - pos);
    if (n > 0) {
      pos += static_cast<std::size_t>(n);
      progressed = true;
    } else if (n == LIBSSH2_ERROR_CHANNEL_CLOSED || (n < 0 && n != LIBSSH2_ERROR_EAGAIN && libssh2_channel_eof(m_channel) != 0)) {
      m_eof_sent = true;
    } else if (n != LIBSSH2_ERROR_EAGAIN) {
      return false;
    }
    return true;
  };
  while (true) {
    bool progressed = false;
    if (!m_eof_sent) {
      // The string given at construction (or set_input) first, then the source.
      if (m_written < m_input.size()) {
        if (!write_some(m_input.data(), m_input.size(), m_written, progressed)) {
          return fail_with(session_error(s, to_string(m_owner.target()), "send a command's input"));
        }
      } else {
        if (pending_pos == pending.size() && !in_done) {
          pending.resize(buf.size());
          auto got = in(pending.data(), pending.size());
          if (!got) {
            return fail_with(got.error());
          }
          pending.resize(*got);
          pending_pos = 0;
          in_done = *got == 0;
          progressed = true;
        }
        if (pending_pos < pending.size() && !write_some(pending.data(), pending.size(), pending_pos, progressed)) {
          return fail_with(session_error(s, to_string(m_owner.target()), "send a command's input"));
        }
        if (!m_eof_sent && in_done && pending_pos == pending.size()) {
          const int rc = libssh2_channel_send_eof(m_channel);
          if (rc == 0) {
            m_eof_sent = true;
            progressed = true;
          } else if (rc != LIBSSH2_ERROR_EAGAIN) {
            m_eof_sent = true;  // the command may have exited already
          }
        }
      }
    }
    if (auto r = read_streams(on_out, buf, progressed, on_err); !r) {
      return fail_with(r.error());
    }
    if (libssh2_channel_eof(m_channel) != 0 && !progressed) {
      break;
    }
    if (stop && stop()) {
      end.stopped = true;
      break;
    }
    if (!progressed) {
      int next = 0;
      libssh2_keepalive_send(s, &next);
      m_owner.wait_socket(-1, 0, nullptr, 200);
    }
  }
  end.err = std::move(m_result.err);
  close_channel(end.stopped, end);
  return end;
}

void ExecChannel::close_channel(bool hurry, ExecStreamEnd& end)
{
  LIBSSH2_SESSION* s = m_owner.raw();
  libssh2_session_set_blocking(s, 1);
  if (hurry) {
    // sshd answers a close only once the command has exited, and the connection may be dead:
    // do not wait long for it (a later answer for the freed channel is dropped by libssh2).
    libssh2_session_set_timeout(s, 250);
  }
  libssh2_channel_close(m_channel);
  libssh2_channel_wait_closed(m_channel);
  end.exit_status = libssh2_channel_get_exit_status(m_channel);
  char* signal = nullptr;
  std::size_t signal_len = 0;
  libssh2_channel_get_exit_signal(m_channel, &signal, &signal_len, nullptr, nullptr, nullptr, nullptr);
  if (signal != nullptr) {
    end.exit_status = 255;
    libssh2_free(s, signal);
  }
  libssh2_channel_free(m_channel);
  m_channel = nullptr;
  if (hurry) {
    libssh2_session_set_timeout(s, k_op_timeout_ms);
  }
}

Result<void> LibsshSession::handshake(const SshOptions& o)
{
  libssh2_session_set_blocking(m_session, 1);
  libssh2_session_set_timeout(m_session, static_cast<long>(o.connect_timeout.count()) * 1000);
  if (libssh2_session_handshake(m_session, m_fd) != 0) {
    return std::unexpected(session_error(m_session, to_string(m_target), "SSH handshake"));
  }
  TRY(verify_host_key(o));
  TRY(authenticate(o));
  libssh2_session_set_timeout(m_session, k_op_timeout_ms);
  libssh2_keepalive_config(m_session, 1, static_cast<unsigned>(o.keepalive.count()));
  return {};
}

Result<void> LibsshSession::verify_host_key(const SshOptions& o)
{
  std::size_t len = 0;
  int type = 0;
  const char* key = libssh2_session_hostkey(m_session, &len, &type);
  if (key == nullptr) {
    return fail(Errc::refused, "ssh to " + to_string(m_target) + ": the server sent no host key; refusing to continue");
  }
  const std::string_view blob(key, len);
  m_fingerprint = ssh_fingerprint(blob);
  const std::string who = to_string(m_target);
  if (!o.expected_host_key.empty()) {
    if (o.expected_host_key == m_fingerprint) {
      return {};
    }
    return fail(Errc::refused, "host key of " + who + " CHANGED: recorded " + o.expected_host_key + ", server presents " +
                                   m_fingerprint + "; someone may be intercepting the connection, or the server was rebuilt: check with the provider before trusting it");
  }
  std::vector<std::filesystem::path> files;
  if (!o.known_hosts.empty()) {
    files.push_back(o.known_hosts);
  }
  files.insert(files.end(), o.extra_known_hosts.begin(), o.extra_known_hosts.end());
  const int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | knownhost_key_type(type);
  for (const auto& f : files) {
    LIBSSH2_KNOWNHOSTS* kh = libssh2_knownhost_init(m_session);
    if (kh == nullptr) {
      continue;
    }
    libssh2_knownhost_readfile(kh, f.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);  // a missing file knows no host
    libssh2_knownhost* found = nullptr;
    const int rc = libssh2_knownhost_checkp(kh, m_target.host.c_str(), m_target.port, key, len, mask, &found);
    std::string old_fp;
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH && found != nullptr && found->key != nullptr) {
      const auto old_blob = base64_decode(found->key);
      old_fp = old_blob ? ssh_fingerprint(*old_blob) : std::string("(unreadable)");
    }
    libssh2_knownhost_free(kh);
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
      return {};
    }
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) {
      return fail(Errc::refused, "host key of " + who + " CHANGED: " + f.string() + " has " + old_fp + ", server presents " +
                                     m_fingerprint + "; someone may be intercepting the connection, or the server was rebuilt: "
                                     "if you are sure, remove the old line from " + f.string());
    }
  }
  if (!o.accept_new_host_key) {
    return fail(Errc::refused, "host key of " + who + " is unknown (" + key_type_name(blob) + " " + m_fingerprint +
                                   "); verify it with the provider and re-run with --accept-new-host-key to trust it");
  }
  if (o.known_hosts.empty()) {
    return {};
  }
  std::error_code ec;
  std::filesystem::create_directories(o.known_hosts.parent_path(), ec);
  const std::string line = host_spec(m_target) + " " + key_type_name(blob) + " " + base64_encode(blob) + "\n";
  const int fd = ::open(o.known_hosts.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) {
      ::close(fd);
    }
    return fail(Errc::internal, "cannot record the host key in " + o.known_hosts.string() + ": " + why + "; check the state directory");
  }
  ::close(fd);
  return {};
}

Result<void> LibsshSession::authenticate(const SshOptions& o)
{
  const std::string& user = m_target.user;
  const auto user_len = static_cast<unsigned>(user.size());
  const char* methods = libssh2_userauth_list(m_session, user.c_str(), user_len);
  if (methods == nullptr && libssh2_userauth_authenticated(m_session) != 0) {
    return {};
  }
  if (methods != nullptr && std::strstr(methods, "publickey") == nullptr) {
    return fail(Errc::unauthorized, "ssh to " + to_string(m_target) + ": the server does not accept keys (only " + methods +
                                        "); enable public-key login on the server");
  }
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
          return {};
        }
      }
    }
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

}  // namespace

}  // namespace gpurent

extern "C" void gpurent_ssh_connect(const gpurent::SshTarget* target, const gpurent::SshOptions* options,
                                    gpurent::Result<std::unique_ptr<gpurent::SshSession>>* out)
{
  using namespace gpurent;
  init_library();
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
  auto session = std::make_unique<LibsshSession>(*target, *fd, s);
  if (auto r = session->handshake(*options); !r) {
    *out = std::unexpected(r.error());
    return;
  }
  *out = std::unique_ptr<SshSession>(std::move(session));
}
