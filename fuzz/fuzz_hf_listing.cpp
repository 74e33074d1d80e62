// SPDX-License-Identifier: MIT
// Fuzz target for what gpurent reads about a Hub repository's files and the choice made from it
// (providers/hf_files.hpp, providers/repo_weights.hpp, the hf_detail GGUF repository path): the
// file list of GET /api/models/<id>?blobs=true ({"siblings": [{"rfilename", "size", "lfs":
// {"size"}}]} or our cached array of {"path", "size"}), the weights' files chosen from it (the
// safetensors index's files, model.safetensors, the top-level shards, a GGUF file by type, every
// part of a split one, an adapter), the index and adapter_config.json read whole, and the ranged
// reads of their headers answered 206 (Content-Range), 200 (the range ignored), 416 or an error
// status, over the real HubRepoFiles and a fake HttpClient whose answers come from the input.
//
// Invariants (abort() when broken):
// - the file list holds only plain relative paths (no "", ".", ".." part, no leading '/', no
//   backslash) that an item of the answer named, each with a size that item gave, at most 100,000;
// - every file fetched is one the list named (the index and adapter_config.json only when listed)
//   and is fetched under <endpoint>/<id>/resolve/main/; every Range is "bytes=a-b" with a <= b and
//   no more than 256 MiB (the GGUF header cap), and the response cap covers it;
// - the weights read name only listed files, each once; a GGUF file asked for by name is among
//   them; a GGUF architecture comes with its weights;
// - errors are of the kinds the answers call for (invalid_input, not_found, unauthorized, quota,
//   unavailable), with a message; no exception escapes, no sanitizer report, a bounded number of
//   requests.
//
// Input: byte 0 = options (bit 0 prefer GGUF, bits 1-2 the GGUF type asked, bit 3 ask for the
// first listed .gguf file by name, bits 4-5 the listing's status 200/200/404/403, bit 6 go through
// the GGUF-repository path (no config.json) instead of read_repo_weights), byte 1 = how ranges are
// answered (bits 0-1: 206/200/416/an error status picked by bits 2-3; bit 4: every answer over
// the response cap fails as the real client does; bit 5: no Content-Range header), then the listing
// body, "@@text@@" the body of the files read whole (index, adapter_config.json, config.json
// hints), "@@file@@" the bytes of every ranged file, and optionally "@@range@@" a Content-Range
// value used verbatim.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/text.hpp"
#include "providers/hf_files.hpp"
#include "providers/hf_resolve_detail.hpp"
#include "providers/repo_weights.hpp"
#include "sizing/gguf_header.hpp"
#include "sizing/weights_from_headers.hpp"

namespace {

using gpurent::Errc;
using U = std::uint64_t;

constexpr std::string_view k_endpoint = "http://127.0.0.1:9";
constexpr std::string_view k_id = "fuzz-org/fuzz-repo";
constexpr int k_max_requests = 2000;

[[noreturn]] void broken() { std::abort(); }

std::string_view section(std::string_view text, std::string_view marker, std::string_view* rest)
{
  const auto at = text.find(marker);
  if (at == std::string_view::npos) {
    *rest = {};
    return text;
  }
  *rest = text.substr(at + marker.size());
  return text.substr(0, at);
}

long error_status(unsigned pick)
{
  constexpr long k[] = {404, 403, 429, 500};
  return k[pick % 4];
}

struct FakeHub final : gpurent::HttpClient {
  long listing_status = 200;
  std::string listing;
  std::string text;
  std::string file;
  std::optional<std::string> content_range;
  unsigned range_mode = 0;
  bool enforce_cap = false;
  bool no_content_range = false;
  int calls = 0;
  int listing_calls = 0;
  std::set<std::string> whole;   // files read whole
  std::set<std::string> ranged;  // files read in ranges

  gpurent::Result<gpurent::HttpResponse> reply(gpurent::HttpResponse r, const gpurent::HttpRequest& req) const
  {
    if (enforce_cap && r.body.size() > req.max_response_bytes) {
      return gpurent::fail(Errc::invalid_input, "HTTP GET: the response is larger than " +
                                                    std::to_string(req.max_response_bytes) + " bytes");
    }
    return r;
  }

  gpurent::Result<gpurent::HttpResponse> send(const gpurent::HttpRequest& req) override
  {
    if (++calls > k_max_requests || req.method != "GET" || !req.url.starts_with(k_endpoint)) {
      broken();
    }
    const std::string_view url = std::string_view(req.url).substr(k_endpoint.size());
    gpurent::HttpResponse r;
    if (url == "/api/models/" + std::string(k_id) + "?blobs=true") {
      if (++listing_calls > 1) {
        broken();  // one listing per RepoFiles, and each entry point makes one
      }
      r.status = listing_status;
      r.body = listing;
      return reply(std::move(r), req);
    }
    const std::string prefix = "/" + std::string(k_id) + "/resolve/main/";
    if (!url.starts_with(prefix)) {
      broken();  // nothing but the listing and the repository's files
    }
    const std::string name(url.substr(prefix.size()));
    if (!gpurent::safe_repo_path(name)) {
      broken();
    }
    std::optional<std::string> range;
    for (const auto& [k, v] : req.headers) {
      if (gpurent::iequals(k, "range")) {
        range = v;
      }
    }
    if (!range) {
      whole.insert(name);
      r.status = 200;
      r.body = text;
      return reply(std::move(r), req);
    }
    ranged.insert(name);
    // "bytes=a-b", a <= b, within the header cap, under the response cap.
    if (!range->starts_with("bytes=")) {
      broken();
    }
    const std::string_view spec = std::string_view(*range).substr(6);
    const auto dash = spec.find('-');
    const auto a = gpurent::parse_u64(spec.substr(0, dash));
    const auto b = dash == std::string_view::npos ? std::nullopt : gpurent::parse_u64(spec.substr(dash + 1));
    if (!a || !b || *a > *b || *b - *a >= gpurent::k_max_gguf_header || req.max_response_bytes < *b - *a + 1) {
      broken();
    }
    const U begin = *a;
    const U length = *b - *a + 1;
    switch (range_mode & 3) {
    case 0:
      r.status = 206;
      r.body = begin < file.size() ? file.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(length))
                                   : std::string();
      break;
    case 1:
      r.status = 200;
      r.body = file;
      break;
    case 2: r.status = 416; break;
    default: r.status = error_status(range_mode >> 2); break;
    }
    if (!no_content_range && (r.status == 206 || r.status == 416)) {
      r.headers.emplace_back("content-range", content_range ? *content_range
                                                            : "bytes " + std::to_string(begin) + "-" +
                                                                  std::to_string(begin + length - 1) + "/" +
                                                                  std::to_string(file.size()));
    }
    return reply(std::move(r), req);
  }
};

// What the answer's items name: path -> the sizes given for it.
std::map<std::string, std::set<U>> named_in(std::string_view body)
{
  std::map<std::string, std::set<U>> out;
  const auto j = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  const nlohmann::json* items = nullptr;
  if (!j.is_discarded() && j.is_array()) {
    items = &j;
  } else if (!j.is_discarded() && j.is_object() && j.contains("siblings")) {
    items = &j["siblings"];
  }
  if (items == nullptr || !items->is_array()) {
    return out;
  }
  for (const auto& s : *items) {
    if (!s.is_object()) {
      continue;
    }
    for (const char* key : {"rfilename", "path"}) {
      if (!s.contains(key) || !s[key].is_string()) {
        continue;
      }
      auto& sizes = out[s[key].get<std::string>()];
      if (s.contains("size") && s["size"].is_number_unsigned()) {
        sizes.insert(s["size"].get<U>());
      }
      if (s.contains("lfs") && s["lfs"].is_object() && s["lfs"].contains("size") &&
          s["lfs"]["size"].is_number_unsigned()) {
        sizes.insert(s["lfs"]["size"].get<U>());
      }
    }
  }
  return out;
}

bool listed(const std::vector<gpurent::RepoFile>& files, std::string_view name)
{
  return std::any_of(files.begin(), files.end(), [&](const gpurent::RepoFile& f) { return f.path == name; });
}

void check_error(const gpurent::Error& e)
{
  if (e.message.empty()) {
    broken();
  }
  switch (e.code) {
  case Errc::invalid_input:
  case Errc::not_found:
  case Errc::unauthorized:
  case Errc::quota:
  case Errc::unavailable: return;
  default: broken();
  }
}

void check_listing_error(const gpurent::Error& e, long status)
{
  check_error(e);
  const Errc want = status == 200   ? Errc::invalid_input
                    : status == 404 ? Errc::not_found
                                    : Errc::unauthorized;
  if (e.code != want) {
    broken();
  }
}

void check_weights(const gpurent::CheckpointWeights& w, const std::vector<gpurent::RepoFile>& listing)
{
  const std::set<std::string> once(w.files.begin(), w.files.end());
  if (once.size() != w.files.size()) {
    broken();  // a file counted twice
  }
  for (const auto& f : w.files) {
    if (!gpurent::safe_repo_path(f) || !listed(listing, f)) {
      broken();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size < 2) {
    return 0;
  }
  const std::uint8_t opts = data[0];
  const std::uint8_t ranges = data[1];
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  FakeHub hub;
  constexpr long k_listing_status[] = {200, 200, 404, 403};
  hub.listing_status = k_listing_status[(opts >> 4) & 3];
  hub.listing = std::string(section(rest, "@@text@@", &rest));
  hub.text = std::string(section(rest, "@@file@@", &rest));
  std::string_view range_value;
  hub.file = std::string(section(rest, "@@range@@", &range_value));
  if (range_value.data() != nullptr) {
    hub.content_range = std::string(range_value);
  }
  hub.range_mode = ranges & 15;
  hub.enforce_cap = (ranges & 16) != 0;
  hub.no_content_range = (ranges & 32) != 0;

  gpurent::ResolveOptions o;
  o.endpoint = std::string(k_endpoint);
  o.prefer_gguf = (opts & 1) != 0;
  constexpr std::string_view k_types[] = {"", "Q4_K_M", "q8-0", "BF16"};
  o.gguf_type = std::string(k_types[(opts >> 1) & 3]);
  const gpurent::HttpProvider http = [&hub]() -> gpurent::Result<gpurent::HttpClient*> { return &hub; };

  // The listing alone.
  auto files = gpurent::hub_repo_files(http, o, std::string(k_id), {});
  const auto listing = files->listing();
  if (!listing) {
    check_listing_error(listing.error(), hub.listing_status);
    return 0;
  }
  if (hub.listing_status != 200 || listing->size() > 100'000) {
    broken();
  }
  const auto named = named_in(hub.listing);
  for (const auto& f : *listing) {
    const auto it = named.find(f.path);
    if (!gpurent::safe_repo_path(f.path) || f.path.starts_with("/") || it == named.end() ||
        (f.size && !it->second.contains(*f.size))) {
      broken();  // a path the answer did not name, one that escapes, or a size it did not give
    }
  }

  if ((opts & 64) != 0) {
    // A repository without config.json: its GGUF file is the model (a fresh listing request).
    hub.listing_calls = 0;
    const auto r = gpurent::hf_detail::gguf_repo_model(http, o, k_id, {});
    if (!r) {
      check_error(r.error());
    } else if (*r) {
      const auto& m = **r;
      if (m.source_kind != "hub" || m.arch.name != k_id || !m.arch.checkpoint ||
          m.arch.checkpoint->hub_repo != k_id) {
        broken();
      }
      check_weights(*m.arch.checkpoint, *listing);
    }
  } else {
    gpurent::WeightsRequest req{o.prefer_gguf, o.gguf_type, {}};
    if ((opts & 8) != 0) {
      for (const auto& f : *listing) {
        if (f.path.ends_with(".gguf")) {
          req.gguf_file = f.path;
          break;
        }
      }
    }
    const auto w = gpurent::read_repo_weights(*files, *listing, req, hub.text);
    if (!w) {
      check_error(w.error());
    } else {
      if (w->gguf_arch && !w->weights) {
        broken();
      }
      if (w->weights) {
        check_weights(*w->weights, *listing);
        if (!req.gguf_file.empty() && std::find(w->weights->files.begin(), w->weights->files.end(), req.gguf_file) ==
                                          w->weights->files.end()) {
          broken();  // the file asked for by name is among those read
        }
      }
      if (w->adapter && (!listed(*listing, "adapter_model.safetensors") || !listed(*listing, "adapter_config.json"))) {
        broken();
      }
    }
  }
  // Only listed files were fetched; the index and the adapter's config whole, only when listed.
  for (const auto& f : hub.ranged) {
    if (!listed(*listing, f)) {
      broken();
    }
  }
  for (const auto& f : hub.whole) {
    if (!listed(*listing, f) || (f != "model.safetensors.index.json" && f != "adapter_config.json")) {
      broken();
    }
  }
  return 0;
}
