// SPDX-License-Identifier: MIT
// Host key verification for the libssh2 session (sync/ssh_detail.hpp): a fingerprint pinned in
// the state database, else the known_hosts files, else (only when asked) trust on first use,
// recorded in gpurent's own known_hosts.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "sync/base64.hpp"
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

}  // namespace gpurent::ssh_detail
