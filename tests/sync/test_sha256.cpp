// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <random>

#include "sync/base64.hpp"
#include "sync/sha256.hpp"

using namespace gpurent;

namespace {
std::string hash_with(std::string_view data, std::size_t piece)
{
  Sha256 h;
  for (std::size_t i = 0; i < data.size(); i += piece) {
    h.update(data.substr(i, piece));
  }
  return h.finish_hex();
}
}  // namespace

TEST_CASE("Sha256: FIPS 180-4 / NIST example vectors", "[sync][sha256]")
{
  auto h = [&](std::string_view s) { return hash_with(s, s.empty() ? 1 : s.size()); };
  CHECK(h("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(h("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(h("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(h("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(h(std::string(1'000'000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("Sha256: any split into updates gives the same digest, moves keep the digest", "[sync][sha256]")
{
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string data(std::uniform_int_distribution<std::size_t>(0, 700)(rng), '\0');
    for (auto& c : data) {
      c = static_cast<char>(rng());
    }
    const std::string whole = hash_with(data, std::max<std::size_t>(data.size(), 1));
    const std::size_t piece = std::uniform_int_distribution<std::size_t>(1, 130)(rng);
    CHECK(hash_with(data, piece) == whole);
  }
  Sha256 first;
  first.update("ab");
  Sha256 moved(std::move(first));
  moved.update("c");
  Sha256 assigned;
  assigned.update("unrelated");
  assigned = std::move(moved);
  CHECK(assigned.finish_hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Sha256 reused;
  reused.update("abc");
  (void)reused.finish();
  reused.update("abc");
  CHECK(reused.finish_hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("base64: RFC 4648 vectors, round trips and rejects", "[sync][base64]")
{
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(base64_encode("fo", false) == "Zm8");
  CHECK(base64_decode("Zm9vYg==") == std::optional<std::string>("foob"));
  CHECK(base64_decode("Zm9vYg") == std::optional<std::string>("foob"));
  CHECK_FALSE(base64_decode("Zm9v!").has_value());
  CHECK_FALSE(base64_decode("Z").has_value());
  CHECK_FALSE(base64_decode("Zh==").has_value());  // non-zero padding bits
  CHECK_FALSE(base64_decode(" Zm9v").has_value());  // OpenSSL would skip the space
  CHECK_FALSE(base64_decode("Zm9v ").has_value());
  CHECK_FALSE(base64_decode("Zm=9v").has_value());
  CHECK_FALSE(base64_decode("Zm9vYm\nFy").has_value());
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    std::string data(std::uniform_int_distribution<std::size_t>(0, 64)(rng), '\0');
    for (auto& c : data) {
      c = static_cast<char>(rng());
    }
    CHECK(base64_decode(base64_encode(data)) == std::optional<std::string>(data));
    CHECK(base64_decode(base64_encode(data, false)) == std::optional<std::string>(data));
  }
}

TEST_CASE("ssh_fingerprint: matches ssh-keygen -l for an ed25519 key", "[sync][base64]")
{
  // ssh-keygen -lf on this key printed SHA256:enA9+4bEw2W6zr5uYdVfpPfPidriBvJvgdwZzBSYQeY
  const auto blob = base64_decode("AAAAC3NzaC1lZDI1NTE5AAAAIKNOayWHnovfocSRdFRbktIq6MECRWxjlHnNIpuL/d2Q");
  REQUIRE(blob.has_value());
  CHECK(ssh_fingerprint(*blob) == "SHA256:enA9+4bEw2W6zr5uYdVfpPfPidriBvJvgdwZzBSYQeY");
}

TEST_CASE("base64_decode: any text decodes only to bytes that encode back to it", "[sync][base64][property]")
{
  // Host keys come from provider APIs and the state store: the decoder is a parser of outside
  // input. Random text over the alphabet, padding, whitespace and other bytes: a result is always
  // the canonical decoding, and everything else is refused, never half-read.
  static constexpr std::string_view k_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= \n\t-_\x80\xff";
  std::mt19937 rng(2026);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 24)(rng), '\0');
    const bool alphabet_only = i % 2 == 0;
    for (auto& c : text) {
      c = k_chars[std::uniform_int_distribution<std::size_t>(0, alphabet_only ? 63 : k_chars.size() - 1)(rng)];
    }
    const auto decoded = base64_decode(text);
    if (decoded) {
      ++accepted;
      std::string_view unpadded = text;
      while (!unpadded.empty() && unpadded.back() == '=') {
        unpadded.remove_suffix(1);
      }
      CHECK(base64_encode(*decoded, false) == unpadded);
    }
  }
  CHECK(accepted > 1000);  // the property is not vacuous
}
