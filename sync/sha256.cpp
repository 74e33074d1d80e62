// SPDX-License-Identifier: MIT
// SHA-256 from FIPS 180-4 §4.1.2 (functions), §4.2.2 (constants), §5.3.3 (initial hash),
// §6.2 (padding and computation). The hardware path uses the SHA-NI round and message
// schedule instructions (SHA256RNDS2, SHA256MSG1, SHA256MSG2) on the same schedule.
#include "sync/sha256.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define GPURENT_SHA_NI 1
#endif

namespace gpurent {
namespace {

constexpr std::array<std::uint32_t, 64> k_round = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr std::array<std::uint32_t, 8> k_initial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept
{
  return (x >> n) | (x << (32 - n));
}

void compress_portable(std::uint32_t* state, const std::uint8_t* p, std::size_t count) noexcept
{
  for (std::size_t b = 0; b < count; ++b, p += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t t = 0; t < 16; ++t) {
      w[t] = (std::uint32_t{p[4 * t]} << 24) | (std::uint32_t{p[4 * t + 1]} << 16) | (std::uint32_t{p[4 * t + 2]} << 8) |
             std::uint32_t{p[4 * t + 3]};
    }
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], bb = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t big_s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const std::uint32_t ch = (e & f) ^ (~e & g);
      const std::uint32_t t1 = h + big_s1 + ch + k_round[t] + w[t];
      const std::uint32_t big_s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const std::uint32_t maj = (a & bb) ^ (a & c) ^ (bb & c);
      const std::uint32_t t2 = big_s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = bb;
      bb = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += bb;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#ifdef GPURENT_SHA_NI
bool cpu_has_sha_ni() noexcept
{
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) {
    return false;
  }
  const bool ssse3 = (c & (1U << 9)) != 0;
  const bool sse41 = (c & (1U << 19)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) {
    return false;
  }
  return ssse3 && sse41 && (b & (1U << 29)) != 0;
}

// State lanes are kept as ABEF / CDGH, the layout SHA256RNDS2 works on.
__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(std::uint32_t* state, const std::uint8_t* p,
                                                                   std::size_t count) noexcept
{
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

  for (std::size_t b = 0; b < count; ++b, p += 64) {
    const __m128i abef_save = abef;
    const __m128i cdgh_save = cdgh;
    __m128i m[4] = {abef_save, abef_save, abef_save, abef_save};  // NOLINT: an intrinsic array
    for (std::size_t g = 0; g < 16; ++g) {
      __m128i& cur = m[g % 4];
      if (g < 4) {
        cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), byte_swap);
      } else {
        // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time.
        const __m128i x1 = m[(g + 1) % 4];
        const __m128i x2 = m[(g + 2) % 4];
        const __m128i x3 = m[(g + 3) % 4];
        const __m128i partial = _mm_add_epi32(_mm_sha256msg1_epu32(cur, x1), _mm_alignr_epi8(x3, x2, 4));
        cur = _mm_sha256msg2_epu32(partial, x3);
      }
      __m128i wk = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(k_round.data() + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      wk = _mm_shuffle_epi32(wk, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
    }
    abef = _mm_add_epi32(abef, abef_save);
    cdgh = _mm_add_epi32(cdgh, cdgh_save);
  }

  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  hgfe = _mm_alignr_epi8(dchg, feba, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), dcba);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), hgfe);
}
#endif

// Asked on first use, not at start-up: CPUID traps to the hypervisor on a virtual machine, and
// commands that never hash should not pay for it.
bool has_hardware() noexcept
{
#ifdef GPURENT_SHA_NI
  static const bool has = cpu_has_sha_ni();
  return has;
#else
  return false;
#endif
}

}  // namespace

Sha256::Sha256() noexcept : m_state(k_initial) {}

bool Sha256::hardware_available() noexcept
{
  return has_hardware();
}

void Sha256::compress(const std::uint8_t* blocks, std::size_t count) noexcept
{
#ifdef GPURENT_SHA_NI
  if (!m_portable && has_hardware()) {
    compress_sha_ni(m_state.data(), blocks, count);
    return;
  }
#endif
  compress_portable(m_state.data(), blocks, count);
}

void Sha256::update(const void* data, std::size_t size) noexcept
{
  const auto* p = static_cast<const std::uint8_t*>(data);
  m_length += size;
  if (m_buffered > 0) {
    const std::size_t take = std::min(size, 64 - m_buffered);
    std::memcpy(m_buffer.data() + m_buffered, p, take);
    m_buffered += take;
    p += take;
    size -= take;
    if (m_buffered < 64) {
      return;
    }
    compress(m_buffer.data(), 1);
    m_buffered = 0;
  }
  if (size >= 64) {
    compress(p, size / 64);
    p += size / 64 * 64;
    size %= 64;
  }
  if (size > 0) {
    std::memcpy(m_buffer.data(), p, size);
    m_buffered = size;
  }
}

std::array<std::uint8_t, 32> Sha256::finish() noexcept
{
  const std::uint64_t bits = m_length * 8;
  // Padding (§5.1.1): 0x80, zeros to 56 mod 64, then the length in bits, big-endian.
  std::array<std::uint8_t, 72> pad{};
  pad[0] = 0x80;
  const std::size_t zeros = (m_buffered < 56) ? (56 - m_buffered) : (120 - m_buffered);
  for (std::size_t i = 0; i < 8; ++i) {
    pad[zeros + i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  }
  update(pad.data(), zeros + 8);
  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<std::uint8_t>(m_state[i] >> 24);
    out[4 * i + 1] = static_cast<std::uint8_t>(m_state[i] >> 16);
    out[4 * i + 2] = static_cast<std::uint8_t>(m_state[i] >> 8);
    out[4 * i + 3] = static_cast<std::uint8_t>(m_state[i]);
  }
  m_state = k_initial;
  m_buffered = 0;
  m_length = 0;
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
