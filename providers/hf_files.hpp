// SPDX-License-Identifier: MIT
#pragma once
// The files of a model repository, read in ranges: a Hub repository over the HttpClient port
// (file list from /api/models/<id>?blobs=true, small files whole, weights' headers with
// `Range: bytes=a-b` through the Hub's 302 to its CDN), a local directory (a fine-tune's output),
// or one file at a URL (--gguf URL). Hub reads go through the model cache: what was read once is
// read again offline.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/hf_hub.hpp"

namespace gpurent {

struct RepoFile {
  std::string path;                   // relative to the repository root, '/'-separated
  std::optional<std::uint64_t> size;  // bytes, when the listing gives it
};

struct Chunk {
  std::string bytes;                       // fewer than asked at the end of the file
  std::optional<std::uint64_t> file_size;  // when the source tells (Content-Range, stat)
};

class RepoFiles {
public:
  virtual ~RepoFiles() = default;
  // Every file of the repository, each path once (Hub: from the API; local: the directory, two
  // levels deep).
  [[nodiscard]] virtual Result<std::vector<RepoFile>> listing() = 0;
  // A small file whole (config.json, an index), refused above `limit` bytes.
  [[nodiscard]] virtual Result<std::string> text(std::string_view file, std::uint64_t limit) = 0;
  // Bytes [begin, begin + length) of a file.
  [[nodiscard]] virtual Result<Chunk> range(std::string_view file, std::uint64_t begin, std::uint64_t length) = 0;
  // The URL or path of a file, for messages and ModelArch::source.
  [[nodiscard]] virtual std::string where(std::string_view file) const = 0;
};

// `cache_dir`: the repository's cache directory (<cache>/<org>/<name>), empty for none. Offline,
// only what the cache holds is read; anything else is an Errc::not_found naming --offline.
[[nodiscard]] std::unique_ptr<RepoFiles> hub_repo_files(const HttpProvider& http, const ResolveOptions& o,
                                                        std::string id, std::filesystem::path cache_dir);
[[nodiscard]] std::unique_ptr<RepoFiles> local_repo_files(std::filesystem::path dir);
// One file at an http(s) URL, listed under its last path component. The token goes only to the
// Hub (a URL under ResolveOptions::endpoint); never cached.
[[nodiscard]] std::unique_ptr<RepoFiles> url_file(const HttpProvider& http, const ResolveOptions& o, std::string url);

// The whole `Content-Range: bytes a-b/total` total; nullopt when absent or "*".
[[nodiscard]] std::optional<std::uint64_t> content_range_total(std::string_view header) noexcept;

}  // namespace gpurent
