// SPDX-License-Identifier: MIT
// Exec channels of the libssh2 session (sync/ssh_detail.hpp): a command pumped non-blocking so
// that stdout, stderr and stdin never deadlock each other, and what the port builds on it (a
// remote tar stream, remote hashing, the one-channel backup agent, a stream the caller drives).
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sync/backup_agent.hpp"
#include "sync/remote_listing.hpp"
#include "sync/ssh_detail.hpp"
#include "sync/tar_stream.hpp"

namespace gpurent::ssh_detail {
namespace {

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
  void end_unwaited() override
  {
    if (m_channel) {
      m_channel->end_unwaited();
      m_channel.reset();
    }
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
    m_channel->set_input(agent_path_list(rel_paths));
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

// Lists over libssh2 (one channel, one round trip: a no-change run or a small copy costs what it
// did), then, when the copy is large on a short link (openssh_pays), closes that channel and
// copies through OpenSSH's ssh, which runs the same agent (its listing read and dropped: the
// plan is the first one's, and tar and the hashes still catch a file that changed in between).
// ssh was started beside the listing where it may be used (`early`, LibsshSession::open_backup_channel):
// its connection and login overlap the listing instead of following it. Where ssh cannot, the
// libssh2 channel, still waiting for the paths, copies.
class BulkBackupChannel final : public BackupChannel {
public:
  BulkBackupChannel(LibsshSession& session, std::unique_ptr<BackupChannel> listed, std::string root,
                    std::unique_ptr<StartedOpenSshBackup> early)
      : m_session(session), m_listed(std::move(listed)), m_root(std::move(root)), m_early(std::move(early))
  {
  }
  Result<std::vector<RemoteEntry>> listing() override { return m_listed->listing(); }
  bool root_is_file() const override { return m_listed->root_is_file(); }
  Result<BulkCopyReport> copy(const std::vector<std::string>& rel_paths, FileStreamHandler& handler) override
  {
    auto early = std::move(m_early);
    if (!rel_paths.empty()) {
      std::uint64_t bytes = 0;
      if (const auto entries = m_listed->listing()) {
        std::map<std::string_view, std::uint64_t> sizes;
        for (const auto& e : *entries) {
          sizes[e.path] = e.size;
        }
        for (const auto& p : rel_paths) {
          const auto it = sizes.find(p);
          bytes += it == sizes.end() ? 0 : it->second;
        }
      }
      TRY_ASSIGN(auto bulk, m_session.open_openssh_backup(m_root, bytes, std::move(early)));
      if (bulk) {
        NoFiles none;
        TRY(m_listed->copy({}, none));  // the libssh2 agent exits on an empty list
        m_listed.reset();
        return bulk->copy(rel_paths, handler);
      }
    }
    early.reset();  // not used: ssh is ended before libssh2 copies
    return m_listed->copy(rel_paths, handler);
  }

private:
  struct NoFiles final : FileStreamHandler {
    Result<void> begin_file(const std::string&, std::uint64_t) override { return {}; }
    Result<void> file_data(const char*, std::size_t) override { return {}; }
    Result<void> end_file() override { return {}; }
  };
  LibsshSession& m_session;
  std::unique_ptr<BackupChannel> m_listed;
  std::string m_root;
  std::unique_ptr<StartedOpenSshBackup> m_early;  // null: not started beside the listing, or dropped
};

// The bytes of regular files in a listing: the most a copy from it can carry.
std::uint64_t listed_file_bytes(const Result<std::vector<RemoteEntry>>& entries)
{
  std::uint64_t bytes = 0;
  if (entries) {
    for (const auto& e : *entries) {
      bytes += e.kind == EntryKind::file ? e.size : 0;
    }
  }
  return bytes;
}

}  // namespace

ExecChannel::ExecChannel(LibsshSession& owner, LIBSSH2_CHANNEL* ch, std::string input, std::size_t capture_limit)
    : m_owner(owner), m_channel(ch), m_input(std::move(input)), m_out("stdout", to_string(owner.target()), capture_limit),
      m_err("stderr", to_string(owner.target()), capture_limit)
{
}

ExecChannel::~ExecChannel()
{
  if (m_channel != nullptr) {
    // Abandoned mid-way (an error): the command may still be printing, and sshd answers a close
    // only once it has exited, so the close is not waited for long.
    LIBSSH2_SESSION* s = m_owner.raw();
    libssh2_session_set_blocking(s, 1);
    libssh2_session_set_timeout(s, 250);
    libssh2_channel_free(m_channel);
    libssh2_session_set_timeout(s, k_op_timeout_ms);
  }
}

void ExecChannel::end_unwaited()
{
  if (m_channel == nullptr) {
    return;
  }
  libssh2_session_set_blocking(m_owner.raw(), 1);
  if (!m_eof_sent) {
    (void)libssh2_channel_send_eof(m_channel);
    m_eof_sent = true;
  }
  m_channel = nullptr;  // libssh2_session_free frees every channel the session still has
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
        TRY((stream == 0 ? m_out : m_err).append(std::string_view(buf.data(), static_cast<std::size_t>(n))));
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
  return ExecResult{m_out.take(), std::move(end.err), end.exit_status};
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
      ExecStreamEnd ignored;
      close_channel(true, ignored);  // the command may print on: do not wait for it
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
  end.err = m_err.take();
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

Result<std::unique_ptr<ExecChannel>> LibsshSession::start_exec(const std::string& command, std::string input, std::uint32_t window,
                                                                std::size_t capture_limit)
{
  libssh2_session_set_blocking(m_session, 1);
  const auto asked = std::chrono::steady_clock::now();
  LIBSSH2_CHANNEL* ch =
      libssh2_channel_open_ex(m_session, "session", 7, window == 0 ? k_exec_window : window, LIBSSH2_CHANNEL_PACKET_DEFAULT, nullptr, 0);
  if (ch == nullptr) {
    return std::unexpected(session_error(m_session, to_string(m_target), "open a channel"));
  }
  // Opening a channel is one round trip (the server answers at once): the fastest seen is the link's.
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - asked);
  if (!m_link.round_trip || took < *m_link.round_trip) {
    m_link.round_trip = took;
  }
  if (libssh2_channel_process_startup(ch, "exec", 4, command.c_str(), static_cast<unsigned>(command.size())) != 0) {
    const Error e = session_error(m_session, to_string(m_target), "run a command");
    libssh2_channel_free(ch);
    return std::unexpected(e);
  }
  return std::make_unique<ExecChannel>(*this, ch, std::move(input), capture_limit);
}

Result<ExecResult> LibsshSession::exec(const std::string& command, std::string_view stdin_data)
{
  return exec_with_limit(command, stdin_data, k_captured_output_limit);
}

Result<ExecResult> LibsshSession::exec_with_limit(const std::string& command, std::string_view stdin_data, std::size_t capture_limit)
{
  TRY_ASSIGN(auto ch, start_exec(command, std::string(stdin_data), 0, capture_limit));
  return ch->finish();
}

Result<StreamReport> LibsshSession::stream_files(const std::string& root, const std::vector<std::string>& rel_paths,
                                                 FileStreamHandler& handler)
{
  std::string list;
  for (const auto& p : rel_paths) {
    list += p;
    list.push_back('\0');
  }
  TRY_ASSIGN(auto ch, start_exec("cd -- " + remote_shell_path(root) +
                                     " && exec tar -cf - --format=gnu --null --verbatim-files-from --no-recursion -T -",
                                 std::move(list)));
  const auto reader = tar_engine().make_reader(handler, 0);
  TRY_ASSIGN(const auto r, ch->finish([&](const char* p, std::size_t n) { return reader->feed(p, n); }));
  TRY(reader->flush());
  if (reader->finished()) {
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

bool LibsshSession::openssh_may_carry() const
{
  if (m_bulk == BulkPath::libssh2 || m_key_prompted) {
    return false;
  }
  return m_bulk == BulkPath::openssh || (m_link.round_trip && *m_link.round_trip <= k_openssh_max_round_trip);
}

std::unique_ptr<StartedOpenSshBackup> LibsshSession::start_openssh_backup(const std::string& root)
{
  return start_openssh_backup_channel(m_openssh, root, [this] {
    int next = 0;
    libssh2_keepalive_send(m_session, &next);  // this session waits meanwhile: keep it alive
  });
}

Result<std::unique_ptr<BackupChannel>> LibsshSession::open_openssh_backup(const std::string& root, std::uint64_t bytes,
                                                                          std::unique_ptr<StartedOpenSshBackup> early)
{
  const std::string who = to_string(m_target);
  if (m_bulk == BulkPath::libssh2) {
    return std::unique_ptr<BackupChannel>();
  }
  if (m_bulk == BulkPath::automatic) {
    if (!openssh_pays(bytes, m_link.round_trip)) {
      note("the backup's " + std::to_string(bytes >> 20) + " MiB go through libssh2 (round trip " +
           (m_link.round_trip ? std::to_string(m_link.round_trip->count() / 1000) + " ms" : std::string("unknown")) +
           "; OpenSSH's ssh carries " + std::to_string(k_openssh_min_bytes >> 20) + " MiB and more within " +
           std::to_string(k_openssh_max_round_trip.count() / 1000) + " ms)");
      return std::unique_ptr<BackupChannel>();
    }
  }
  if (m_key_prompted) {
    note("the backup's bytes go through libssh2: the key needs the passphrase gpurent was given, which ssh in batch mode cannot ask for");
    return std::unique_ptr<BackupChannel>();
  }
  if (!early) {
    early = start_openssh_backup(root);
  }
  TRY_ASSIGN(auto opened, early->open());
  if (opened.channel) {
    note("the backup's " + std::to_string(bytes >> 20) + " MiB from " + who +
         " go through OpenSSH's ssh (GPURENT_SSH_BULK=libssh2 for libssh2)");
    return std::move(opened.channel);
  }
  note("the backup's bytes go through libssh2: OpenSSH's ssh could not run the backup (" + opened.why_not + ")");
  m_bulk = BulkPath::libssh2;  // the session's other roots do not try again
  return std::unique_ptr<BackupChannel>();
}

Result<std::unique_ptr<BackupChannel>> LibsshSession::open_backup_channel(const std::string& root)
{
  TRY_ASSIGN(auto ch, start_exec(backup_agent_command(root), {}));
  // The exec's channel open measured the round trip: where ssh may carry the copy, it starts now,
  // beside the listing (its own connection, key exchange and login: 0.2-0.4 s on loopback).
  std::unique_ptr<StartedOpenSshBackup> early = openssh_may_carry() ? start_openssh_backup(root) : nullptr;
  auto channel = std::make_unique<LibsshBackupChannel>(std::move(ch));
  TRY(channel->start());
  if (m_bulk == BulkPath::libssh2) {
    return std::unique_ptr<BackupChannel>(std::move(channel));
  }
  if (m_bulk == BulkPath::automatic && listed_file_bytes(channel->listing()) < k_openssh_min_bytes) {
    early.reset();  // no copy from this listing can be large enough: ssh is ended at once
  }
  return std::unique_ptr<BackupChannel>(std::make_unique<BulkBackupChannel>(*this, std::move(channel), root, std::move(early)));
}

Result<std::unique_ptr<RemoteHashJob>> LibsshSession::start_sha256(const std::string& root, const std::vector<std::string>& rel_paths)
{
  std::string list;
  for (const auto& p : rel_paths) {
    list += p;
    list.push_back('\0');
  }
  TRY_ASSIGN(auto ch, start_exec(hash_command(root), std::move(list), 0, k_tree_output_limit));
  TRY(ch->send_input_now());
  return std::unique_ptr<RemoteHashJob>(std::make_unique<LibsshHashJob>(std::move(ch), rel_paths));
}

Result<std::unique_ptr<ExecStream>> LibsshSession::open_exec(const std::string& command, std::uint32_t window)
{
  TRY_ASSIGN(auto ch, start_exec(command, {}, window));
  return std::unique_ptr<ExecStream>(std::make_unique<LibsshExecStream>(std::move(ch)));
}

}  // namespace gpurent::ssh_detail
