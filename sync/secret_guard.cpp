// SPDX-License-Identifier: MIT
#include "sync/secret_guard.hpp"

#include <algorithm>
#include <array>

namespace gpurent {
namespace {

std::string lower(std::string_view s)
{
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
  return out;
}

std::vector<std::string_view> components(std::string_view path)
{
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto part = path.substr(0, slash);
    if (!part.empty()) {
      out.push_back(part);
    }
    if (slash == std::string_view::npos) {
      break;
    }
    path.remove_prefix(slash + 1);
  }
  return out;
}

bool ends_with_any(std::string_view s, std::initializer_list<std::string_view> suffixes)
{
  return std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view x) { return s.ends_with(x); });
}

// Whether the name starts with `stem` and ends with `ext` (`credentials*.json`).
bool stem_ext(std::string_view name, std::string_view stem, std::string_view ext)
{
  return name.size() >= stem.size() + ext.size() && name.starts_with(stem) && name.ends_with(ext);
}

std::optional<std::string> by_directory(const std::vector<std::string>& parts)
{
  // parts are lower-cased; the last one is the file's name.
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const auto& d = parts[i];
    if (d == ".aws" || d == ".azure" || d == ".ssh" || d == ".gnupg" || d == ".kube") {
      return "inside " + d + "/ (a cloud, SSH or GPG client's configuration and keys)";
    }
    if (d == ".config" && i + 2 < parts.size() && (parts[i + 1] == "gcloud" || parts[i + 1] == "gh")) {
      return "inside .config/" + parts[i + 1] + "/ (a cloud CLI's credentials)";
    }
    if (d == ".docker" && i + 2 == parts.size() && parts.back() == "config.json") {
      return "Docker's config.json (registry credentials)";
    }
    if ((d == "huggingface" || d == ".huggingface") && i + 2 == parts.size() && (parts.back() == "token" || parts.back() == "stored_tokens")) {
      return "a Hugging Face access token file";
    }
  }
  return std::nullopt;
}

bool base64_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

// What follows a BEGIN line in a real key: within a few header lines (an encrypted key's
// Proc-Type and DEK-Info), a line of base64 (64 characters in PEM; 40 is plenty). A source file
// that only names the marker ("-----BEGIN PRIVATE KEY-----\nabc\n" in a redaction test, a regular
// expression) has none.
bool has_key_body(std::string_view after)
{
  after = after.substr(0, std::min<std::size_t>(after.size(), 400));
  std::size_t run = 0;
  for (const char c : after) {
    run = base64_char(c) ? run + 1 : 0;
    if (run >= 40) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> secret_by_name(std::string_view path)
{
  std::vector<std::string> parts;
  for (const auto c : components(path)) {
    parts.push_back(lower(c));
  }
  if (parts.empty()) {
    return std::nullopt;
  }
  if (auto d = by_directory(parts)) {
    return d;
  }
  const std::string& name = parts.back();
  if (name.starts_with(".env")) {
    if (ends_with_any(name, {".example", ".sample", ".template"})) {
      return std::nullopt;
    }
    return "an environment file's name (.env*): usually API keys and passwords";
  }
  if (ends_with_any(name, {".pem", ".key", ".p12", ".pfx"})) {
    return "a key or certificate store's name (*" + name.substr(name.rfind('.')) + ")";
  }
  for (const std::string_view k : {"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"}) {
    if (name.starts_with(k) && !name.ends_with(".pub")) {
      return "an SSH private key's name (" + std::string(k) + "*)";
    }
  }
  if (name == ".netrc" || name == "_netrc" || name == ".git-credentials" || name == ".pypirc" || name == ".pgpass") {
    return "a credentials file's name (" + name + ")";
  }
  if (stem_ext(name, "credentials", ".json") || stem_ext(name, "client_secret", ".json")) {
    return "a cloud credentials file's name (" + std::string(name.starts_with("cred") ? "credentials" : "client_secret") + "*.json)";
  }
  return std::nullopt;
}

std::optional<std::string> secret_by_content(std::string_view head)
{
  head = head.substr(0, std::min(head.size(), k_secret_head_bytes));
  constexpr std::string_view begin = "-----BEGIN ";
  for (auto at = head.find(begin); at != std::string_view::npos; at = head.find(begin, at + 1)) {
    // "-----BEGIN [A-Z0-9 ]* PRIVATE KEY[ BLOCK]-----"
    const auto label_start = at + begin.size();
    auto end = label_start;
    while (end < head.size() && end - label_start < 64 &&
           ((head[end] >= 'A' && head[end] <= 'Z') || (head[end] >= '0' && head[end] <= '9') || head[end] == ' ')) {
      ++end;
    }
    const auto label = head.substr(label_start, end - label_start);
    if (head.substr(end, 5) == "-----" && label.find("PRIVATE KEY") != std::string_view::npos && has_key_body(head.substr(end + 5))) {
      return "a private key in its first bytes (-----BEGIN " + std::string(label) + "-----)";
    }
  }
  if (head.starts_with("PuTTY-User-Key-File-")) {
    return "a PuTTY private key";
  }
  return std::nullopt;
}

std::string normalize_allowed_path(std::string_view value)
{
  if (value.starts_with('/') || value.find('\0') != std::string_view::npos) {
    return {};
  }
  std::string out;
  for (const auto part : components(value)) {
    if (part == ".") {
      continue;
    }
    if (part == "..") {
      return {};
    }
    out += out.empty() ? "" : "/";
    out += part;
  }
  return out;
}

bool secret_allowed(std::string_view path, const std::vector<std::string>& allowed)
{
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) {
    return !a.empty() && (path == a || (path.size() > a.size() && path.starts_with(a) && path[a.size()] == '/'));
  });
}

}  // namespace gpurent
