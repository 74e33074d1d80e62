// SPDX-License-Identifier: MIT
#include "sync/openssh_bulk.hpp"

#include <sys/stat.h>
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>

#include "common/terminal_text.hpp"
#include "sync/backup_agent.hpp"
#include "sync/local_child.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_agent_prefix = "gpurent-agent";  // "gpurent-agent-1" or "gpurent-agent-error"

// The temporary known_hosts file: created 0600 by mkstemp, removed by remove() or at the end.
class TempKnownHosts {
public:
  TempKnownHosts() = default;
  TempKnownHosts(const TempKnownHosts&) = delete;
  TempKnownHosts& operator=(const TempKnownHosts&) = delete;
  ~TempKnownHosts() { remove(); }
  [[nodiscard]] Result<void> write(const std::string& line)
  {
    std::error_code ec;
    auto dir = std::filesystem::temp_directory_path(ec);
    // ssh splits UserKnownHostsFile at spaces and expands %, ~ and ${...} in it: a $TMPDIR
    // with any of those (or quotes) is not used.
    const std::string d = dir.string();
    const bool plain = !ec && std::all_of(d.begin(), d.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) != 0 || std::string_view("/._+-").find(ch) != std::string_view::npos;
    });
    std::string path = ((plain ? dir : std::filesystem::path("/tmp")) / "gpurent-known_hosts.XXXXXX").string();
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
      return fail(Errc::internal, "cannot create a temporary known_hosts file for ssh: " + std::string(std::strerror(errno)));
    }
    m_path = path;
    const std::string text = line + "\n";
    const bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok) {
      return fail(Errc::internal, "cannot write " + m_path.string());
    }
    return {};
  }
  void remove()
  {
    if (!m_path.empty()) {
      ::unlink(m_path.c_str());
      m_path.clear();
    }
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return m_path; }

private:
  std::filesystem::path m_path;
};

// ssh's first words (it says why it stopped on stderr), on one line, controls written out.
std::string first_words(const std::string& err)
{
  std::string s = err;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
    s.pop_back();
  }
  const auto nl = s.rfind('\n');
  s = nl == std::string::npos ? s : s.substr(nl + 1);  // the last line: its final word
  if (s.size() > 240) {
    s = s.substr(0, 240) + "...";
  }
  return escape_controls(s, false);
}

bool host_key_refused(const std::string& err)
{
  return err.find("Host key verification failed") != std::string::npos ||
         err.find("REMOTE HOST IDENTIFICATION HAS CHANGED") != std::string::npos ||
         err.find("No matching host key fingerprint found") != std::string::npos;
}

class OpenSshBackupChannel final : public BackupChannel {
public:
  OpenSshBackupChannel(std::unique_ptr<LocalChild> child, std::unique_ptr<TempKnownHosts> known_hosts, std::string target,
                       std::function<void()> keepalive)
      : m_child(std::move(child)), m_known_hosts(std::move(known_hosts)), m_target(std::move(target)), m_keepalive(std::move(keepalive))
  {
  }
  ~OpenSshBackupChannel() override = default;  // the child is ended and reaped, the file removed

  // Reads the agent's listing. nullopt: it answered; else why ssh could not run it.
  Result<std::optional<std::string>> start()
  {
    std::string first;  // stdout's first bytes, until they say whether the agent answered
    const auto fed = m_child->pump(
        {}, false,
        [&](const char* p, std::size_t n) -> Result<void> {
          if (first.size() < k_agent_prefix.size()) {
            first.append(p, std::min(n, k_agent_prefix.size() - first.size()));
          }
          return m_listing.feed(std::string_view(p, n));
        },
        [this] { return m_listing.done(); }, m_keepalive);
    const bool answered = first == k_agent_prefix;
    if (answered) {
      m_known_hosts->remove();  // the host key was checked before the command ran
    }
    if (!fed) {
      if (!answered) {
        return std::optional<std::string>("the remote shell printed something else first (" + fed.error().message + ")");
      }
      if (fed.error().code == Errc::invalid_input) {
        return fail(Errc::unsupported, "backup agent: " + fed.error().message);
      }
      return std::unexpected(fed.error());
    }
    if (!m_listing.done()) {
      const int status = m_child->wait();
      const std::string& err = m_child->err();
      if (host_key_refused(err)) {
        return fail(Errc::refused, "ssh to " + m_target + ": OpenSSH's ssh refused the server's host key, which the first connection "
                                   "had verified moments before (another server answered this connection: " + first_words(err) +
                                   "); nothing was copied. Check the network path to the server before you trust it again");
      }
      if (!answered) {
        return std::optional<std::string>("ssh exited with status " + std::to_string(status) +
                                          (err.empty() ? std::string() : ": " + first_words(err)));
      }
      return fail(Errc::unsupported, "backup agent: no listing from the server");
    }
    m_entries = m_listing.result();
    if (!m_entries && m_entries.error().code == Errc::unsupported) {
      return std::unexpected(m_entries.error());
    }
    return std::optional<std::string>();
  }

  Result<std::vector<RemoteEntry>> listing() override { return m_entries; }
  bool root_is_file() const override { return m_listing.root_is_file(); }

  Result<BulkCopyReport> copy(const std::vector<std::string>& rel_paths, FileStreamHandler& handler) override
  {
    const std::string list = agent_path_list(rel_paths);
    AgentCopyReader reader(handler);
    const auto fed = m_child->pump(list, true, [&](const char* p, std::size_t n) { return reader.feed(p, n); }, {}, m_keepalive);
    if (!fed) {
      m_child->kill();
      return std::unexpected(fed.error());
    }
    const int status = m_child->wait();
    if (rel_paths.empty()) {
      return BulkCopyReport{};
    }
    auto report = reader.finish(rel_paths);
    if (!report && status != 0) {
      return fail(Errc::unavailable, "copying from " + m_target + " through ssh: the connection was lost or ssh stopped (exit status " +
                                         std::to_string(status) + (m_child->err().empty() ? "" : ": " + first_words(m_child->err())) +
                                         "); re-run the backup (it resumes)");
    }
    return report;
  }

private:
  std::unique_ptr<LocalChild> m_child;
  std::unique_ptr<TempKnownHosts> m_known_hosts;
  std::string m_target;
  std::function<void()> m_keepalive;
  AgentListingReader m_listing;
  Result<std::vector<RemoteEntry>> m_entries = std::vector<RemoteEntry>{};
};

}  // namespace

bool openssh_pays(std::uint64_t bytes, std::optional<std::chrono::microseconds> rtt)
{
  return bytes >= k_openssh_min_bytes && rtt && *rtt <= k_openssh_max_round_trip;
}

bool cpu_has_aes_gcm()
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") != 0 && __builtin_cpu_supports("pclmul") != 0;
#elif defined(__aarch64__) && defined(__linux__)
  const unsigned long caps = ::getauxval(AT_HWCAP);
  return (caps & HWCAP_AES) != 0 && (caps & HWCAP_PMULL) != 0;
#else
  return false;
#endif
}

std::string host_key_algorithms(std::string_view key_type)
{
  if (key_type == "ssh-rsa") {
    return "rsa-sha2-512,rsa-sha2-256,ssh-rsa";
  }
  return std::string(key_type);
}

std::string verified_known_hosts_line(const OpenSshCommand& c)
{
  const std::string host = c.target.port == 22 ? c.target.host : "[" + c.target.host + "]:" + std::to_string(c.target.port);
  return host + " " + c.host_key_type + " " + c.host_key_base64;
}

std::vector<std::string> openssh_argv(const OpenSshCommand& c, const std::filesystem::path& known_hosts, const std::string& remote_command)
{
  std::vector<std::string> a = {"ssh", "-F", "/dev/null", "-T", "-e", "none", "-x", "-a", "-p", std::to_string(c.target.port),
                                "-l", c.target.user};
  const auto opt = [&](const std::string& o) {
    a.emplace_back("-o");
    a.push_back(o);
  };
  opt("BatchMode=yes");
  opt("StrictHostKeyChecking=yes");
  opt("UserKnownHostsFile=" + known_hosts.string());
  opt("GlobalKnownHostsFile=/dev/null");
  opt("HostKeyAlgorithms=" + host_key_algorithms(c.host_key_type));
  opt("UpdateHostKeys=no");
  opt("CheckHostIP=no");
  opt("ConnectTimeout=" + std::to_string(std::max<long long>(1, c.connect_timeout.count())));
  opt("ServerAliveInterval=" + std::to_string(c.keepalive.count()));
  opt("ServerAliveCountMax=3");
  opt("PreferredAuthentications=publickey");
  opt("ControlMaster=no");
  opt("ControlPath=none");
  opt("Compression=no");
  if (c.prefer_aes_gcm) {
    // OpenSSH's own ciphers, all AEAD or encrypt-then-MAC capable, in another order: AES-GCM first.
    opt("Ciphers=aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr");
  }
  opt("KexAlgorithms=" + std::string(k_openssh_kex));
  opt("LogLevel=ERROR");
  // The session offers the agent's keys first, then the files; without an agent, only the files.
  opt(c.agent_socket.empty() ? "IdentitiesOnly=yes" : "IdentitiesOnly=no");
  if (c.agent_socket.empty()) {
    opt("IdentityAgent=none");
  }
  for (const auto& key : c.identities) {
    std::string k;  // ssh expands % in an identity file's name: a literal one is written %%
    for (const char ch : key.string()) {
      k += ch == '%' ? std::string("%%") : std::string(1, ch);
    }
    a.emplace_back("-i");
    a.push_back(k);
  }
  a.emplace_back("--");
  a.push_back(c.target.host);
  a.push_back(remote_command);
  return a;
}

namespace {

class StartedBackup final : public StartedOpenSshBackup {
public:
  StartedBackup(std::unique_ptr<OpenSshBackupChannel> channel, std::string why_not)
      : m_channel(std::move(channel)), m_why_not(std::move(why_not))
  {
  }
  Result<OpenSshBackupOpen> open() override
  {
    if (!m_channel) {
      return OpenSshBackupOpen{nullptr, m_why_not.empty() ? std::string("ssh was already opened or ended") : m_why_not};
    }
    auto channel = std::move(m_channel);
    TRY_ASSIGN(auto why_not, channel->start());
    if (why_not) {
      return OpenSshBackupOpen{nullptr, std::move(*why_not)};
    }
    return OpenSshBackupOpen{std::move(channel), {}};
  }

private:
  std::unique_ptr<OpenSshBackupChannel> m_channel;  // null: not started (m_why_not), or opened
  std::string m_why_not;
};

}  // namespace

std::unique_ptr<StartedOpenSshBackup> start_openssh_backup_channel(const OpenSshCommand& c, const std::string& root,
                                                                   std::function<void()> keepalive)
{
  auto known_hosts = std::make_unique<TempKnownHosts>();
  if (auto written = known_hosts->write(verified_known_hosts_line(c)); !written) {
    return std::make_unique<StartedBackup>(nullptr, written.error().message);
  }
  LocalChildRequest req;
  req.argv = openssh_argv(c, known_hosts->path(), backup_agent_command(root));
  if (c.agent_socket.empty()) {
    req.unset_env.emplace_back("SSH_AUTH_SOCK");
  } else {
    req.set_env.emplace_back("SSH_AUTH_SOCK", c.agent_socket);
  }
  req.unset_env.emplace_back("SSH_ASKPASS");
  req.unset_env.emplace_back("SSH_ASKPASS_REQUIRE");
  auto child = LocalChild::start(req);
  if (!child) {
    return std::make_unique<StartedBackup>(nullptr, child.error().code == Errc::not_found ? std::string("no `ssh` on PATH")
                                                                                         : child.error().message);
  }
  return std::make_unique<StartedBackup>(
      std::make_unique<OpenSshBackupChannel>(std::move(*child), std::move(known_hosts), to_string(c.target), std::move(keepalive)), "");
}

}  // namespace gpurent
