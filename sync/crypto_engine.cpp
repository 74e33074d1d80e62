// SPDX-License-Identifier: MIT
#include "sync/crypto_engine.hpp"

#include "sync/io_tables.hpp"

// Weak: resolved where sync/crypto_openssl.cpp is linked in (the IO module, tests and fuzz
// targets, which name it with -Wl,--undefined), null in the executable.
extern "C" const void* gpurent_crypto_engine() noexcept __attribute__((weak));

namespace gpurent {

const CryptoEngine& crypto_engine()
{
  static constinit std::atomic<const CryptoEngine*> s_engine{nullptr};
  return cached_io_table(s_engine, "gpurent_crypto_engine", gpurent_crypto_engine, "hash (OpenSSL's SHA-256)");
}

}  // namespace gpurent
