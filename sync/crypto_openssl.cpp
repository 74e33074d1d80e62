// SPDX-License-Identifier: MIT
// The CryptoEngine (sync/crypto_engine.hpp) over OpenSSL's libcrypto: EVP digests and EVP's
// base64 blocks. Part of the IO module; the only file that includes OpenSSL's headers.
#include <openssl/evp.h>

#include "sync/crypto_engine.hpp"

namespace {

// Fetched once: an explicit fetch saves the implicit one that EVP_DigestInit_ex would do per file.
const EVP_MD* sha256_md() noexcept
{
  static EVP_MD* const k_md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return k_md != nullptr ? k_md : EVP_sha256();
}

void* sha256_new() noexcept
{
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx != nullptr && EVP_DigestInit_ex(ctx, sha256_md(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    ctx = nullptr;
  }
  return ctx;
}

void sha256_free(void* ctx) noexcept { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx)); }

void sha256_update(void* ctx, const void* data, std::size_t size) noexcept
{
  (void)EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx), data, size);
}

void sha256_finish(void* ctx, unsigned char* digest) noexcept
{
  auto* c = static_cast<EVP_MD_CTX*>(ctx);
  unsigned int length = 0;
  (void)EVP_DigestFinal_ex(c, digest, &length);
  (void)EVP_DigestInit_ex(c, sha256_md(), nullptr);
}

// EVP_EncodeBlock and EVP_DecodeBlock take int lengths: larger inputs go in whole pieces.
constexpr std::size_t k_piece = 3 * 4 * (1U << 24);  // a multiple of 3 and of 4

std::size_t base64_encode(const unsigned char* data, std::size_t size, char* out) noexcept
{
  std::size_t written = 0;
  out[0] = '\0';
  for (std::size_t at = 0; at < size; at += k_piece) {
    const std::size_t n = size - at < k_piece ? size - at : k_piece;
    written += static_cast<std::size_t>(
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out + written), data + at, static_cast<int>(n)));
  }
  return written;
}

long base64_decode(const char* text, std::size_t size, unsigned char* out) noexcept
{
  long written = 0;
  for (std::size_t at = 0; at < size; at += k_piece) {
    const std::size_t n = size - at < k_piece ? size - at : k_piece;
    const int got = EVP_DecodeBlock(out + written, reinterpret_cast<const unsigned char*>(text + at), static_cast<int>(n));
    if (got < 0) {
      return -1;
    }
    written += got;
  }
  return written;
}

constexpr gpurent::CryptoEngine k_engine{sha256_new, sha256_free, sha256_update, sha256_finish, base64_encode, base64_decode};

}  // namespace

// Exported from the IO module; sync/crypto_engine.cpp refers to it weakly.
extern "C" __attribute__((visibility("default"))) const void* gpurent_crypto_engine() noexcept;
extern "C" __attribute__((visibility("default"))) const void* gpurent_crypto_engine() noexcept
{
  return &k_engine;
}
