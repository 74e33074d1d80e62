// SPDX-License-Identifier: MIT
// Host key verification for the libssh2 session (sync/ssh_detail.hpp): a fingerprint pinned in
// the state database, else the known_hosts files (a host with recorded keys, of any type, none
// of them the presented one, has changed its key, as OpenSSH says), else (only when asked)
// trust on first use, recorded in gpurent's own known_hosts.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "sync/base64.hpp"
#include "sync/remote_listing.hpp"
#include "sync/ssh_detail.hpp"

namespace gpurent::ssh_detail {
namespace {

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

std::string host_spec(const SshTarget& t)
{
  return t.port == 22 ? t.host : "[" + t.host + "]:" + std::to_string(t.port);
}

// The first recorded key of the host in a known_hosts file, when none matched.
struct RecordedKey {
  std::filesystem::path file;
  std::string fingerprint;  // "TYPE SHA256:..."
};

// The OpenSSH command that removes the host's lines from `file` (the default file: none named).
std::string forget_command(const SshTarget& t, const std::filesystem::path& file)
{
  std::string c = "ssh-keygen -R " + shell_quote(host_spec(t));
  if (!file.empty()) {
    c += " -f " + shell_quote(file.string());
  }
  return c;
}

}  // namespace

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
  m_openssh.host_key_type = key_type_name(blob);
  m_openssh.host_key_base64 = base64_encode(blob);
  const std::string who = to_string(m_target);
  if (!o.expected_host_key.empty()) {
    if (o.expected_host_key == m_fingerprint) {
      return {};
    }
    return fail(Errc::refused,
                "host key of " + who + " CHANGED: gpurent's state database has " + o.expected_host_key +
                    " pinned for this server, the server presents " + key_type_name(blob) + " " + m_fingerprint +
                    "; someone may be intercepting the connection, or the server was rebuilt. --accept-new-host-key never replaces a "
                    "pinned key: check the new fingerprint with the provider; if it is right, track the server again "
                    "(`gpurent attach --provider P --card C --host " + to_string(m_target) + " --name NEW --accept-new-host-key`, after `" +
                    forget_command(m_target, o.known_hosts) + "` removes its old known_hosts line)");
  }
  std::vector<std::filesystem::path> files;
  if (!o.known_hosts.empty()) {
    files.push_back(o.known_hosts);
  }
  files.insert(files.end(), o.extra_known_hosts.begin(), o.extra_known_hosts.end());
  // As OpenSSH: the host's recorded keys of every type count. A match in any file trusts the
  // server; a host with recorded keys none of which is the presented one has CHANGED its key,
  // whatever the presented key's type (a server switched from ed25519 to ECDSA is not "new").
  const int mask = LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW;  // key type 0: any type
  std::optional<RecordedKey> recorded;
  for (const auto& f : files) {
    LIBSSH2_KNOWNHOSTS* kh = libssh2_knownhost_init(m_session);
    if (kh == nullptr) {
      continue;
    }
    libssh2_knownhost_readfile(kh, f.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);  // a missing file knows no host
    libssh2_knownhost* found = nullptr;
    const int rc = libssh2_knownhost_checkp(kh, m_target.host.c_str(), m_target.port, key, len, mask, &found);
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH && !recorded) {
      RecordedKey r{f, "(unreadable)"};
      if (found != nullptr && found->key != nullptr) {
        if (const auto old_blob = base64_decode(found->key)) {
          r.fingerprint = key_type_name(*old_blob) + " " + ssh_fingerprint(*old_blob);
        }
      }
      recorded = std::move(r);
    }
    libssh2_knownhost_free(kh);
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
      return {};
    }
  }
  if (recorded) {
    return fail(Errc::refused, "host key of " + who + " CHANGED: " + recorded->file.string() + " has " + recorded->fingerprint +
                                   ", the server presents " + key_type_name(blob) + " " + m_fingerprint +
                                   "; someone may be intercepting the connection, or the server was rebuilt. "
                                   "--accept-new-host-key does not replace a recorded key: check the new fingerprint with the "
                                   "provider; if it is right, remove the old line with `" +
                                   forget_command(m_target, recorded->file) + "` and connect again with --accept-new-host-key");
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

}  // namespace gpurent::ssh_detail
