// SPDX-License-Identifier: MIT
#pragma once
// PURE: files that look like credentials, which `push` refuses to send whatever the ignore
// rules say (a rented server is someone else's machine). A file is a likely secret by its
// name (`.env*`, `*.pem`, `*.key`, `*.p12`, `*.pfx`, `id_rsa*`/`id_ed25519*`/`id_ecdsa*`/
// `id_dsa*` but not `*.pub`, `.netrc`, `.git-credentials`, `.pypirc`, `.pgpass`,
// `credentials*.json`, `client_secret*.json`), by where it sits (a cloud or SSH client's
// configuration directory: `.aws/`, `.azure/`, `.ssh/`, `.gnupg/`, `.kube/`, `.config/gcloud/`,
// `.config/gh/`, `.docker/config.json`, `huggingface/token`) or by its first bytes (a
// `-----BEGIN … PRIVATE KEY-----` line followed by a key's base64 body, a PuTTY key; source
// code that only names the marker is not a key). Templates meant to be committed
// (`.env.example`, `.env.sample`, `.env.template`) are not secrets.
// Rules and reasons: docs/run.md, "Likely secrets".
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

// How much of each file's beginning is read for the content rules.
inline constexpr std::size_t k_secret_head_bytes = 8192;

struct SecretFinding {
  std::string path;  // relative to the pushed directory, '/'-separated
  std::string why;   // "an SSH private key's name (id_rsa*)", "a PRIVATE KEY block in its first bytes", ...
};

// By name and place alone; `path` is relative to the pushed directory.
[[nodiscard]] std::optional<std::string> secret_by_name(std::string_view path);
// By the file's first bytes (at most k_secret_head_bytes of them).
[[nodiscard]] std::optional<std::string> secret_by_content(std::string_view head);

// An --allow-secret value as gpurent compares it: "./a//b/" -> "a/b". Empty when it names
// nothing below the pushed directory (absolute, or "..").
[[nodiscard]] std::string normalize_allowed_path(std::string_view value);
// Whether `path` is allowed by one of the normalized values: the path itself or a directory
// above it.
[[nodiscard]] bool secret_allowed(std::string_view path, const std::vector<std::string>& allowed);

}  // namespace gpurent
