// SPDX-License-Identifier: MIT
#include "sync/sha256.hpp"

#include <new>
#include <utility>

#include "sync/crypto_engine.hpp"

namespace gpurent {

Sha256::Sha256() : m_ctx(crypto_engine().sha256_new())
{
  if (m_ctx == nullptr) {
    throw std::bad_alloc();
  }
}

Sha256::Sha256(Sha256&& other) noexcept : m_ctx(std::exchange(other.m_ctx, nullptr)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept
{
  if (this != &other) {
    if (m_ctx != nullptr) {
      crypto_engine().sha256_free(m_ctx);
    }
    m_ctx = std::exchange(other.m_ctx, nullptr);
  }
  return *this;
}

Sha256::~Sha256()
{
  if (m_ctx != nullptr) {
    crypto_engine().sha256_free(m_ctx);
  }
}

void Sha256::update(const void* data, std::size_t size) noexcept
{
  if (size > 0) {
    crypto_engine().sha256_update(m_ctx, data, size);
  }
}

std::array<std::uint8_t, 32> Sha256::finish() noexcept
{
  std::array<std::uint8_t, 32> out{};
  crypto_engine().sha256_finish(m_ctx, out.data());
  return out;
}

std::string Sha256::finish_hex()
{
  const auto d = finish();
  return to_hex(d.data(), d.size());
}

std::string to_hex(const std::uint8_t* data, std::size_t size)
{
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(k_digits[data[i] >> 4]);
    out.push_back(k_digits[data[i] & 0x0f]);
  }
  return out;
}

std::string sha256_hex(std::string_view data)
{
  Sha256 h;
  h.update(data);
  return h.finish_hex();
}

}  // namespace gpurent
