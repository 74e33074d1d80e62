// SPDX-License-Identifier: MIT
#pragma once
// A one-channel backup (sync/backup_agent.hpp) whose bytes come through OpenSSH's own `ssh`
// client run as a child process (sync/local_child.hpp), as scp and rsync do: libssh2 1.10
// decrypts one 16-byte block per call, OpenSSH whole packets (docs/benchmarks.md, issue #43).
// The libssh2 session has already connected, verified the server's host key and authenticated;
// `ssh` is given exactly that verified key in a temporary known_hosts file (0600, removed once
// the agent answers, and on every other path), strict checking, batch mode (it never prompts),
// no user or system ssh config, and the same identities and agent as the session.
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

struct OpenSshCommand {
  SshTarget target;
  std::string host_key_type;    // the verified key's type, as its blob names it: "ssh-ed25519", "ssh-rsa", ...
  std::string host_key_base64;  // the verified key's blob, base64 (a known_hosts line's second field)
  std::vector<std::filesystem::path> identities;  // key files, in the session's order
  std::string agent_socket;                       // empty: no agent
  std::chrono::seconds connect_timeout{15};
  std::chrono::seconds keepalive{30};
  // This CPU has AES and carry-less multiply instructions: AES-GCM first (1.2 s for 512 MiB on
  // loopback here, against 2.1 s for OpenSSH's default chacha20-poly1305; docs/benchmarks.md).
  bool prefer_aes_gcm = false;
};

// The key exchanges `ssh` is asked for: those the libssh2 session that verified the host key,
// logged in and listed negotiates from (libssh2 1.10's, less SHA-1), curve25519 first, every name
// known to OpenSSH 7.4 and later. OpenSSH 9.x's own first choice, the post-quantum hybrid
// sntrup761x25519, cost 0.1 s more per connection on the 2-vCPU test machine (docs/benchmarks.md,
// issue #43), on the one path that is only taken within 10 ms of the server, while every other byte
// gpurent moves goes through libssh2's curve25519 exchange.
inline constexpr std::string_view k_openssh_kex =
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256";

// Whether this machine's CPU runs AES-GCM in hardware (x86: AES-NI and PCLMULQDQ; arm64: the
// AES and PMULL extensions).
[[nodiscard]] bool cpu_has_aes_gcm();

// When OpenSSH's ssh carries a copy (GPURENT_SSH_BULK=auto): it costs a second connection (0.36 s
// on the 2-vCPU loopback test machine) and its channel window is 2 MiB (OpenSSH 9.2's
// CHAN_SES_WINDOW_DEFAULT), so it is faster than libssh2 (CPU-bound at ~170-250 MB/s, with a
// 16 MiB window) only for a large copy on a short round trip: 2 MiB per 10 ms is 210 MB/s.
inline constexpr std::uint64_t k_openssh_min_bytes = std::uint64_t{128} << 20;
inline constexpr std::chrono::microseconds k_openssh_max_round_trip{10'000};
// PURE: `bytes` to copy over a link whose measured round trip is `rtt` (nullopt: unknown, libssh2).
[[nodiscard]] bool openssh_pays(std::uint64_t bytes, std::optional<std::chrono::microseconds> rtt);

// PURE: the signature algorithms `ssh` may accept for a host key of this type (an RSA key signs
// with SHA-2 first; its type name alone would mean SHA-1 signatures).
[[nodiscard]] std::string host_key_algorithms(std::string_view key_type);
// PURE: the known_hosts line of the verified key ("[host]:port type base64"; "host ..." on port 22).
[[nodiscard]] std::string verified_known_hosts_line(const OpenSshCommand& c);
// PURE: `ssh`'s argv for `remote_command` (one argument: ssh sends it as the exec request, as
// libssh2 does), with `known_hosts` the file holding verified_known_hosts_line(c). No secret is
// ever on it; the agent's socket goes in the environment (openssh_environment).
[[nodiscard]] std::vector<std::string> openssh_argv(const OpenSshCommand& c, const std::filesystem::path& known_hosts,
                                                    const std::string& remote_command);

struct OpenSshBackupOpen {
  std::unique_ptr<BackupChannel> channel;  // null: ssh could not do it before the agent answered
  std::string why_not;                     // then why (ssh missing, its exit and first words), for -v
};

// `ssh ... backup_agent_command(root)` started and not yet read: its connection, login and the
// agent's listing go on meanwhile (the listing waits in the pipe), so that it can be started beside
// the libssh2 listing and opened only once the copy turns out large. Dropped unopened, ssh is ended
// (SIGTERM) and reaped and the known_hosts file removed; the agent on the server removes its
// temporary files as its connection goes (backup_agent_command).
class StartedOpenSshBackup {
public:
  virtual ~StartedOpenSshBackup() = default;
  // Reads the agent's listing, once. Before the agent's first bytes arrive, any failure is a
  // `why_not` (the caller falls back to libssh2), except that a host key `ssh` refuses (another
  // server answered this connection than the session verified) is Errc::refused. After them, as
  // SshSession::open_backup_channel: Errc::unsupported where the server lacks a tool, or the
  // listing's error.
  [[nodiscard]] virtual Result<OpenSshBackupOpen> open() = 0;
};
// Starts it. Never fails here: what stops ssh (not on PATH, no temporary file) is open()'s
// `why_not`. `keepalive` (may be empty) is called about once a second while the channel waits or
// reads: the libssh2 session, idle meanwhile, sends its keepalives there, so that no firewall drops
// it before the backup's last steps.
[[nodiscard]] std::unique_ptr<StartedOpenSshBackup> start_openssh_backup_channel(const OpenSshCommand& c, const std::string& root,
                                                                                 std::function<void()> keepalive = {});

}  // namespace gpurent
