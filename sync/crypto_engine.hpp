// SPDX-License-Identifier: MIT
#pragma once
// SHA-256 and base64 come from OpenSSL's libcrypto (EVP: it uses the CPU's SHA extensions, and it is
// audited). libcrypto is linked only into the IO module (sync/crypto_openssl.cpp in
// libgpurent_io.so), so that commands which never transfer do not load it: `plan` starts without
// it. The module exports one table of C functions; sync/sha256.hpp and sync/base64.hpp call
// through it.
//
// Where the table comes from: sync/io_tables.hpp (a binary that links sync/crypto_openssl.cpp uses
// its own table; the executable loads the module on first use).
#include <cstddef>

namespace gpurent {

struct CryptoEngine {
  // A SHA-256 context; nullptr when out of memory.
  void* (*sha256_new)() noexcept;
  void (*sha256_free)(void* ctx) noexcept;
  void (*sha256_update)(void* ctx, const void* data, std::size_t size) noexcept;
  // Writes the 32-byte digest; the context then starts a new digest.
  void (*sha256_finish)(void* ctx, unsigned char* digest) noexcept;
  // Padded base64 of `size` bytes into `out` (room for 4 * ((size + 2) / 3) + 1); its length.
  std::size_t (*base64_encode)(const unsigned char* data, std::size_t size, char* out) noexcept;
  // Decodes padded base64 (`size` a multiple of 4) into `out` (room for size / 4 * 3); the bytes
  // written including the zero bytes that padding stands for, or -1 for a character that is not base64.
  long (*base64_decode)(const char* text, std::size_t size, unsigned char* out) noexcept;
};

// The table, loaded on first use. Throws std::runtime_error when the IO module cannot be loaded
// (the commands that hash have loaded it already to reach the server, so this is not expected).
[[nodiscard]] const CryptoEngine& crypto_engine();

}  // namespace gpurent
