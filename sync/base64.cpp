// SPDX-License-Identifier: MIT
// base64 through OpenSSL's EVP_EncodeBlock / EVP_DecodeBlock (sync/crypto_engine.hpp); this file
// adds only what OpenSSH's use needs around them: unpadded text, and strictness (EVP_DecodeBlock
// skips surrounding whitespace and ignores the padding bits, so a decoding is accepted only when it
// encodes back to the same text).
#include "sync/base64.hpp"

#include "sync/crypto_engine.hpp"
#include "sync/sha256.hpp"

namespace gpurent {

std::string base64_encode(std::string_view bytes, bool pad)
{
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const std::size_t n = crypto_engine().base64_encode(reinterpret_cast<const unsigned char*>(bytes.data()),
                                                      bytes.size(), out.data());
  out.resize(n);
  while (!pad && !out.empty() && out.back() == '=') {
    out.pop_back();
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text)
{
  while (!text.empty() && text.back() == '=') {
    text.remove_suffix(1);
  }
  if (text.size() % 4 == 1) {
    return std::nullopt;
  }
  const std::size_t pad = (4 - text.size() % 4) % 4;
  std::string padded(text);
  padded.append(pad, '=');
  std::string out(padded.size() / 4 * 3, '\0');
  const long n = crypto_engine().base64_decode(padded.data(), padded.size(),
                                               reinterpret_cast<unsigned char*>(out.data()));
  if (n < 0 || static_cast<std::size_t>(n) != out.size()) {
    return std::nullopt;
  }
  out.resize(out.size() - pad);
  if (base64_encode(out, false) != text) {
    return std::nullopt;
  }
  return out;
}

std::string ssh_fingerprint(std::string_view key_blob)
{
  Sha256 h;
  h.update(key_blob);
  const auto d = h.finish();
  return "SHA256:" + base64_encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()), false);
}

}  // namespace gpurent
