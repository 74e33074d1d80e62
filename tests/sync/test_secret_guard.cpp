// SPDX-License-Identifier: MIT
// The likely-secret rules of `push` (sync/secret_guard.hpp): names, places, first bytes, the
// templates that are not secrets, --allow-secret values; and the walk that applies them
// (sync/local_tree.hpp), whatever the ignore rules say. Random inputs never crash the rules.
#include <catch2/catch.hpp>

#include <random>
#include <set>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/git_output.hpp"
#include "sync/local_tree.hpp"
#include "sync/secret_guard.hpp"

using namespace gpurent;

namespace {
// The first line of a key's base64 body (64 characters, as PEM writes them).
constexpr const char* k_body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj";
}  // namespace

TEST_CASE("secret_by_name: credentials by name and by the directory they sit in", "[sync][push][secrets]")
{
  for (const char* p : {".env", ".env.local", ".env.production", "app/.env", ".envrc", "server.pem", "certs/tls.KEY", "a/b/store.p12",
                        "x.pfx", "id_rsa", "home/id_ed25519", "id_ecdsa", "id_dsa", "id_rsa.old", ".netrc", "_netrc",
                        ".git-credentials", ".pypirc", ".pgpass", "credentials.json", "credentials-prod.json", "gcp/Credentials.JSON",
                        "client_secret_1234.json", ".aws/credentials", ".aws/config", "home/.azure/accessTokens.json",
                        ".ssh/known_hosts", ".gnupg/pubring.kbx", ".kube/config", ".config/gcloud/application_default_credentials.json",
                        ".config/gh/hosts.yml", ".docker/config.json", ".cache/huggingface/token", ".huggingface/token"}) {
    INFO(p);
    CHECK(secret_by_name(p).has_value());
  }
  for (const char* p : {"env.py", "environment.yml", ".env.example", ".env.sample", "config/.env.template", "id_rsa.pub",
                        "id_ed25519.pub", "keys.py", "monkey.txt", "pem.md", "credentials.py", "my_credentials.json", "docker/config.json",
                        ".config/other/x", "gcloud/x", "README.md", "", "/", "netrc"}) {
    INFO(p);
    CHECK_FALSE(secret_by_name(p).has_value());
  }
  CHECK_THAT(*secret_by_name("deploy/id_rsa"), Catch::Contains("SSH private key"));
  CHECK_THAT(*secret_by_name(".aws/credentials"), Catch::Contains(".aws/"));
}

TEST_CASE("secret_by_content: a PRIVATE KEY block or a PuTTY key in the first bytes", "[sync][push][secrets]")
{
  for (const char* label : {"PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
                            "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"}) {
    std::string pem = std::string("-----BEGIN ") + label + "-----\n";
    pem.append(k_body);
    pem.append("\n-----END ").append(label).append("-----\n");
    INFO(label);
    CHECK(secret_by_content(pem).has_value());
    CHECK(secret_by_content("Bag Attributes\n    localKeyID: 01\n" + pem).has_value());
  }
  // A service-account JSON carries its key as a JSON string; an encrypted PEM has headers first.
  std::string json = R"({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n)";
  json.append(k_body).append(R"(\n-----END PRIVATE KEY-----\n"})");
  CHECK(secret_by_content(json).has_value());
  std::string encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF0123456789ABCDEF\n\n";
  encrypted.append(k_body);
  CHECK(secret_by_content(encrypted).has_value());
  // Code that only names the marker is not a key (a redaction test, a regular expression).
  CHECK_FALSE(secret_by_content("let input = \"-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----\\n\";\n"
                                "assert_eq!(redact(input), \"[REDACTED]\");\n")
                  .has_value());
  CHECK_FALSE(secret_by_content(R"(re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END"))").has_value());
  CHECK(secret_by_content("PuTTY-User-Key-File-3: ssh-ed25519\n").has_value());
  for (const char* text : {"-----BEGIN CERTIFICATE-----\nMIID\n", "-----BEGIN PUBLIC KEY-----\n", "-----BEGIN PRIVATE KEY", "print(1)\n",
                           "", "-----BEGIN private key-----", "-----BEGIN " /* cut */}) {
    INFO(text);
    CHECK_FALSE(secret_by_content(text).has_value());
  }
  // Only the first k_secret_head_bytes count.
  std::string late(k_secret_head_bytes, 'x');
  late.append("-----BEGIN PRIVATE KEY-----");
  CHECK_FALSE(secret_by_content(late).has_value());
}

TEST_CASE("allow-secret values: normalized, relative, a file or a directory", "[sync][push][secrets]")
{
  CHECK(normalize_allowed_path("./a//b/") == "a/b");
  CHECK(normalize_allowed_path(".env") == ".env");
  CHECK(normalize_allowed_path("/etc/passwd").empty());
  CHECK(normalize_allowed_path("../x").empty());
  CHECK(normalize_allowed_path("a/../../x").empty());
  CHECK(normalize_allowed_path(".").empty());
  CHECK(secret_allowed("keys/id_rsa", {"keys"}));
  CHECK(secret_allowed("keys/id_rsa", {"keys/id_rsa"}));
  CHECK_FALSE(secret_allowed("keys2/id_rsa", {"keys"}));
  CHECK_FALSE(secret_allowed("keys/id_rsa", {""}));
  CHECK_FALSE(secret_allowed("id_rsa", {"keys/id_rsa"}));

  std::mt19937 rng(7);
  const std::string alphabet = std::string("./a-_~\\\0\n\xff*", 11);  // with its NUL
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const auto n = rng() % 24;
    for (std::size_t k = 0; k < n; ++k) {
      s += alphabet[rng() % alphabet.size()];
    }
    const auto norm = normalize_allowed_path(s);
    CHECK((norm.empty() || safe_relative_path(norm)));  // never absolute, never "..", "." or an empty component
    (void)secret_by_name(s);
    (void)secret_by_content(s);
  }
}

TEST_CASE("the walk finds likely secrets whatever the ignore rules say, and allow-secret lets one through", "[sync][push][secrets]")
{
  const test::TempDir tmp("gpurent-secrets-walk");
  const auto root = tmp.path() / "tree";
  gpurent::testing::write_file(root / "train.py", "print(1)\n");
  gpurent::testing::write_file(root / ".env", "WANDB_API_KEY=x\n");
  gpurent::testing::write_file(root / "deploy" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n");  // by its name
  gpurent::testing::write_file(root / "deploy" / "id_rsa.pub", "ssh-ed25519 AAAA\n");
  gpurent::testing::write_file(root / "conf" / "prod.yaml", std::string("key: |\n  -----BEGIN EC PRIVATE KEY-----\n  ") + k_body + "\n");
  gpurent::testing::write_file(root / ".env.example", "WANDB_API_KEY=\n");
  gpurent::testing::write_file(root / "ignored" / "x.pem", "");
  gpurent::testing::write_file(root / ".gitignore", "ignored/\n");

  const auto found = [](const LocalTree& t) {
    std::set<std::string> out;
    for (const auto& f : t.secrets) {
      out.insert(f.path);
    }
    return out;
  };
  const auto t = walk_local_tree(root, WalkOptions{});
  REQUIRE(t.has_value());
  CHECK(found(*t) == std::set<std::string>{".env", "conf/prod.yaml", "deploy/id_rsa"});

  WalkOptions allow;
  allow.allow_secrets = {"./deploy/", ".env", "nothing/here"};
  const auto a = walk_local_tree(root, allow);
  REQUIRE(a.has_value());
  CHECK(found(*a) == std::set<std::string>{"conf/prod.yaml"});
  REQUIRE(a->allowed_secrets.size() == 2);
  REQUIRE(a->warnings.size() == 1);
  CHECK_THAT(a->warnings[0], Catch::Contains("--allow-secret nothing/here"));

  // A tracked secret in a repository is still one.
  const std::map<std::string, std::string> env{{"HOME", tmp.path().string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  ::setenv("HOME", tmp.path().c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (tmp.path() / "config").c_str(), 1);
  REQUIRE(gpurent::testing::run_sh("git init -q . && git add -A && git add -f ignored/x.pem", {}, root, env).status == 0);
  const auto g = walk_local_tree(root, WalkOptions{});
  REQUIRE(g.has_value());
  CHECK(found(*g) == std::set<std::string>{".env", "conf/prod.yaml", "deploy/id_rsa", "ignored/x.pem"});
  // Nothing inside .git is read as a secret, even with --with-git.
  WalkOptions with_git;
  with_git.with_git = true;
  CHECK(found(*walk_local_tree(root, with_git)) == found(*g));
}
