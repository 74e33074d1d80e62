// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent push` sends: a walk of the local working tree that honours .gitignore files
// (nested ones too, and the repository's .git/info/exclude and, when the tree is a
// subdirectory of a repository, the .gitignore files above it), .gpurentignore files (same
// syntax, higher precedence) and --exclude globs (highest). Files git tracks are sent even
// where a pattern matches them, as git ignores only untracked files. `.git` itself is sent
// unless --exclude or a .gpurentignore names it, and no pattern applies inside a `.git`
// directory. What was left out is reported, with the sizes of the largest paths, so that
// nothing goes missing silently.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

struct LocalEntry {
  std::string path;  // relative to the root, '/'-separated
  EntryKind kind = EntryKind::file;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint32_t mode = 0;
  std::string link_target;
};

struct SkippedPath {
  std::string path;
  bool directory = false;
  std::uint64_t bytes = 0;   // a directory: everything below it
  std::uint64_t files = 0;
  bool exact = true;         // false: the directory was too large to measure whole (bytes, files are lower bounds)
  std::string reason;        // the deciding pattern and where it is written: ".gitignore:3: build/"
};

struct LocalTree {
  std::vector<LocalEntry> entries;   // directories before what they hold, sorted by name
  std::vector<SkippedPath> skipped;  // every path left out (a directory once, with what is below it)
  std::uint64_t skipped_files = 0;   // files left out, those below skipped directories included
  std::uint64_t skipped_bytes = 0;
  std::vector<std::string> warnings; // unreadable directories, an unreadable git index, ...
};

struct WalkOptions {
  std::vector<std::string> excludes;  // --exclude GLOBs (gitignore syntax)
  // Entries measured below skipped directories before giving up (sizes become lower bounds).
  std::uint64_t measure_limit = 200'000;
};

[[nodiscard]] Result<LocalTree> walk_local_tree(const std::filesystem::path& root, const WalkOptions& options);

// The `count` largest skipped paths, largest first (ties by path).
[[nodiscard]] std::vector<SkippedPath> largest_skipped(const LocalTree& tree, std::size_t count);

}  // namespace gpurent
