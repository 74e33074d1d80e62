// SPDX-License-Identifier: MIT
#pragma once
// PURE: standard base64 (RFC 4648 §4), as OpenSSH uses it for keys and fingerprints.
#include <optional>
#include <string>
#include <string_view>

namespace gpurent {

[[nodiscard]] std::string base64_encode(std::string_view bytes, bool pad = true);
// Accepts padded or unpadded input; nullopt on any other character or a bad length.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);
// "SHA256:<unpadded base64 of sha256(key blob)>", as `ssh-keygen -lf` prints it.
[[nodiscard]] std::string ssh_fingerprint(std::string_view key_blob);

}  // namespace gpurent
