// SPDX-License-Identifier: MIT
#pragma once
// The SSH flags shared by attach, ssh, backup and doctor, the USER@HOST[:PORT] parser, and
// how a command gets a connected session for NAME or --host.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace CLI {
class App;
}

namespace gpurent {
struct Services;
struct ServerRecord;

// [USER@]HOST[:PORT], HOST may be an IPv6 address in brackets ([::1]:2222). USER defaults to
// "root" (what rented GPU images log in as). Strict: no spaces, control characters or '/'.
[[nodiscard]] Result<SshTarget> parse_ssh_target(std::string_view text);

struct SshFlags {
  std::string host;         // --host USER@HOST[:PORT]
  std::string identity;     // --identity KEY
  std::string known_hosts;  // --known-hosts FILE
  bool accept_new_host_key = false;
};

// Registers --host, --identity, --known-hosts and --accept-new-host-key on `sub`.
void add_ssh_flags(CLI::App& sub, SshFlags& flags);

// Key files, agent, known-hosts files and passphrase source from the flags and environment
// (HOME, SSH_AUTH_SOCK, GPURENT_STATE_DIR/XDG_STATE_HOME, GPURENT_SSH_PASSPHRASE, SSH_ASKPASS).
[[nodiscard]] Result<SshOptions> make_ssh_options(const Services& s, const SshFlags& flags);

// For a tracked server: the identity and known-hosts file given at attach/up where the flags
// give none (a remembered key file that no longer exists is skipped with a warning), and its
// recorded host key as the one expected.
void apply_remembered(Services& s, SshOptions& options, const SshFlags& flags, const ServerRecord& record);

// "SHA256:…" stays; "<type> <base64>" (an OpenSSH public key line) becomes its fingerprint.
[[nodiscard]] std::optional<std::string> host_key_fingerprint_of(std::string_view key);

// Where to connect for NAME (from the state store) or --host.
struct SshDestination {
  SshTarget target;
  std::string name;            // NAME, or the host for --host
  std::int64_t server_id = 0;  // state-store row, 0 for --host
  std::string workspace_dir;   // from the provider's terms, may be empty
};
[[nodiscard]] Result<SshDestination> resolve_destination(Services& s, const std::string& name, const SshFlags& flags,
                                                         SshOptions& options);

// --streams N (backup, push; 0 when not given: chosen automatically).
void add_streams_flag(CLI::App& sub, std::size_t& streams);

// More connections to the server `first` is connected to (backup and push spread large files
// over several): the same identity, and only the host key `first` verified.
[[nodiscard]] SessionFactory more_sessions(Services& s, const SshTarget& target, SshOptions options, const SshSession& first);

// Opens a session through s.ssh_connect.
[[nodiscard]] Result<std::unique_ptr<SshSession>> connect_ssh(Services& s, const SshTarget& target, const SshOptions& options);

}  // namespace gpurent
