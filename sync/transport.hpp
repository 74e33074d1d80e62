// SPDX-License-Identifier: MIT
#pragma once
// The SSH port: everything backup, ssh and doctor need from a remote server. The only
// implementation that talks to a network is sync/ssh_transport.cpp (libssh2); tests also use
// tests/fakes/memory_transport.hpp. Headers here speak only gpurent types.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// USER@HOST[:PORT]; parse_ssh_target() lives in cli/ssh_options.hpp.
struct SshTarget {
  std::string user;
  std::string host;
  std::uint16_t port = 22;
  auto operator<=>(const SshTarget&) const = default;
};
[[nodiscard]] std::string to_string(const SshTarget& t);  // "user@host:port" ([v6]:port)

// What carries a one-channel backup's copy (SshSession::open_backup_channel): automatic:
// OpenSSH's own `ssh` client as a child process for a large copy on a short round trip
// (openssh_pays, sync/openssh_bulk.hpp), else libssh2; openssh: `ssh` for every copy; libssh2:
// never `ssh`. Where `ssh` cannot (not on PATH, cannot log in), libssh2 carries it (said at -v).
// Set from GPURENT_SSH_BULK by cli/ssh_options.cpp (docs/backup.md, section 4).
enum class BulkPath { automatic, libssh2, openssh };

struct SshOptions {
  // Key files tried in order after the agent. Empty: ~/.ssh/id_ed25519 then ~/.ssh/id_rsa
  // (the caller fills the defaults; the transport never reads $HOME).
  std::vector<std::filesystem::path> identities;
  bool use_agent = true;
  std::string agent_socket;  // $SSH_AUTH_SOCK as read by cli/; empty: no agent
  // Asked for the passphrase of an encrypted key; nullopt = none available. Never logged.
  std::function<std::optional<std::string>(const std::filesystem::path& key)> passphrase;
  std::filesystem::path known_hosts;                      // gpurent's own file; written on TOFU
  std::vector<std::filesystem::path> extra_known_hosts;  // read-only (e.g. ~/.ssh/known_hosts)
  bool accept_new_host_key = false;                       // trust on first use (then recorded)
  std::string expected_host_key;  // "SHA256:…" from a provider API or the state store: trusted
  std::chrono::seconds connect_timeout{15};
  std::chrono::seconds keepalive{30};
  BulkPath bulk = BulkPath::automatic;
  // Notes for -v (which path carries the bytes, and why); never a secret. Empty: silent.
  std::function<void(const std::string&)> note;
};

enum class EntryKind { file, directory, symlink, other };

// One entry of a remote tree, `path` relative to the listed root ('/'-separated, no leading
// "./"; names may contain any byte but '/' and NUL, newlines included).
struct RemoteEntry {
  std::string path;
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;  // nanoseconds since the epoch (1 s resolution over SFTP)
  std::uint32_t mode = 0;     // permission bits (07777)
  std::string link_target;    // symlinks only, verbatim
  auto operator<=>(const RemoteEntry&) const = default;
};

struct ExecResult {
  std::string out;
  std::string err;
  int exit_status = 0;
};

// Receives file data in order; an error aborts the transfer and is returned by the caller.
using DataSink = std::function<Result<void>(const char* data, std::size_t size)>;
// Produces a command's input in pieces: fills up to `size` bytes of `buf` and returns how many;
// 0 means the end of the input. An error aborts the command.
using DataSource = std::function<Result<std::size_t>(char* buf, std::size_t size)>;

// Receives several files streamed in one channel (see SshSession::stream_files).
class FileStreamHandler {
public:
  virtual ~FileStreamHandler() = default;
  [[nodiscard]] virtual Result<void> begin_file(const std::string& rel_path, std::uint64_t size) = 0;
  [[nodiscard]] virtual Result<void> file_data(const char* data, std::size_t size) = 0;
  [[nodiscard]] virtual Result<void> end_file() = 0;
};

// What a remote hashing run found.
struct RemoteHashes {
  std::string tool;                         // "openssl", "sha256sum", "shasum"; "none": no tool on the server
  std::map<std::string, std::string> sums;  // path (as given to start_sha256) -> lowercase hex digest;
                                            // files the tool could not read are absent
};

// What the sending side noticed while streaming files.
struct StreamReport {
  // The server's tar said a file changed, shrank or vanished while it was read (exit status 1),
  // or could not say (another non-zero status): the caller must check the files again.
  bool changed_while_read = false;
};

// What a one-channel copy (BackupChannel::copy) brought back besides the files.
struct BulkCopyReport {
  StreamReport stream;
  RemoteHashes hashes;
};

// A whole backup of one source root in one exec channel, so one remote shell start
// (sync/backup_agent.hpp): the server lists the tree, then streams the files it is asked for
// through tar while it hashes them.
class BackupChannel {
public:
  virtual ~BackupChannel() = default;
  // The entries under the root as list_tree() gives them; for a root that is a single file, one
  // entry named after it (root_is_file()). Called once, first.
  [[nodiscard]] virtual Result<std::vector<RemoteEntry>> listing() = 0;
  [[nodiscard]] virtual bool root_is_file() const = 0;
  // Streams the files at these paths (relative to the root, or the file's name) to `handler`,
  // and returns what the server's tar saw and the SHA-256 it computed of each. Called once,
  // after listing(); with no paths it only closes the channel.
  [[nodiscard]] virtual Result<BulkCopyReport> copy(const std::vector<std::string>& rel_paths, FileStreamHandler& handler) = 0;
};

// A remote SHA-256 run started before the transfer so that it overlaps with it.
class RemoteHashJob {
public:
  virtual ~RemoteHashJob() = default;
  [[nodiscard]] virtual Result<RemoteHashes> wait() = 0;
};

// How a command driven through an ExecStream ended.
struct ExecStreamEnd {
  std::string err;       // its stderr, when no stderr sink was given
  int exit_status = 0;
  bool stopped = false;  // the caller's `stop` ended it first (the command may still run on the server)
};

// One exec channel driven by the caller, for commands that answer before they read their input
// (push: the server lists its tree, then reads an archive) or that stream for a long time
// (following a job's log). Input is pulled from a DataSource, never held whole in memory.
class ExecStream {
public:
  virtual ~ExecStream() = default;
  // Reads stdout into `on_out` (stderr is kept) until `done()` or the end of the output,
  // without writing any input.
  [[nodiscard]] virtual Result<void> read_until(const DataSink& on_out, const std::function<bool()>& done) = 0;
  // Sends all of `in` (an empty function: no input), then EOF, while stdout goes to `on_out`
  // and stderr to `on_err` (empty: kept in the result); then reads to the end. `stop` (may be
  // empty) is asked at least every 200 ms; when it answers true the channel is closed at once.
  // A command that exits before reading all its input ends the sending, not the call: its exit
  // status and stderr tell why.
  [[nodiscard]] virtual Result<ExecStreamEnd> finish(const DataSource& in, const DataSink& on_out, const DataSink& on_err,
                                                     const std::function<bool()>& stop) = 0;
  // Sends EOF and leaves the command to end by itself, waiting for nothing: for a command whose
  // answer has all been read and that ends on EOF (a push with nothing to send: a round trip
  // saved, issue #43). The channel goes with the session. Default: finish() without input.
  virtual void end_unwaited() { (void)finish({}, {}, {}, {}); }
};

// Terminal hooks for an interactive session (gpurent ssh); all fds belong to the caller.
struct InteractiveIo {
  int in_fd = 0;
  int out_fd = 1;
  int err_fd = 2;
  bool pty = false;                 // request a PTY (interactive shell)
  std::string term = "xterm";
  // Current window size (columns, rows); polled, so a resize is forwarded.
  std::function<std::pair<int, int>()> window_size;
};

// What a session measured of its link, for choosing how many connections to open (push).
struct LinkTimes {
  std::chrono::microseconds connect{0};           // TCP connect and SSH key exchange (no authentication)
  std::optional<std::chrono::microseconds> round_trip;  // the fastest channel open: one round trip
};

class SshSession {
public:
  virtual ~SshSession() = default;
  // Unknown (zero, nullopt) where the session measures nothing (test doubles).
  [[nodiscard]] virtual LinkTimes link_times() const { return {}; }
  // The server's host key as OpenSSH prints it: "SHA256:<base64 without padding>".
  [[nodiscard]] virtual std::string host_key_fingerprint() const = 0;
  // Runs a command (through the user's shell), feeding `stdin_data`, capturing everything.
  [[nodiscard]] virtual Result<ExecResult> exec(const std::string& command, std::string_view stdin_data = {}) = 0;
  // Every entry under `root` (not following symlinks), one pass: a remote `find -printf`
  // where available, else a recursive SFTP listing. A relative root is relative to $HOME.
  [[nodiscard]] virtual Result<std::vector<RemoteEntry>> list_tree(const std::string& root) = 0;
  // lstat of one path; not_found when it does not exist.
  [[nodiscard]] virtual Result<RemoteEntry> stat(const std::string& path) = 0;
  // Sends the bytes of `path` from `offset` to the end to `sink` (pipelined); returns the
  // number of bytes delivered.
  [[nodiscard]] virtual Result<std::uint64_t> read_file(const std::string& path, std::uint64_t offset, const DataSink& sink) = 0;
  // Streams many regular files root/rel in one exec channel (a remote `tar -cf -`): one
  // channel for any number of files, no per-file round trips. Files that cannot be read are
  // not delivered. Errc::unsupported when the server cannot do it (the caller falls back to
  // read_file).
  [[nodiscard]] virtual Result<StreamReport> stream_files(const std::string& root, const std::vector<std::string>& rel_paths,
                                                          FileStreamHandler& handler) = 0;
  // A one-channel backup of `root`. Errc::unsupported when the server lacks what it needs
  // (GNU find and tar, mktemp): the caller then uses list_tree, stream_files and start_sha256.
  [[nodiscard]] virtual Result<std::unique_ptr<BackupChannel>> open_backup_channel(const std::string& root) = 0;
  // Starts SHA-256 of root/rel for each rel, on the server, without waiting for it.
  [[nodiscard]] virtual Result<std::unique_ptr<RemoteHashJob>> start_sha256(const std::string& root,
                                                                           const std::vector<std::string>& rel_paths) = 0;
  // Starts a command (through the user's shell) on a channel the caller drives (see ExecStream).
  // `window`: the bytes the server may send before we read them (0: the session's default,
  // 16 MiB over libssh2); what a channel may buffer, so several channels at once ask for less.
  // Errc::unsupported where the session cannot run commands.
  [[nodiscard]] virtual Result<std::unique_ptr<ExecStream>> open_exec(const std::string& command, std::uint32_t window = 0) = 0;
  // A shell (empty command) or a command, wired to the caller's fds; returns the exit status.
  [[nodiscard]] virtual Result<int> run_interactive(const std::string& command, const InteractiveIo& io) = 0;
};

// Opens one more SSH connection to the same server, with the same host key and identity
// (called from worker threads: `backup` and `push` spread large files over several).
using SessionFactory = std::function<Result<std::unique_ptr<SshSession>>()>;

// The factory exported by libgpurent_io.so (sync/ssh_transport.cpp), C linkage so that
// cli/main.cpp can dlsym it. Errors: unavailable (refused/unreachable), timeout,
// unauthorized (auth failed), refused (unknown or changed host key).
using SshConnectFn = void (*)(const SshTarget*, const SshOptions*, Result<std::unique_ptr<SshSession>>*);

}  // namespace gpurent

extern "C" void gpurent_ssh_connect(const gpurent::SshTarget* target, const gpurent::SshOptions* options,
                                    gpurent::Result<std::unique_ptr<gpurent::SshSession>>* out);
