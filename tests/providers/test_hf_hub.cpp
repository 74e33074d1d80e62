// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/http_client.hpp"
#include "providers/hf_hub.hpp"
#include "tests/fakes/hub_double.hpp"

extern "C" void gpurent_make_http_client(std::unique_ptr<gpurent::HttpClient>* out);

namespace fs = std::filesystem;
using gpurent::Errc;
using gpurent::HttpClient;
using gpurent::HttpRequest;
using gpurent::HttpResponse;
using gpurent::ResolveOptions;
using gpurent::resolve_model;
using gpurent::test::HubDouble;
using gpurent::test::TempDir;

namespace {

// Exactly the figures of tests/e2e/hf_double.py's acme/tiny-llama.
constexpr std::uint64_t k_tiny_derived = 32'768'000ULL + 23'601'152ULL + 512ULL;
constexpr std::uint64_t k_tiny_exact = k_tiny_derived + 4096;

std::string tiny_config()
{
  return R"({"model_type":"llama","hidden_size":512,"intermediate_size":1408,"num_hidden_layers":8,)"
         R"("num_attention_heads":8,"num_key_value_heads":4,"max_position_embeddings":2048,)"
         R"("vocab_size":32000,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
}

std::string index_with_total(std::uint64_t bytes)
{
  return R"({"metadata":{"total_size":)" + std::to_string(bytes) + R"(},"weight_map":{}})";
}

// Canned responses by URL, and the requests it saw.
class FakeHttp final : public HttpClient {
public:
  std::map<std::string, HttpResponse> routes;
  std::vector<HttpRequest> seen;
  [[nodiscard]] gpurent::Result<HttpResponse> send(const HttpRequest& r) override
  {
    seen.push_back(r);
    const auto it = routes.find(r.url);
    if (it == routes.end()) {
      return HttpResponse{404, {}, "{}"};
    }
    return it->second;
  }
};

ResolveOptions options_in(const fs::path& dir)
{
  ResolveOptions o;
  o.endpoint = "http://hub.test";
  o.cache_dir = dir / "cache" / "gpurent" / "hf";
  return o;
}

void write_file(const fs::path& p, const std::string& text)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("resolve_model: catalogue models never ask for the HTTP client", "[providers][hf_hub]")
{
  TempDir tmp;
  int asked = 0;
  const gpurent::HttpProvider http = [&asked]() -> gpurent::Result<HttpClient*> {
    ++asked;
    return gpurent::fail(Errc::internal, "must not be called");
  };
  for (const char* spec : {"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"}) {
    const auto r = resolve_model(spec, options_in(tmp.path()), http);
    REQUIRE(r);
    CHECK(r->source_kind == "catalog");
  }
  CHECK(asked == 0);
}

TEST_CASE("resolve_model: a local config.json, a directory holding one, bad paths", "[providers][hf_hub]")
{
  TempDir tmp;
  const fs::path dir = tmp.path() / "my-model";
  write_file(dir / "config.json", tiny_config());
  const auto by_file = resolve_model((dir / "config.json").string(), options_in(tmp.path()), nullptr);
  REQUIRE(by_file);
  CHECK(by_file->source_kind == "file");
  CHECK(by_file->arch.name == "my-model");
  CHECK(by_file->arch.params == k_tiny_derived);
  CHECK(by_file->arch.source == (dir / "config.json").string());
  const auto by_dir = resolve_model(dir.string(), options_in(tmp.path()), nullptr);
  REQUIRE(by_dir);
  CHECK(by_dir->arch.params == k_tiny_derived);

  const auto missing = resolve_model((tmp.path() / "nope.json").string(), options_in(tmp.path()), nullptr);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::not_found);

  // A "1 GB" file is refused from its size, without reading it.
  const fs::path huge = tmp.path() / "weights.json";
  write_file(huge, "{");
  fs::resize_file(huge, 1ULL << 30);
  const auto big = resolve_model(huge.string(), options_in(tmp.path()), nullptr);
  REQUIRE_FALSE(big);
  CHECK(big.error().code == Errc::invalid_input);
  CHECK_THAT(big.error().message, Catch::Contains("16 MiB"));

  write_file(tmp.path() / "broken.json", R"({"model_type":"llama",)");
  const auto broken = resolve_model((tmp.path() / "broken.json").string(), options_in(tmp.path()), nullptr);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().code == Errc::invalid_input);
}

TEST_CASE("resolve_model: hub fetch with token, exact count from the index, then the cache", "[providers][hf_hub]")
{
  TempDir tmp;
  FakeHttp http;
  http.routes["http://hub.test/acme/tiny-llama/resolve/main/config.json"] = HttpResponse{200, {}, tiny_config()};
  http.routes["http://hub.test/acme/tiny-llama/resolve/main/model.safetensors.index.json"] =
      HttpResponse{200, {}, index_with_total(k_tiny_exact * 2)};
  ResolveOptions o = options_in(tmp.path());
  o.token = "hf_secret";
  const auto r = resolve_model("acme/tiny-llama", o, &http);
  REQUIRE(r);
  CHECK(r->source_kind == "hub");
  CHECK_FALSE(r->from_cache);
  CHECK(r->arch.name == "acme/tiny-llama");
  CHECK(r->arch.params == k_tiny_exact);
  CHECK(r->arch.source == "http://hub.test/acme/tiny-llama/resolve/main/config.json");
  // config.json, the file list (a 404 here: no headers to read), then the index.
  REQUIRE(http.seen.size() == 3);
  CHECK(http.seen[1].url == "http://hub.test/api/models/acme/tiny-llama?blobs=true");
  CHECK(http.seen[0].method == "GET");
  bool bearer = false;
  for (const auto& [k, v] : http.seen[0].headers) {
    bearer = bearer || (k == "Authorization" && v == "Bearer hf_secret");
  }
  CHECK(bearer);
  CHECK(fs::exists(o.cache_dir / "acme" / "tiny-llama" / "config.json"));

  // Offline, the cache answers with the same exact count and no request.
  o.offline = true;
  const auto cached = resolve_model("ACME/tiny-llama", o, nullptr);
  REQUIRE(cached);
  CHECK(cached->from_cache);
  CHECK(cached->arch.params == k_tiny_exact);
  CHECK(http.seen.size() == 3);
}

TEST_CASE("resolve_model: offline and not cached is a not_found that says so", "[providers][hf_hub]")
{
  TempDir tmp;
  ResolveOptions o = options_in(tmp.path());
  o.offline = true;
  const auto r = resolve_model("acme/never-seen", o, nullptr);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::not_found);
  CHECK_THAT(r.error().message, Catch::Contains("--offline"));
  CHECK_THAT(r.error().message, Catch::Contains("cache"));
}

TEST_CASE("resolve_model: hub status codes map to clear errors", "[providers][hf_hub]")
{
  TempDir tmp;
  FakeHttp http;
  const std::string url = "http://hub.test/acme/m/resolve/main/config.json";
  SECTION("401 gated")
  {
    http.routes[url] = HttpResponse{401, {}, "{}"};
    const auto r = resolve_model("acme/m", options_in(tmp.path()), &http);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::unauthorized);
    CHECK_THAT(r.error().message, Catch::Contains("gated") && Catch::Contains("HF_TOKEN"));
  }
  SECTION("404")
  {
    const auto r = resolve_model("acme/m", options_in(tmp.path()), &http);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::not_found);
  }
  SECTION("429 with Retry-After")
  {
    http.routes[url] = HttpResponse{429, {{"retry-after", "7"}}, ""};
    const auto r = resolve_model("acme/m", options_in(tmp.path()), &http);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    REQUIRE(r.error().retry_after);
    CHECK(r.error().retry_after->count() == 7);
  }
  SECTION("500")
  {
    http.routes[url] = HttpResponse{503, {}, ""};
    const auto r = resolve_model("acme/m", options_in(tmp.path()), &http);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::unavailable);
  }
  SECTION("an index far from the architecture is not trusted")
  {
    http.routes[url] = HttpResponse{200, {}, tiny_config()};
    http.routes["http://hub.test/acme/m/resolve/main/model.safetensors.index.json"] =
        HttpResponse{200, {}, index_with_total(k_tiny_derived)};  // e.g. 8-bit weights
    const auto r = resolve_model("acme/m", options_in(tmp.path()), &http);
    REQUIRE(r);
    CHECK(r->arch.params == k_tiny_derived);
    REQUIRE(r->warnings.size() == 1);
    CHECK_THAT(r->warnings[0], Catch::Contains("derived"));
  }
  SECTION("not an id")
  {
    for (const char* bad : {"acme/../etc", "a/b/c", "no spaces/x y", "unknown-model"}) {
      INFO(bad);
      const auto r = resolve_model(bad, options_in(tmp.path()), &http);
      REQUIRE_FALSE(r);
      CHECK(r.error().code == Errc::not_found);
    }
    CHECK(http.seen.empty());
  }
}

TEST_CASE("params_from_safetensors_index: total_size over the dtype", "[providers][hf_hub]")
{
  CHECK(*gpurent::params_from_safetensors_index(index_with_total(16'060'522'496ULL), "bfloat16") == 8'030'261'248ULL);
  CHECK_FALSE(gpurent::params_from_safetensors_index("[]", "bfloat16"));
  CHECK_FALSE(gpurent::params_from_safetensors_index(R"({"metadata":{}})", "bfloat16"));
  CHECK_FALSE(gpurent::params_from_safetensors_index(index_with_total(100), "int3"));
}

TEST_CASE("resolve_model: the real curl client against a local Hub double", "[providers][hf_hub][curl]")
{
  TempDir tmp;
  HubDouble hub(tmp.path());
  std::unique_ptr<HttpClient> curl;
  gpurent_make_http_client(&curl);
  REQUIRE(curl);
  ResolveOptions o = options_in(tmp.path());
  o.endpoint = hub.endpoint();
  o.timeout = std::chrono::milliseconds(10'000);

  const auto tiny = resolve_model("acme/tiny-llama", o, curl.get());
  REQUIRE(tiny);
  CHECK(tiny->arch.params == k_tiny_exact);
  CHECK(tiny->arch.layers == 8);
  CHECK(fs::exists(o.cache_dir / "acme" / "tiny-llama" / "config.json"));

  const auto redirected = resolve_model("acme/redirected", o, curl.get());
  REQUIRE(redirected);
  CHECK(redirected->arch.params == k_tiny_exact);

  const auto no_index = resolve_model("acme/no-index", o, curl.get());
  REQUIRE(no_index);
  CHECK(no_index->arch.params == k_tiny_derived);
  CHECK_FALSE(no_index->warnings.empty());

  const auto gated = resolve_model("acme/gated-model", o, curl.get());
  REQUIRE_FALSE(gated);
  CHECK(gated.error().code == Errc::unauthorized);
  CHECK_THAT(gated.error().message, Catch::Contains("HF_TOKEN"));
  o.token = "hf_test_token";
  const auto allowed = resolve_model("acme/gated-model", o, curl.get());
  REQUIRE(allowed);
  CHECK_THAT(hub.log(), Catch::Contains("GET /acme/gated-model/resolve/main/config.json auth=yes"));

  const auto missing = resolve_model("acme/missing", o, curl.get());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::not_found);

  const auto huge = resolve_model("acme/huge", o, curl.get());
  REQUIRE_FALSE(huge);
  CHECK(huge.error().code == Errc::invalid_input);

  // Nothing listens on the endpoint any more: a transport error, not a crash.
  o.endpoint = "http://127.0.0.1:1";
  o.cache_dir.clear();
  const auto down = resolve_model("acme/tiny-llama", o, curl.get());
  REQUIRE_FALSE(down);
  CHECK(down.error().code == Errc::unavailable);
}

TEST_CASE("curl client: a request that never left this machine says so", "[providers][curl]")
{
  std::unique_ptr<gpurent::HttpClient> curl;
  gpurent_make_http_client(&curl);
  REQUIRE(curl);
  // A port nobody listens on: the connection is refused before a byte of the request is sent,
  // so a create call there cannot have created anything (cli/up_command.cpp).
  gpurent::HttpRequest req;
  req.method = "POST";
  req.url = "http://127.0.0.1:1/pods";
  req.timeout = std::chrono::milliseconds(5'000);
  const auto r = curl->send(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == gpurent::Errc::unavailable);
  CHECK(r.error().not_sent);
}
