// SPDX-License-Identifier: MIT
#include "sync/base64.hpp"

#include <array>

#include "sync/sha256.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int digit_value(char c) noexcept
{
  const auto pos = k_alphabet.find(c);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

}  // namespace

std::string base64_encode(std::string_view bytes, bool pad)
{
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(k_alphabet[(v >> 18) & 63]);
    out.push_back(k_alphabet[(v >> 12) & 63]);
    out.push_back(k_alphabet[(v >> 6) & 63]);
    out.push_back(k_alphabet[v & 63]);
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) {
      v |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    }
    out.push_back(k_alphabet[(v >> 18) & 63]);
    out.push_back(k_alphabet[(v >> 12) & 63]);
    if (rest == 2) {
      out.push_back(k_alphabet[(v >> 6) & 63]);
    }
    if (pad) {
      out.append(rest == 1 ? "==" : "=");
    }
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
  std::string out;
  out.reserve(text.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const int d = digit_value(c);
    if (d < 0) {
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<std::uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero in canonical encodings.
  if ((acc & ((1U << bits) - 1U)) != 0) {
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
