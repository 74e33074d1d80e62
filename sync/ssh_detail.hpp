// SPDX-License-Identifier: MIT
#pragma once
// Internal to gpurent_sync_io (not a public interface): the libssh2 session behind the
// SshSession port, shared by the files that implement it. Only sync/ssh_*.cpp include this
// header, so libssh2 stays in gpurent_sync_io (libgpurent_io.so):
//   ssh_transport.cpp  connecting, the SSH handshake, authentication, an interactive shell,
//                      the exported factory
//   ssh_host_key.cpp   host key verification (pinned fingerprint, known_hosts, accept-new)
//   ssh_exec.cpp       exec channels (commands, tar streams, hashing, the backup agent)
//   ssh_sftp.cpp       SFTP (stat, pipelined reads, the listing fallback)
#include <libssh2.h>
#include <libssh2_sftp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/captured_output.hpp"
#include "sync/openssh_bulk.hpp"
#include "sync/transport.hpp"

namespace gpurent::ssh_detail {

inline constexpr std::size_t k_read_chunk = 2 * 1024 * 1024;  // the libssh2 1.10 sweet spot (docs/benchmarks.md)
inline constexpr unsigned k_exec_window = 16U * 1024U * 1024U;
inline constexpr long k_op_timeout_ms = 120'000;

// The session's last error as an Error naming `target` and `what` was being done.
[[nodiscard]] Error session_error(LIBSSH2_SESSION* s, const std::string& target, const std::string& what);

class LibsshSession;

// Drives one exec channel non-blocking: feeds stdin, collects stdout and stderr.
class ExecChannel {
public:
  // `capture_limit`: the most stdout, or stderr, may hold when no sink takes it (captured_output.hpp).
  ExecChannel(LibsshSession& owner, LIBSSH2_CHANNEL* ch, std::string input, std::size_t capture_limit = k_captured_output_limit);
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;
  ~ExecChannel();
  // Runs to the end; stdout goes to `on_out` when given (an error from it aborts), else is kept
  // (up to the capture limit: past it the call fails and the channel is closed).
  [[nodiscard]] Result<ExecResult> finish(const DataSink& on_out = {});
  // Sends EOF (blocking: no round trip) and hands the channel to the session, which frees it
  // with itself; the command's exit is not waited for.
  void end_unwaited();
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
  CapturedOutput m_out;
  CapturedOutput m_err;
};

class LibsshSession final : public SshSession {
public:
  LibsshSession(SshTarget t, int fd, LIBSSH2_SESSION* s) : m_target(std::move(t)), m_fd(fd), m_session(s) {}
  LibsshSession(const LibsshSession&) = delete;
  LibsshSession& operator=(const LibsshSession&) = delete;
  ~LibsshSession() override;

  // ssh_transport.cpp: the handshake, the host key check and authentication; `started`: when the
  // TCP connect began (the link's connect time is measured from it to the end of the key exchange).
  [[nodiscard]] Result<void> handshake(const SshOptions& o, std::chrono::steady_clock::time_point started);

  std::string host_key_fingerprint() const override { return m_fingerprint; }
  LinkTimes link_times() const override { return m_link; }

  // ssh_exec.cpp
  Result<ExecResult> exec(const std::string& command, std::string_view stdin_data) override;
  Result<StreamReport> stream_files(const std::string& root, const std::vector<std::string>& rel_paths,
                                    FileStreamHandler& handler) override;
  Result<std::unique_ptr<BackupChannel>> open_backup_channel(const std::string& root) override;
  Result<std::unique_ptr<RemoteHashJob>> start_sha256(const std::string& root, const std::vector<std::string>& rel_paths) override;
  Result<std::unique_ptr<ExecStream>> open_exec(const std::string& command, std::uint32_t window = 0) override;

  // ssh_transport.cpp: a shell or a command on the caller's fds (a pty when asked).
  Result<int> run_interactive(const std::string& command, const InteractiveIo& io) override;

  // ssh_sftp.cpp (list_tree asks `find` first, over exec)
  Result<std::vector<RemoteEntry>> list_tree(const std::string& root) override;
  Result<RemoteEntry> stat(const std::string& path) override;
  Result<std::uint64_t> read_file(const std::string& path, std::uint64_t offset, const DataSink& sink) override;

  // ssh_exec.cpp (BulkBackupChannel): the copy of a one-channel backup through OpenSSH's `ssh` (sync/openssh_bulk.hpp)
  // of `bytes`; null when libssh2 carries it (the mode, openssh_pays, a key only gpurent's prompt
  // unlocks, ssh's failure before the agent answered).
  // `early`: ssh already started beside the listing (else started here when it pays).
  [[nodiscard]] Result<std::unique_ptr<BackupChannel>> open_openssh_backup(const std::string& root, std::uint64_t bytes,
                                                                          std::unique_ptr<StartedOpenSshBackup> early);
  // Used by ExecChannel.
  [[nodiscard]] LIBSSH2_SESSION* raw() const { return m_session; }
  [[nodiscard]] const SshTarget& target() const { return m_target; }
  void wait_socket(int extra_fd = -1, short extra_events = 0, bool* extra_ready = nullptr, int timeout_ms = 1000) const;

private:
  // ssh_host_key.cpp
  [[nodiscard]] Result<void> verify_host_key(const SshOptions& o);
  // ssh_transport.cpp
  [[nodiscard]] Result<void> authenticate(const SshOptions& o);

  void note(const std::string& text) const
  {
    if (m_note) {
      m_note(text);
    }
  }
  // ssh_exec.cpp: whether ssh may carry a backup's copy from this session (the mode, the key, the
  // round trip measured so far), and ssh started for one.
  [[nodiscard]] bool openssh_may_carry() const;
  [[nodiscard]] std::unique_ptr<StartedOpenSshBackup> start_openssh_backup(const std::string& root);
  // ssh_exec.cpp
  [[nodiscard]] Result<std::unique_ptr<ExecChannel>> start_exec(const std::string& command, std::string input, std::uint32_t window = 0,
                                                                std::size_t capture_limit = k_captured_output_limit);
  // exec() with another capture limit (listings of a tree: k_tree_output_limit).
  [[nodiscard]] Result<ExecResult> exec_with_limit(const std::string& command, std::string_view stdin_data, std::size_t capture_limit);
  // ssh_sftp.cpp
  [[nodiscard]] Result<void> ensure_sftp();
  [[nodiscard]] Error sftp_error(const std::string& what) const;
  [[nodiscard]] Result<std::vector<RemoteEntry>> list_tree_sftp(const std::string& root);

  SshTarget m_target;
  int m_fd;
  LIBSSH2_SESSION* m_session;
  LIBSSH2_SFTP* m_sftp = nullptr;
  std::string m_fingerprint;
  LinkTimes m_link;  // the connect time (set by gpurent_ssh_connect), the fastest channel open (start_exec)
  // What `ssh` needs to carry a backup's bytes as this session would: the verified host key
  // (verify_host_key), the identities, agent and timeouts (handshake).
  OpenSshCommand m_openssh;
  BulkPath m_bulk = BulkPath::automatic;
  bool m_key_prompted = false;  // authenticated with a key whose passphrase gpurent supplied
  std::function<void(const std::string&)> m_note;
};

}  // namespace gpurent::ssh_detail
