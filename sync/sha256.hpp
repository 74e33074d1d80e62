// SPDX-License-Identifier: MIT
#pragma once
// SHA-256 (FIPS 180-4) by OpenSSL's EVP (sync/crypto_engine.hpp), which uses the CPU's SHA
// extensions. Streaming: update() any number of times, then finish().
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpurent {

class Sha256 {
public:
  // Throws std::bad_alloc, or std::runtime_error when the IO module cannot be loaded.
  Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256();

  void update(const void* data, std::size_t size) noexcept;
  void update(std::string_view s) noexcept { update(s.data(), s.size()); }
  // The digest; the object starts a new one afterwards.
  [[nodiscard]] std::array<std::uint8_t, 32> finish() noexcept;
  [[nodiscard]] std::string finish_hex();

private:
  void* m_ctx = nullptr;
};

[[nodiscard]] std::string to_hex(const std::uint8_t* data, std::size_t size);
[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace gpurent
