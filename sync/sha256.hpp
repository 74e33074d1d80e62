// SPDX-License-Identifier: MIT
#pragma once
// SHA-256 (FIPS 180-4), written for gpurent: a portable implementation plus one using the x86
// SHA extensions when the CPU has them (chosen at run time). Streaming: update() any number of
// times, then finish().
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpurent {

class Sha256 {
public:
  Sha256() noexcept;
  void update(const void* data, std::size_t size) noexcept;
  void update(std::string_view s) noexcept { update(s.data(), s.size()); }
  // The digest; the object is reset afterwards.
  [[nodiscard]] std::array<std::uint8_t, 32> finish() noexcept;
  [[nodiscard]] std::string finish_hex();

  // Forces the portable code path (tests compare both paths).
  void use_portable(bool on) noexcept { m_portable = on; }
  [[nodiscard]] static bool hardware_available() noexcept;

private:
  void compress(const std::uint8_t* blocks, std::size_t count) noexcept;

  std::array<std::uint32_t, 8> m_state{};
  std::array<std::uint8_t, 64> m_buffer{};
  std::size_t m_buffered = 0;
  std::uint64_t m_length = 0;  // bytes
  bool m_portable = false;
};

[[nodiscard]] std::string to_hex(const std::uint8_t* data, std::size_t size);
[[nodiscard]] std::string sha256_hex(std::string_view data);

}  // namespace gpurent
