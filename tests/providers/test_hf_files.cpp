// SPDX-License-Identifier: MIT
// Checkpoints sized from their files' headers, read with range requests from the Hub double (its
// 302 to the CDN, gated repositories), from the cache offline, and from local directories.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "common/http_client.hpp"
#include "providers/hf_files.hpp"
#include "providers/hf_hub.hpp"
#include "providers/repo_weights.hpp"
#include "sizing/precision.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"
#include "tests/fakes/hub_double.hpp"

extern "C" void gpurent_make_http_client(std::unique_ptr<gpurent::HttpClient>* out);

namespace fs = std::filesystem;
using gpurent::Errc;
using gpurent::ResolveOptions;
using gpurent::resolve_model;
using gpurent::WeightFormat;
namespace t = gpurent::test;

namespace {

std::string fixture(const std::string& name)
{
  std::ifstream in(std::string(GPURENT_TEST_DATA) + "/models/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count(const std::string& haystack, const std::string& needle)
{
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// Every type llama.cpp writes for a plain (non-K-mix) file type: 2-D weights in `type`, norms F32.
gpurent::GgufHeader llama_uniform(const std::string& type, std::uint32_t file_type)
{
  auto tensors = t::llama_q4_k_m_tensors(t::k_llama31_8b, 0);
  for (auto& x : tensors) {
    if (x.dims.size() == 2) {
      x.type = type;
    }
  }
  auto kv = t::llama_gguf_metadata(t::k_llama31_8b, 0, 0, "Meta Llama 3.1 8B Instruct");
  kv[2].value = t::gv_u32(file_type);
  return t::gguf_header(kv, tensors);
}

std::uint64_t tensor_bytes(const gpurent::GgufHeader& h)
{
  std::uint64_t n = 0;
  for (const auto& x : h.tensors) {
    n += x.bytes;
  }
  return n;
}

struct Repos {
  fs::path root;
  std::uint64_t q6_bytes = 0;
};

// The repositories the double serves, under <root>/<org>/<name>.
Repos build_repos(const fs::path& root)
{
  Repos r{root};
  const auto gptq = t::llama31_8b_gptq_int4();
  t::write_text(root / "acme/llama-gptq/config.json", gptq.config);
  t::write_text(root / "acme/llama-gptq/README.md", "# GPTQ\n");
  t::write_sharded(root / "acme/llama-gptq", gptq.tensors, 2);

  const auto awq = t::qwen25_7b_awq();
  t::write_text(root / "acme/qwen-awq/config.json", awq.config);
  t::write_safetensors(root / "acme/qwen-awq/model.safetensors", awq.tensors);
  t::write_text(root / "acme/gated-awq/config.json", awq.config);
  t::write_safetensors(root / "acme/gated-awq/model.safetensors", awq.tensors);
  t::write_text(root / "acme/gated-awq/.gated", "");

  const auto fp8 = t::qwen3_8b_fp8();
  t::write_text(root / "acme/qwen3-fp8/config.json", fp8.config);
  t::write_sharded(root / "acme/qwen3-fp8", fp8.tensors, 2);

  t::write_text(root / "acme/gpt-oss/config.json", fixture("gpt-oss-20b.json"));
  t::write_sharded(root / "acme/gpt-oss", t::gpt_oss_20b().tensors, 3);

  const auto bnb = t::llama3_8b_bnb_nf4();
  t::write_text(root / "acme/llama-bnb/config.json", bnb.config);
  t::write_safetensors(root / "acme/llama-bnb/model.safetensors", bnb.tensors);

  // Mistral's repositories also hold consolidated.safetensors, a second copy for mistral-inference.
  const auto vision = t::mistral_small_31_vision();
  t::write_text(root / "acme/mistral3/config.json", vision.config);
  t::write_sharded(root / "acme/mistral3", vision.tensors, 3);
  t::write_safetensors(root / "acme/mistral3/consolidated.safetensors", vision.tensors);

  // A LoRA adapter repository: adapter_config.json + adapter_model.safetensors, no config.json.
  std::vector<t::StTensor> lora;
  for (int i = 0; i < 28; ++i) {
    const std::string p = "base_model.model.model.layers." + std::to_string(i) + ".self_attn.";
    lora.push_back({p + "q_proj.lora_A.weight", "F32", {8, 3072}});
    lora.push_back({p + "q_proj.lora_B.weight", "F32", {3072, 8}});
  }
  t::write_safetensors(root / "acme/llama-lora/adapter_model.safetensors", lora);
  t::write_text(root / "acme/llama-lora/adapter_config.json",
                R"({"base_model_name_or_path":"meta-llama/Llama-3.2-3B","peft_type":"LORA","r":8,"target_modules":["q_proj"]})");
  t::write_text(root / "acme/llama-lora/README.md", "# a LoRA\n");

  // A GGUF repository: three types, one of them split in two parts, and a vision projector.
  const fs::path g = root / "acme/llama-gguf";
  t::write_gguf(g / "Llama-3.1-8B-Instruct-Q4_K_M.gguf", t::llama31_8b_q4_k_m(true));
  t::write_gguf(g / "Llama-3.1-8B-Instruct-Q8_0.gguf", llama_uniform("Q8_0", 7));
  auto q6 = llama_uniform("Q6_K", 18);
  r.q6_bytes = tensor_bytes(q6);
  const std::size_t half = q6.tensors.size() / 2;
  auto first_kv = q6.kv;
  first_kv.push_back({"split.no", t::gv_u32(0)});
  first_kv.push_back({"split.count", t::gv_u32(2)});
  std::vector<t::GgTensor> a, b;
  const auto names = t::llama_q4_k_m_tensors(t::k_llama31_8b, 0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    t::GgTensor x = names[i];
    if (x.dims.size() == 2) {
      x.type = "Q6_K";
    }
    (i < half ? a : b).push_back(x);
  }
  t::write_gguf(g / "Q6_K/Llama-3.1-8B-Instruct-Q6_K-00001-of-00002.gguf", t::gguf_header(first_kv, a));
  t::write_gguf(g / "Q6_K/Llama-3.1-8B-Instruct-Q6_K-00002-of-00002.gguf",
                t::gguf_header({{"split.no", t::gv_u32(1)}, {"split.count", t::gv_u32(2)}}, b));
  t::write_gguf(g / "mmproj-model-f16.gguf", t::gguf_header({{"general.architecture", t::gv_str("clip")}},
                                                           {{"v.patch", "F16", {1024, 1024}}}));
  // Safetensors and a GGUF file side by side: the engine decides which is sized.
  t::write_text(root / "acme/both/config.json", gptq.config);
  t::write_sharded(root / "acme/both", gptq.tensors, 2);
  t::write_gguf(root / "acme/both/llama-3.1-8b-instruct-q4_k_m.gguf", t::llama31_8b_q4_k_m(false));
  // A hostile file: its header claims 2^40 bytes.
  t::write_text(root / "acme/hostile/config.json", gptq.config);
  t::write_text(root / "acme/hostile/model.safetensors", std::string("\0\0\0\0\0\1\0\0{}", 10));
  return r;
}

std::unique_ptr<gpurent::HttpClient> make_curl()
{
  std::unique_ptr<gpurent::HttpClient> c;
  gpurent_make_http_client(&c);
  REQUIRE(c);
  return c;
}

// The repositories served by the Hub double, the real curl client, options pointing at them.
struct HubFixture {
  t::TempDir tmp;
  Repos repos = build_repos(tmp.path() / "repos");
  t::HubDouble hub{tmp.path(), repos.root};
  std::unique_ptr<gpurent::HttpClient> curl = make_curl();
  [[nodiscard]] ResolveOptions options() const
  {
    ResolveOptions o;
    o.endpoint = hub.endpoint();
    o.cache_dir = tmp.path() / "cache";
    o.timeout = std::chrono::milliseconds(20'000);
    return o;
  }
};

bool warned(const gpurent::ResolvedModel& r, const std::string& text)
{
  for (const auto& w : r.warnings) {
    if (w.find(text) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("hub weights: real layouts through range requests and the CDN redirect, exact bytes",
          "[providers][hf_files][curl]")
{
  HubFixture f;
  auto& hub = f.hub;
  auto& curl = f.curl;
  ResolveOptions o = f.options();
  o.token = "hf_test_token";

  struct Case {
    const char* id;
    t::Layout layout;
    WeightFormat format;
  };
  const Case cases[] = {
      {"acme/llama-gptq", t::llama31_8b_gptq_int4(), WeightFormat::gptq},
      {"acme/qwen-awq", t::qwen25_7b_awq(), WeightFormat::awq},
      {"acme/qwen3-fp8", t::qwen3_8b_fp8(), WeightFormat::fp8},
      {"acme/gpt-oss", t::gpt_oss_20b(), WeightFormat::mxfp4},
      {"acme/llama-bnb", t::llama3_8b_bnb_nf4(), WeightFormat::nf4},
      {"acme/mistral3", t::mistral_small_31_vision(), WeightFormat::bf16},
  };
  for (const auto& c : cases) {
    INFO(c.id);
    const auto r = resolve_model(c.id, o, curl.get());
    REQUIRE(r);
    for (const auto& w : r->warnings) {
      UNSCOPED_INFO(w);
    }
    CHECK(r->source_kind == "hub");
    REQUIRE(r->arch.checkpoint);
    const auto& ck = *r->arch.checkpoint;
    CHECK(ck.total_bytes() == t::st_total(c.layout.tensors));  // consolidated.safetensors not counted twice
    CHECK(r->arch.params == c.layout.params);
    CHECK(ck.format == c.format);
    CHECK(ck.outside_text_params == c.layout.outside_text_params);
    CHECK(ck.file_bytes > ck.total_bytes());
  }
  const std::string log = hub.log();
  // The token went to the Hub, never to the CDN after the redirect.
  CHECK(count(log, "CDN GET") >= 12);
  CHECK(count(log, "auth=yes range") == 0);
  CHECK_THAT(log, Catch::Contains("GET /api/models/acme/llama-gptq?blobs=true auth=yes"));
  CHECK_THAT(log, Catch::Contains("GET /acme/llama-gptq/resolve/main/model-00001-of-00002.safetensors auth=yes"));
  CHECK_THAT(log, Catch::Contains("range=bytes=0-102399"));
  // Mistral's second copy of the weights was never read.
  CHECK(count(log, "consolidated") == 0);
  const auto mistral = resolve_model("acme/mistral3", o, curl.get());
  REQUIRE(mistral);
  REQUIRE_FALSE(mistral->arch.checkpoint->notes.empty());
  CHECK_THAT(mistral->arch.checkpoint->notes.front(), Catch::Contains("consolidated.safetensors"));

  // Offline, everything comes from the cache: same bytes, no request.
  const std::size_t before = count(hub.log(), "\n");
  ResolveOptions off = o;
  off.offline = true;
  for (const auto& c : cases) {
    INFO(c.id);
    const auto r = resolve_model(c.id, off, nullptr);
    REQUIRE(r);
    CHECK(r->from_cache);
    REQUIRE(r->arch.checkpoint);
    CHECK(r->arch.checkpoint->total_bytes() == t::st_total(c.layout.tensors));
  }
  CHECK(count(hub.log(), "\n") == before);

  // A header that lies about its length is refused before anything is allocated: a warning, the
  // count from the architecture.
  const auto hostile = resolve_model("acme/hostile", o, curl.get());
  REQUIRE(hostile);
  CHECK_FALSE(hostile->arch.checkpoint);
  CHECK(warned(*hostile, "over the format's limit"));
}

TEST_CASE("hub weights: a GGUF repository, its types and split files, --gguf", "[providers][hf_files][curl]")
{
  HubFixture f;
  auto& hub = f.hub;
  auto& curl = f.curl;
  ResolveOptions o = f.options();

  // No config.json: the GGUF header is the architecture; several types: Q4_K_M, said so.
  const auto q4 = resolve_model("acme/llama-gguf", o, curl.get());
  INFO((q4 ? std::string() : q4.error().message));
  REQUIRE(q4);
  REQUIRE(q4->arch.checkpoint);
  CHECK(q4->arch.checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  CHECK(q4->arch.checkpoint->format == WeightFormat::gguf_q4_k_m);
  CHECK(q4->arch.layers == 32);
  CHECK(q4->arch.vocab == 128256);  // from the tokenizer: a 1.6 MB header, read in several ranges
  CHECK(q4->arch.name == "acme/llama-gguf");
  REQUIRE_FALSE(q4->warnings.empty());
  CHECK_THAT(q4->warnings.front(), Catch::Contains("Q8_0") && Catch::Contains("--weights"));
  CHECK(count(hub.log(), "Q4_K_M.gguf auth=no range") >= 2);
  CHECK(count(hub.log(), "mmproj") == 0);

  ResolveOptions q6o = o;
  q6o.cache_dir.clear();
  q6o.gguf_type = "Q6_K";
  const auto q6 = resolve_model("acme/llama-gguf", q6o, curl.get());
  REQUIRE(q6);
  CHECK(q6->arch.checkpoint->total_bytes() == f.repos.q6_bytes);
  CHECK(q6->arch.checkpoint->files.size() == 2);
  CHECK(q6->arch.checkpoint->format == WeightFormat::gguf_q6_k);

  q6o.gguf_type = "Q2_K";
  const auto none = resolve_model("acme/llama-gguf", q6o, curl.get());
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::not_found);
  CHECK_THAT(none.error().message, Catch::Contains("Q4_K_M") && Catch::Contains("Q8_0") && Catch::Contains("Q6_K"));

  // A repository with both: safetensors by default, its GGUF file for llama.cpp/ollama (the
  // config's architecture, the file's weights).
  ResolveOptions both = o;
  both.cache_dir.clear();
  const auto st = resolve_model("acme/both", both, curl.get());
  REQUIRE(st);
  CHECK(st->arch.checkpoint->format == WeightFormat::gptq);
  both.prefer_gguf = true;
  const auto gg = resolve_model("acme/both", both, curl.get());
  REQUIRE(gg);
  CHECK(gg->arch.checkpoint->format == WeightFormat::gguf_q4_k_m);
  CHECK(gg->arch.checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  CHECK(gg->arch.family == "llama");
  CHECK(gg->warnings.empty());  // same layers and width: no mismatch

  // --gguf URL, no MODEL: everything from that file; --gguf with a repository's file name.
  ResolveOptions url = o;
  url.token = "hf_test_token";
  url.gguf = hub.endpoint() + "/acme/llama-gguf/resolve/main/Llama-3.1-8B-Instruct-Q8_0.gguf";
  const auto q8 = resolve_model("", url, curl.get());
  REQUIRE(q8);
  CHECK(q8->arch.checkpoint->format == WeightFormat::gguf_q8_0);
  CHECK(q8->arch.checkpoint->total_bytes() == tensor_bytes(llama_uniform("Q8_0", 7)));
  CHECK(q8->arch.name == "Meta Llama 3.1 8B Instruct");
  CHECK_THAT(hub.log(), Catch::Contains("Q8_0.gguf auth=yes"));
  CHECK(count(hub.log(), "auth=yes range") == 0);
  ResolveOptions named = o;
  named.gguf = "Llama-3.1-8B-Instruct-Q8_0.gguf";
  const auto in_repo = resolve_model("acme/llama-gguf", named, curl.get());
  REQUIRE(in_repo);
  CHECK(in_repo->arch.checkpoint->total_bytes() == q8->arch.checkpoint->total_bytes());
  // With a catalogue MODEL: its architecture, the file's weights.
  const auto catalogue = resolve_model("llama-3.1-8b", url, curl.get());
  REQUIRE(catalogue);
  CHECK(catalogue->arch.name == "llama-3.1-8b");
  CHECK(catalogue->arch.checkpoint->total_bytes() == q8->arch.checkpoint->total_bytes());
}

TEST_CASE("hub weights: a LoRA adapter repository resolves to its base with the adapter attached", "[providers][hf_files][curl]")
{
  HubFixture f;
  ResolveOptions o = f.options();
  const auto a = resolve_model("acme/llama-lora", o, f.curl.get());
  INFO((a ? std::string() : a.error().message));
  REQUIRE(a);
  CHECK(a->source_kind == "hub");
  CHECK(a->arch.name == "acme/llama-lora");
  CHECK(a->arch.layers == 28);  // the base's architecture (meta-llama/Llama-3.2-3B)
  REQUIRE(a->arch.adapter);
  CHECK(a->arch.adapter->rank == 8);
  CHECK(a->arch.adapter->weights.params == 28ULL * 2 * 8 * 3072);
}

TEST_CASE("hub weights: gated repositories say so, with and without a token", "[providers][hf_files][curl]")
{
  HubFixture f;
  auto& curl = f.curl;
  ResolveOptions o = f.options();
  o.cache_dir.clear();
  const auto anonymous = resolve_model("acme/gated-awq", o, curl.get());
  REQUIRE_FALSE(anonymous);
  CHECK(anonymous.error().code == Errc::unauthorized);
  CHECK_THAT(anonymous.error().message, Catch::Contains("HTTP 401") && Catch::Contains("set HF_TOKEN"));
  o.token = "hf_wrong";
  const auto wrong = resolve_model("acme/gated-awq", o, curl.get());
  REQUIRE_FALSE(wrong);
  CHECK_THAT(wrong.error().message, Catch::Contains("HTTP 403") && Catch::Contains("account of your HF_TOKEN"));
  CHECK(wrong.error().message.find("hf_wrong") == std::string::npos);
  o.token = "hf_test_token";
  const auto allowed = resolve_model("acme/gated-awq", o, curl.get());
  REQUIRE(allowed);
  CHECK(allowed->arch.checkpoint->total_bytes() == t::st_total(t::qwen25_7b_awq().tensors));
}

TEST_CASE("local checkpoints: a fine-tune's directory, an adapter, a .gguf file", "[providers][hf_files]")
{
  t::TempDir tmp;
  ResolveOptions o;
  o.cache_dir = tmp.path() / "cache";
  o.offline = true;

  const fs::path ckpt = tmp.path() / "out" / "checkpoint-500";
  const auto fp8 = t::qwen3_8b_fp8();
  t::write_text(ckpt / "config.json", fp8.config);
  t::write_sharded(ckpt, fp8.tensors, 3);
  t::write_text(ckpt / "optimizer.pt", "not weights");
  const auto dir = resolve_model(ckpt.string(), o, nullptr);
  REQUIRE(dir);
  CHECK(dir->source_kind == "file");
  CHECK(dir->arch.name == "checkpoint-500");
  REQUIRE(dir->arch.checkpoint);
  CHECK(dir->arch.checkpoint->total_bytes() == t::st_total(fp8.tensors));
  CHECK(dir->arch.params == fp8.params);
  for (const auto& w : dir->warnings) {
    CHECK(w.find("derived") == std::string::npos);
  }
  const auto by_config = resolve_model((ckpt / "config.json").string(), o, nullptr);
  REQUIRE(by_config);
  CHECK(by_config->arch.checkpoint->total_bytes() == t::st_total(fp8.tensors));
  // Its config.json's "weight_block_size": [128, 128] reaches the layout check, either way named.
  for (const auto* r : {&*dir, &*by_config}) {
    CHECK(r->arch.quant_block_n == 128);
    CHECK(r->arch.quant_block_k == 128);
  }

  // A shard cut short (a copy still running): the count from the architecture, with a warning.
  fs::resize_file(ckpt / "model-00002-of-00003.safetensors", 4000);
  const auto cut = resolve_model(ckpt.string(), o, nullptr);
  REQUIRE(cut);
  CHECK_FALSE(cut->arch.checkpoint);
  CHECK(warned(*cut, "model-00002-of-00003.safetensors"));

  // A LoRA adapter on a catalogue base.
  const fs::path adapter = tmp.path() / "lora-out";
  std::vector<t::StTensor> lora;
  std::uint64_t lora_params = 0;
  for (int i = 0; i < 28; ++i) {
    const std::string p = "base_model.model.model.layers." + std::to_string(i) + ".self_attn.";
    lora.push_back({p + "q_proj.lora_A.weight", "F32", {16, 3072}});
    lora.push_back({p + "q_proj.lora_B.weight", "F32", {3072, 16}});
    lora_params += 2 * 16 * 3072;
  }
  t::write_safetensors(adapter / "adapter_model.safetensors", lora);
  t::write_text(adapter / "adapter_config.json",
                R"({"base_model_name_or_path":"meta-llama/Llama-3.2-3B","peft_type":"LORA","r":16,"lora_alpha":32,)"
                R"("target_modules":["q_proj"]})");
  const auto a = resolve_model(adapter.string(), o, nullptr);
  REQUIRE(a);
  CHECK(a->arch.name == "lora-out");
  CHECK(a->arch.layers == 28);  // the base's architecture
  REQUIRE(a->arch.adapter);
  CHECK(a->arch.adapter->rank == 16);
  CHECK(a->arch.adapter->weights.params == lora_params);
  CHECK(a->arch.adapter->weights.bytes == lora_params * 4);
  t::write_text(adapter / "adapter_config.json", R"({"r":16})");
  const auto orphan = resolve_model(adapter.string(), o, nullptr);
  REQUIRE_FALSE(orphan);
  CHECK_THAT(orphan.error().message, Catch::Contains("base_model_name_or_path"));

  // A .gguf path, and a directory of GGUF files.
  const fs::path gguf = tmp.path() / "models" / "Llama-3.1-8B-Instruct-Q4_K_M.gguf";
  t::write_gguf(gguf, t::llama31_8b_q4_k_m(false));
  const auto g = resolve_model(gguf.string(), o, nullptr);
  REQUIRE(g);
  CHECK(g->arch.checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  CHECK(g->arch.name == "Meta Llama 3.1 8B Instruct");
  const auto gdir = resolve_model(gguf.parent_path().string(), o, nullptr);
  REQUIRE(gdir);
  CHECK(gdir->arch.checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  // --gguf with a local file on a catalogue model.
  ResolveOptions with = o;
  with.gguf = gguf.string();
  const auto cat = resolve_model("llama-3.1-8b", with, nullptr);
  REQUIRE(cat);
  CHECK(cat->arch.checkpoint->total_bytes() == t::k_llama31_8b_q4_k_m_bytes);
  with.gguf = (tmp.path() / "nope.gguf").string();
  CHECK_FALSE(resolve_model("llama-3.1-8b", with, nullptr));

  const fs::path empty = tmp.path() / "empty-dir";
  fs::create_directories(empty);
  const auto nothing = resolve_model(empty.string(), o, nullptr);
  REQUIRE_FALSE(nothing);
  CHECK(nothing.error().code == Errc::not_found);
}

TEST_CASE("content_range_total", "[providers][hf_files]")
{
  CHECK(gpurent::content_range_total("bytes 0-99/5000") == 5000);
  CHECK(gpurent::content_range_total("bytes */123") == 123);
  CHECK_FALSE(gpurent::content_range_total("bytes 0-99/*"));
  CHECK_FALSE(gpurent::content_range_total(""));
}

TEST_CASE("hub listing: a file named twice is read and counted once", "[providers][hf_files]")
{
  // fuzz/crashes/fuzz_hf_listing/listing-names-a-file-twice: the shards chosen from a listing
  // without an index were read once per entry, so the weights counted twice.
  const std::vector<t::StTensor> tensors{{"model.embed_tokens.weight", "BF16", {1000, 64}},
                                         {"lm_head.weight", "BF16", {1000, 64}}};
  const std::string header = t::safetensors_header(tensors);
  struct Hub final : gpurent::HttpClient {
    std::string listing;
    std::string file;
    int ranges = 0;
    gpurent::Result<gpurent::HttpResponse> send(const gpurent::HttpRequest& req) override
    {
      gpurent::HttpResponse r;
      r.status = 200;
      if (req.url.ends_with("?blobs=true")) {
        r.body = listing;
      } else {
        ++ranges;
        r.body = file;  // the range ignored: the whole file (its header; the listing gives its size)
      }
      return r;
    }
  } hub;
  hub.file = header;
  const std::string size = std::to_string(header.size() + t::st_total(tensors));
  hub.listing = R"({"siblings":[{"rfilename":"model-00001-of-00001.safetensors","size":)" + size +
                R"(},{"rfilename":"model-00001-of-00001.safetensors","size":)" + size +
                R"(},{"rfilename":"README.md","size":5},{"path":"README.md","size":9}]})";
  ResolveOptions o;
  o.endpoint = "http://127.0.0.1:9";
  const gpurent::HttpProvider http = [&hub]() -> gpurent::Result<gpurent::HttpClient*> { return &hub; };
  auto files = gpurent::hub_repo_files(http, o, "org/dup", {});
  const auto listing = files->listing();
  REQUIRE(listing);
  REQUIRE(listing->size() == 2);
  CHECK(listing->at(0).path == "model-00001-of-00001.safetensors");
  CHECK(listing->at(1).path == "README.md");
  CHECK(listing->at(1).size == 5u);  // the first entry's size
  const auto w = gpurent::read_repo_weights(*files, *listing, {}, "");
  REQUIRE(w);
  REQUIRE(w->weights);
  CHECK(w->weights->files == std::vector<std::string>{"model-00001-of-00001.safetensors"});
  CHECK(w->weights->total_params() == 2u * 1000 * 64);
  CHECK(hub.ranges == 1);
}
