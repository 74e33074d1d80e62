// SPDX-License-Identifier: MIT
#pragma once
// The backup manifest: what the last successful run left in the destination (one JSON file,
// replaced atomically). Parsing and rendering are pure; load/save touch the disk.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

struct ManifestEntry {
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint32_t mode = 0;
  std::string sha256;       // files: lowercase hex, empty when verified by size only
  std::string link_target;  // symlinks
  auto operator<=>(const ManifestEntry&) const = default;
};

struct Manifest {
  std::map<std::string, ManifestEntry> entries;  // destination-relative path -> entry
  std::string host;                              // user@host:port it was taken from
  std::int64_t finished_unix = 0;
  auto operator<=>(const Manifest&) const = default;
};

// JSON text <-> Manifest. Paths that are not valid UTF-8 are stored hex-encoded ("path_hex").
[[nodiscard]] std::string render_manifest(const Manifest& m);
[[nodiscard]] Result<Manifest> parse_manifest(std::string_view json_text);
[[nodiscard]] bool is_valid_utf8(std::string_view s) noexcept;

// Missing file: an empty manifest. Written as temp + fsync + rename + fsync(dir).
[[nodiscard]] Result<Manifest> load_manifest(const std::filesystem::path& file);
[[nodiscard]] Result<void> save_manifest(const std::filesystem::path& file, const Manifest& m);

}  // namespace gpurent
