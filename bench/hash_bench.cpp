// SPDX-License-Identifier: MIT
// SHA-256 throughput: gpurent's former implementation (portable + SHA-NI, sync/sha256.cpp at
// 9ee460c0, fetched from git by bench/hash_bench.sh) against OpenSSL's EVP, which gpurent uses now.
// 1 GiB in 1 MiB updates, as backup and push feed it; each round checks that both digests agree.
#include <openssl/evp.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "old_sha256.hpp"

int main()
{
  std::vector<unsigned char> buf(std::size_t{1} << 20);
  for (std::size_t i = 0; i < buf.size(); ++i) {
    buf[i] = static_cast<unsigned char>(i * 131 + 7);
  }
  constexpr int k_mib = 1024;
  std::printf("| round | former (SHA-NI: %s) MiB/s | OpenSSL EVP MiB/s | EVP / former | digests equal |\n|---:|---:|---:|---:|---|\n",
              gpurent::Sha256::hardware_available() ? "yes" : "no");
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  for (int round = 1; round <= 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    gpurent::Sha256 former;
    for (int i = 0; i < k_mib; ++i) {
      former.update(buf.data(), buf.size());
    }
    const auto d_former = former.finish();
    const auto t1 = std::chrono::steady_clock::now();
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, md, nullptr);
    for (int i = 0; i < k_mib; ++i) {
      EVP_DigestUpdate(ctx, buf.data(), buf.size());
    }
    unsigned char d_evp[32];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, d_evp, &len);
    EVP_MD_CTX_free(ctx);
    const auto t2 = std::chrono::steady_clock::now();
    const double a = k_mib / std::chrono::duration<double>(t1 - t0).count();
    const double b = k_mib / std::chrono::duration<double>(t2 - t1).count();
    bool equal = len == 32;
    for (unsigned i = 0; i < 32 && equal; ++i) {
      equal = d_evp[i] == d_former[i];
    }
    std::printf("| %d | %.0f | %.0f | %.2f | %s |\n", round, a, b, b / a, equal ? "yes" : "NO");
  }
  EVP_MD_free(md);
}
