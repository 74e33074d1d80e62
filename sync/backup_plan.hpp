// SPDX-License-Identifier: MIT
#pragma once
// PURE: decides what a backup run does from the remote listing, the manifest of the last run
// and what is on the local disk. No I/O, no clock.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sync/manifest.hpp"
#include "sync/transport.hpp"

namespace gpurent {

// A relative path that can be joined under the destination without leaving it: non-empty,
// '/'-separated, no leading '/', no empty, "." or ".." component, no NUL.
[[nodiscard]] bool is_safe_relative_path(std::string_view path) noexcept;
// True when the symlink at `link_path` (relative, safe) with `target` resolves inside the
// tree lexically (relative target whose ".." never climbs above the root).
[[nodiscard]] bool link_stays_inside(std::string_view link_path, std::string_view target) noexcept;

// Glob over '/'-separated paths: `*` any run of characters but '/', `**` any run including '/',
// `?` one character but '/', `\x` the character x. A pattern without '/' is matched against
// every single path component (like rsync); a pattern with '/' against the whole path and
// each of its leading directory prefixes.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text);
[[nodiscard]] bool path_matches(std::string_view pattern, std::string_view path);

struct Filters {
  std::vector<std::string> include;  // empty: everything
  std::vector<std::string> exclude;
};

struct LocalFile {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

enum class ActionKind { make_dir, copy, skip, make_symlink };

struct PlanAction {
  ActionKind kind = ActionKind::copy;
  RemoteEntry entry;          // entry.path is relative to the destination
  bool link_outside = false;  // make_symlink whose target leaves the tree (kept as a link)
};

struct BackupPlan {
  std::vector<PlanAction> actions;      // directories first (parents before children), then files/links
  std::vector<std::string> forgotten;   // in the manifest, gone on the server: dropped from it (local copy kept)
  std::vector<std::string> rejected;    // unsafe remote names, each with the reason
  std::uint64_t files_total = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t files_to_copy = 0;
  std::uint64_t bytes_to_copy = 0;
};

// remote: entries with destination-relative paths. local: regular files found at manifest
// paths (size, mtime). A file is copied when it is new, its size or mtime differs from the
// manifest, or the local copy is missing or differs from the manifest.
[[nodiscard]] BackupPlan plan_backup(const std::vector<RemoteEntry>& remote, const Manifest& manifest,
                                     const std::map<std::string, LocalFile>& local, const Filters& filters);

// Whether two listings give a file the same modification time. A single file given as the
// remote path is listed again by SFTP stat, in whole seconds, where the first listing (find) had
// nanoseconds: then the seconds are compared (the server's SHA-256 of the copy still guards its
// content). Compared exactly, every byte-range backup of a single file was copied twice.
[[nodiscard]] bool same_listed_mtime(std::int64_t a_ns, std::int64_t b_ns) noexcept;

}  // namespace gpurent
