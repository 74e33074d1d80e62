// SPDX-License-Identifier: MIT
#include "cli/ssh_options.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <map>
#include <mutex>

#include "cli/group_support.hpp"
#include "cli/server_names.hpp"
#include "cli/services.hpp"
#include "common/clock.hpp"
#include "providers/state_store.hpp"
#include "sync/base64.hpp"

namespace gpurent {
namespace {

bool clean_token(std::string_view s)
{
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f || c == '/' || c == '@' || c == '\\' || c == '\'' || c == '"';
  });
}

// Runs an SSH_ASKPASS-style program with the prompt as its argument; its first output line is
// the passphrase. Nothing of it is ever printed.
std::optional<std::string> run_askpass(const std::string& program, const std::string& prompt)
{
  int fds[2];
  if (::pipe(fds) != 0) {
    return std::nullopt;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execlp(program.c_str(), program.c_str(), prompt.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[256];
  while (true) {
    const auto n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  const auto nl = out.find('\n');
  return nl == std::string::npos ? out : out.substr(0, nl);
}

}  // namespace

Result<SshTarget> parse_ssh_target(std::string_view text)
{
  const auto bad = [&](const std::string& why) {
    return fail(Errc::usage, "--host " + std::string(text) + ": " + why + "; expected USER@HOST[:PORT]");
  };
  SshTarget t;
  std::string_view rest = text;
  const auto at = rest.rfind('@');
  if (at != std::string_view::npos) {
    t.user = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
    if (t.user.empty() || !clean_token(t.user) || t.user.front() == '-') {
      return bad("bad user name");
    }
  } else {
    t.user = "root";
  }
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return bad("unclosed '['");
    }
    t.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return bad("unexpected text after ']'");
      }
      port = rest.substr(1);
      if (port.empty()) {
        return bad("empty port");
      }
    }
    if (t.host.find(':') == std::string::npos) {
      return bad("brackets are for IPv6 addresses");
    }
  } else {
    const auto colon = rest.find(':');
    if (colon != std::string_view::npos) {
      if (rest.find(':', colon + 1) != std::string_view::npos) {
        return bad("write an IPv6 address in brackets, e.g. root@[::1]:22");
      }
      port = rest.substr(colon + 1);
      rest = rest.substr(0, colon);
      if (port.empty()) {
        return bad("empty port");
      }
    }
    t.host = std::string(rest);
  }
  if (t.host.empty()) {
    return bad("no host");
  }
  if (t.host.front() == '-' || !std::all_of(t.host.begin(), t.host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == ':' || c == '_' || c == '%';
      })) {
    return bad("bad host name");
  }
  if (!port.empty()) {
    unsigned value = 0;
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc{} || p != port.data() + port.size() || value == 0 || value > 65535) {
      return bad("port must be 1-65535");
    }
    t.port = static_cast<std::uint16_t>(value);
  }
  return t;
}

void add_ssh_flags(CLI::App& sub, SshFlags& flags)
{
  sub.add_option("--host", flags.host, "USER@HOST[:PORT] of a server gpurent does not track (USER defaults to root)");
  sub.add_option("--identity", flags.identity, "private key file (default: the SSH agent, then ~/.ssh/id_ed25519, ~/.ssh/id_rsa)");
  sub.add_option("--known-hosts", flags.known_hosts,
                 "known-hosts file to check and record in (default: gpurent's own in the state dir, plus ~/.ssh/known_hosts read-only)");
  sub.add_flag("--accept-new-host-key", flags.accept_new_host_key, "trust a host key seen for the first time, and record it");
}

Result<SshOptions> make_ssh_options(const Services& s, const SshFlags& flags)
{
  SshOptions o;
  const auto home = s.getenv("HOME");
  if (!flags.identity.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(flags.identity, ec)) {
      return fail(Errc::usage, "--identity " + flags.identity + ": no such file; give the path of a private key");
    }
    o.identities.emplace_back(flags.identity);
    o.use_agent = false;
  } else {
    o.agent_socket = s.getenv("SSH_AUTH_SOCK").value_or("");
    o.use_agent = !o.agent_socket.empty();
    if (home) {
      o.identities.push_back(std::filesystem::path(*home) / ".ssh" / "id_ed25519");
      o.identities.push_back(std::filesystem::path(*home) / ".ssh" / "id_rsa");
    }
  }
  if (!flags.known_hosts.empty()) {
    o.known_hosts = flags.known_hosts;
  } else {
    TRY_ASSIGN(const auto dir, state_dir([&](const std::string& k) { return s.getenv(k); }));
    o.known_hosts = dir / "known_hosts";
    if (home) {
      o.extra_known_hosts.push_back(std::filesystem::path(*home) / ".ssh" / "known_hosts");
    }
  }
  o.accept_new_host_key = flags.accept_new_host_key;
  // What carries a backup's bytes (docs/backup.md, section 4): OpenSSH's ssh where it can, or one of them always.
  if (const auto bulk = s.getenv("GPURENT_SSH_BULK"); bulk && !bulk->empty() && *bulk != "auto") {
    if (*bulk == "libssh2") {
      o.bulk = BulkPath::libssh2;
    } else if (*bulk == "openssh") {
      o.bulk = BulkPath::openssh;
    } else {
      return fail(Errc::usage, "GPURENT_SSH_BULK=" + *bulk + ": expected auto, openssh or libssh2");
    }
  }
  if (s.global.verbose) {
    o.note = [err = &s.err](const std::string& text) { *err << "gpurent: " << text << "\n"; };
  }
  const auto env_pass = s.getenv("GPURENT_SSH_PASSPHRASE");
  const auto askpass = s.getenv("SSH_ASKPASS");
  // Asked once per key, whatever the number of connections (backup and push open several, from
  // several threads): every copy of these options shares the answers.
  struct Asked {
    std::mutex mu;
    std::map<std::filesystem::path, std::optional<std::string>> by_key;
  };
  o.passphrase = [env_pass, askpass, asked = std::make_shared<Asked>()](const std::filesystem::path& key) -> std::optional<std::string> {
    if (env_pass) {
      return env_pass;
    }
    if (!askpass) {
      return std::nullopt;
    }
    std::lock_guard lock(asked->mu);
    const auto known = asked->by_key.find(key);
    if (known != asked->by_key.end()) {
      return known->second;
    }
    return asked->by_key[key] = run_askpass(*askpass, "Enter passphrase for " + key.string() + ": ");
  };
  return o;
}

std::optional<std::string> host_key_fingerprint_of(std::string_view key)
{
  if (key.starts_with("SHA256:")) {
    return std::string(key);
  }
  const auto space = key.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view b64 = key.substr(space + 1);
  b64 = b64.substr(0, b64.find(' '));
  const auto blob = base64_decode(b64);
  if (!blob || blob->empty()) {
    return std::nullopt;
  }
  return ssh_fingerprint(*blob);
}

void apply_remembered(Services& s, SshOptions& options, const SshFlags& flags, const ServerRecord& record)
{
  std::error_code ec;
  if (flags.identity.empty() && !record.identity_file.empty()) {
    if (std::filesystem::exists(record.identity_file, ec)) {
      options.identities = {record.identity_file};
      options.use_agent = false;
    } else {
      report_warning(s, record.name + ": the SSH key remembered for it (" + record.identity_file +
                            ") is gone; trying the agent and the default keys (give --identity KEY)");
    }
  }
  if (flags.known_hosts.empty() && !record.known_hosts_file.empty()) {
    options.known_hosts = record.known_hosts_file;
    options.extra_known_hosts.clear();
  }
  if (!record.host_key.empty()) {
    if (const auto fp = host_key_fingerprint_of(record.host_key)) {
      options.expected_host_key = *fp;
    }
  }
}

Result<SshDestination> resolve_destination(Services& s, const std::string& name, const SshFlags& flags, SshOptions& options)
{
  SshDestination d;
  if (!flags.host.empty()) {
    if (!name.empty()) {
      return fail(Errc::usage, "give either NAME or --host, not both");
    }
    TRY_ASSIGN(d.target, parse_ssh_target(flags.host));
    d.name = d.target.host;
    return d;
  }
  if (name.empty()) {
    return fail(Errc::usage, "which server? give NAME (see `gpurent status`) or --host USER@HOST[:PORT]");
  }
  if (!s.state) {
    return fail(Errc::internal, "the state store is not available; use --host USER@HOST[:PORT]");
  }
  TRY_ASSIGN(StateStore* const store, s.state());
  TRY_ASSIGN(const auto record, store->find_server(name));
  if (!record) {
    TRY_ASSIGN(const auto servers, store->list_servers(false));
    if (const auto group = group_of(servers, name)) {
      std::string members;
      for (const auto& m : group->members) {
        members += (members.empty() ? "" : ", ") + m.name;
      }
      return fail(Errc::usage, name + " is a server group (" + members + "); give one of its servers");
    }
    return fail(Errc::not_found, "no server named " + name + " is tracked; " +
                                     unknown_name_hint(*store, name, "see `gpurent status`, or use --host USER@HOST[:PORT]"));
  }
  if (record->status == ServerStatus::stopped || record->status == ServerStatus::hibernated) {
    // Its recorded address answers nothing (or someone else's server): say why, not "connection refused".
    return fail(Errc::unavailable, "server " + record->name + " is " + std::string(to_string(record->status)) + " (since " +
                                       utc_iso8601(record->status_since) + "), so SSH cannot reach it; start it with `gpurent start " +
                                       record->name + "` (or see `gpurent status --refresh " + record->name + "`)");
  }
  if (record->host.empty()) {
    return fail(Errc::unavailable, "server " + name + " has no SSH address yet; wait for `gpurent up` to finish or run `gpurent status --refresh`");
  }
  d.target = SshTarget{record->user.empty() ? "root" : record->user, record->host, record->port};
  d.name = record->name;
  d.server_id = record->id;
  d.workspace_dir = record->terms.workspace_dir;
  apply_remembered(s, options, flags, *record);
  return d;
}

void add_streams_flag(CLI::App& sub, std::size_t& streams)
{
  sub.add_option("--streams", streams,
                 "SSH connections that carry files of 64 MiB and more as byte ranges, each verified and resumable "
                 "(backup default 1: one tar stream; push default: chosen from the link's round trip, up to 6)")
      ->check(CLI::Range(1, 64));
}

SessionFactory more_sessions(Services& s, const SshTarget& target, SshOptions options, const SshSession& first)
{
  options.expected_host_key = first.host_key_fingerprint();
  options.accept_new_host_key = false;
  return [&s, target, options]() { return connect_ssh(s, target, options); };
}

Result<std::unique_ptr<SshSession>> connect_ssh(Services& s, const SshTarget& target, const SshOptions& options)
{
  if (!s.ssh_connect) {
    return fail(Errc::internal, "SSH is not available in this build; rebuild gpurent with libgpurent_io.so");
  }
  return s.ssh_connect(target, options);
}

}  // namespace gpurent
