// SPDX-License-Identifier: MIT
#include "sync/backup_target.hpp"

#include <charconv>

namespace gpurent {
namespace {


bool name_char(char c) noexcept
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// A user or host name ssh takes as one word: no option (leading '-'), nothing a shell or ssh
// reads specially.
bool plain_word(std::string_view w) noexcept
{
  if (w.empty() || w.size() > 253 || w.front() == '-') {
    return false;
  }
  for (const char c : w) {
    if (!name_char(c)) {
      return false;
    }
  }
  return true;
}

bool ipv6_word(std::string_view w) noexcept
{
  if (w.size() < 2 || w.size() > 45 || w.find(':') == std::string_view::npos) {
    return false;
  }
  for (const char c : w) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.')) {
      return false;
    }
  }
  return true;
}

bool clean_path(std::string_view p) noexcept
{
  if (p.empty() || p.size() > 4096) {
    return false;
  }
  for (const char c : p) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return true;
}

Result<BackupTarget> bad(std::string_view text, std::string_view why)
{
  return fail(Errc::usage, "--backup-to " + std::string(text) + ": " + std::string(why) +
                               "; write it as USER@HOST:PATH or ssh://USER@HOST[:PORT]/PATH");
}

}  // namespace

std::string BackupTarget::ssh_destination() const
{
  const bool v6 = host.find(':') != std::string::npos;
  if (port == 0) {
    return user + "@" + host;
  }
  return "ssh://" + user + "@" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

SshTarget BackupTarget::ssh_target() const { return SshTarget{user, host, port == 0 ? std::uint16_t{22} : port}; }

Result<BackupTarget> parse_backup_target(std::string_view text)
{
  BackupTarget t;
  std::string_view authority;
  std::string_view path;
  const bool url = text.starts_with("ssh://");
  if (url) {
    const std::string_view rest = text.substr(6);
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos) {
      return bad(text, "no path after the host");
    }
    authority = rest.substr(0, slash);
    path = rest.substr(slash);  // "/abs" or "/~/rel"
    if (path.starts_with("/~")) {
      path.remove_prefix(1);
    }
  } else {
    const auto at = text.find('@');
    if (at == std::string_view::npos) {
      return bad(text, "no USER@");
    }
    std::size_t colon = std::string_view::npos;
    if (at + 1 < text.size() && text[at + 1] == '[') {
      const auto close = text.find(']', at);
      colon = close == std::string_view::npos ? close : text.find(':', close);
    } else {
      colon = text.find(':', at);
    }
    if (colon == std::string_view::npos) {
      return bad(text, "no :PATH");
    }
    authority = text.substr(0, colon);
    path = text.substr(colon + 1);
  }
  const auto at = authority.find('@');
  if (at == std::string_view::npos) {
    return bad(text, "no USER@");
  }
  t.user = std::string(authority.substr(0, at));
  std::string_view host = authority.substr(at + 1);
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    if (close == std::string_view::npos) {
      return bad(text, "an unclosed [ in the host");
    }
    const std::string_view after = host.substr(close + 1);
    t.host = std::string(host.substr(1, close - 1));
    if (!ipv6_word(t.host)) {
      return bad(text, "not an IPv6 address in [ ]");
    }
    host = after;  // "" or ":PORT"
  } else {
    const auto colon = host.find(':');
    t.host = std::string(host.substr(0, colon));
    host = colon == std::string_view::npos ? std::string_view{} : host.substr(colon);
    if (!plain_word(t.host)) {
      return bad(text, "the host must be a name or an address (letters, digits, '.', '-', '_', not starting with '-')");
    }
  }
  if (!host.empty()) {
    if (!url || host.front() != ':') {
      return bad(text, "a port is written ssh://USER@HOST:PORT/PATH");
    }
    unsigned v = 0;
    const std::string_view digits = host.substr(1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc{} || end != digits.data() + digits.size() || v == 0 || v > 65535) {
      return bad(text, "the port must be 1-65535");
    }
    t.port = static_cast<std::uint16_t>(v);
  }
  if (!plain_word(t.user)) {
    return bad(text, "the user must be letters, digits, '.', '-', '_' (not starting with '-')");
  }
  if (!clean_path(path)) {
    return bad(text, "an empty path or one with control characters");
  }
  // "~" and "~/x" as the remote shell would expand them: the login directory and x under it.
  if (path == "~" || path == "~/") {
    path = ".";
  } else if (path.starts_with("~/")) {
    path.remove_prefix(2);
  }
  t.path = std::string(path);
  return t;
}

std::string autostop_backup_stem(std::string_view instance_id, std::int64_t armed_at)
{
  std::string id(instance_id.substr(0, 64));
  for (char& c : id) {
    if (!name_char(c)) {
      c = '_';
    }
  }
  return "gpurent-autostop-" + (id.empty() ? std::string("server") : id) + "-" + std::to_string(armed_at) + "-";
}

}  // namespace gpurent
