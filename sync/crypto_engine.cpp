// SPDX-License-Identifier: MIT
#include "sync/crypto_engine.hpp"

#include <atomic>

#include "sync/io_tables.hpp"

// Weak: resolved where sync/crypto_openssl.cpp is linked in (the IO module, tests and fuzz
// targets, which name it with -Wl,--undefined), null in the executable.
extern "C" const void* gpurent_crypto_engine() noexcept __attribute__((weak));

namespace gpurent {

const CryptoEngine& crypto_engine()
{
  static constinit std::atomic<const CryptoEngine*> s_engine{nullptr};
  const CryptoEngine* e = s_engine.load(std::memory_order_acquire);
  if (e == nullptr) {
    e = static_cast<const CryptoEngine*>(load_io_table("gpurent_crypto_engine", gpurent_crypto_engine, "hash (OpenSSL's SHA-256)"));
    s_engine.store(e, std::memory_order_release);
  }
  return *e;
}

}  // namespace gpurent
