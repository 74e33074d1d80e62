// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <random>

#include "cli/ssh_options.hpp"

using namespace gpurent;

TEST_CASE("parse_ssh_target: forms users type", "[cli][ssh_options]")
{
  CHECK(*parse_ssh_target("root@1.2.3.4") == SshTarget{"root", "1.2.3.4", 22});
  CHECK(*parse_ssh_target("ubuntu@gpu-1.example.com:2222") == SshTarget{"ubuntu", "gpu-1.example.com", 2222});
  CHECK(*parse_ssh_target("host") == SshTarget{"root", "host", 22});
  CHECK(*parse_ssh_target("me@[::1]:22022") == SshTarget{"me", "::1", 22022});
  CHECK(*parse_ssh_target("[fe80::1%eth0]") == SshTarget{"root", "fe80::1%eth0", 22});
  for (const char* bad : {"", "@host", "user@", "user@host:", "user@host:0", "user@host:65536", "user@host:22x", "a@b@c",
                          "user@::1", "user@[::1", "user@[host]:22", "user@ho st", "user@-oProxyCommand=x", "-l@host", "u@h/x",
                          "user@[::1]x"}) {
    INFO(bad);
    CHECK_FALSE(parse_ssh_target(bad).has_value());
    if (!parse_ssh_target(bad)) {
      CHECK(parse_ssh_target(bad).error().code == Errc::usage);
    }
  }
}

TEST_CASE("parse_ssh_target: property: to_string and parse are inverse", "[cli][ssh_options]")
{
  std::mt19937 rng(17);
  const std::string user_chars = "abcxyz019_.-";
  const std::string host_chars = "abcdefghz0189.-";
  for (int i = 0; i < 500; ++i) {
    SshTarget t;
    t.user = "u";
    for (int k = 0; k < static_cast<int>(rng() % 8); ++k) {
      t.user.push_back(user_chars[rng() % user_chars.size()]);
    }
    if (rng() % 4 == 0) {
      t.host = "2001:db8::" + std::to_string(rng() % 9999);
    } else {
      t.host = "h";
      for (int k = 0; k < static_cast<int>(rng() % 12); ++k) {
        t.host.push_back(host_chars[rng() % host_chars.size()]);
      }
    }
    t.port = static_cast<std::uint16_t>(1 + rng() % 65535);
    const auto back = parse_ssh_target(to_string(t));
    INFO(to_string(t));
    REQUIRE(back.has_value());
    CHECK(*back == t);
  }
}

TEST_CASE("host_key_fingerprint_of: fingerprints and OpenSSH key lines", "[cli][ssh_options]")
{
  CHECK(host_key_fingerprint_of("SHA256:abc") == std::optional<std::string>("SHA256:abc"));
  CHECK(host_key_fingerprint_of("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKNOayWHnovfocSRdFRbktIq6MECRWxjlHnNIpuL/d2Q t") ==
        std::optional<std::string>("SHA256:enA9+4bEw2W6zr5uYdVfpPfPidriBvJvgdwZzBSYQeY"));
  CHECK_FALSE(host_key_fingerprint_of("garbage").has_value());
  CHECK_FALSE(host_key_fingerprint_of("ssh-ed25519 !!!").has_value());
}
