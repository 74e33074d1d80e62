// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent push` sends: a walk of the local working tree.
//
// Inside a git repository the candidates are git's own answer (sync/git_tree.hpp: `git
// ls-files --cached --others --exclude-standard`, so every rule git reads applies: nested
// .gitignore files, .git/info/exclude, the global excludes file, the index with its
// extensions), nested repositories and submodules by their own git answer; a directory that
// holds a `.git` below a tree that is not a repository is read the same way. Outside git, the
// hand matcher (sync/ignore_rules.hpp) applies the .gitignore files of the tree, as rsync's
// `:- .gitignore` filter would. In both, .gpurentignore files (same syntax) and --exclude globs
// come on top: they leave out any file, tracked ones too, and a `!` in a .gpurentignore
// re-includes what git leaves out (data a job needs but git should not hold).
//
// A directory holding `.gpurent-manifest.json` (a backup gpurent wrote) is never sent.
// `.git` directories are sent only with `with_git`; their size is reported either way. Files
// that look like credentials (sync/secret_guard.hpp) are listed in `secrets` (push refuses to
// send them) unless allowed. What was left out is reported, with the sizes of the largest
// paths, so that nothing goes missing silently.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/secret_guard.hpp"
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
  std::vector<LocalEntry> entries;   // directories before what they hold, by name (`.git` with --with-git last)
  std::vector<SkippedPath> skipped;  // every path left out (a directory once, with what is below it)
  std::uint64_t skipped_files = 0;   // files left out, those below skipped directories included
  std::uint64_t skipped_bytes = 0;
  std::vector<std::string> warnings; // unreadable directories, an --allow-secret that named nothing, ...

  bool git = false;                       // the root is inside a git repository (git's answer decided)
  std::optional<std::string> git_commit;  // HEAD of the root's repository; nullopt before the first commit
  bool git_dirty = false;                 // tracked files differ from that commit
  std::vector<SkippedPath> git_dirs;      // `.git` directories met, with their size
  bool git_dirs_sent = false;             // with_git: they are among the entries
  std::vector<SecretFinding> secrets;     // likely secrets among the files to send: push refuses
  std::vector<SecretFinding> allowed_secrets;  // likely secrets sent on purpose (--allow-secret)
};

struct WalkOptions {
  std::vector<std::string> excludes;  // --exclude GLOBs (gitignore syntax)
  bool with_git = false;              // send `.git` directories too
  bool check_secrets = true;          // read each file's name and first bytes for credentials
  std::vector<std::string> allow_secrets;  // --allow-secret PATHs, relative to the root (files or directories)
  // Entries measured below skipped directories before giving up (sizes become lower bounds).
  std::uint64_t measure_limit = 200'000;
  // gpurent's own directories (its state, the backups' root): never sent, wherever they sit.
  std::vector<std::filesystem::path> never;
};

[[nodiscard]] Result<LocalTree> walk_local_tree(const std::filesystem::path& root, const WalkOptions& options);

// The `count` largest skipped paths, largest first (ties by path).
[[nodiscard]] std::vector<SkippedPath> largest_skipped(const LocalTree& tree, std::size_t count);

}  // namespace gpurent
