// SPDX-License-Identifier: MIT
#include "sync/crypto_engine.hpp"

#include <atomic>
#include <stdexcept>

// Weak: resolved where sync/crypto_openssl.cpp is linked in (the IO module, tests and fuzz
// targets, which name it with -Wl,--undefined), null in the executable.
extern "C" const gpurent::CryptoEngine* gpurent_crypto_engine() noexcept __attribute__((weak));

namespace gpurent {
namespace {

constinit std::atomic<CryptoEngineLoader> g_loader{nullptr};

const CryptoEngine* load() noexcept
{
  if (gpurent_crypto_engine != nullptr) {
    return gpurent_crypto_engine();
  }
  const CryptoEngineLoader loader = g_loader.load();
  return loader != nullptr ? loader() : nullptr;
}

}  // namespace

void set_crypto_engine_loader(CryptoEngineLoader loader) noexcept { g_loader.store(loader); }

const CryptoEngine& crypto_engine()
{
  static constinit std::atomic<const CryptoEngine*> s_engine{nullptr};
  const CryptoEngine* e = s_engine.load(std::memory_order_acquire);
  if (e == nullptr) {
    e = load();
    if (e == nullptr) {
      throw std::runtime_error("cannot hash: the IO module (libgpurent_io.so, which holds OpenSSL's SHA-256) did not load");
    }
    s_engine.store(e, std::memory_order_release);
  }
  return *e;
}

}  // namespace gpurent
