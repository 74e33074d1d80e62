// SPDX-License-Identifier: MIT
#pragma once
// What git itself says about a working tree, for `push`: the files it would commit (tracked or
// untracked and not ignored, by every rule git reads: the .gitignore files, .git/info/exclude,
// core.excludesFile or $XDG_CONFIG_HOME/git/ignore, a split index, skip-worktree,
// core.ignorecase...), why it leaves a path out, and the commit the tree is at. Runs the
// user's `git` (sync/local_process.hpp); its answers are read by sync/git_output.hpp.
//
// Nested repositories and submodules are listed by git as one entry; gpurent asks git inside
// each (recursively) for its own files, so they arrive as a clone would have them, without
// their `.git`.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// The repository holding `root`, found by looking for `.git` from `root` upwards.
struct GitRepoLocation {
  std::filesystem::path top;  // the working tree's top
  std::string prefix;         // root relative to top ("" when root is the top)
};
[[nodiscard]] std::optional<GitRepoLocation> find_git_repo(const std::filesystem::path& root);

struct GitFiles {
  std::vector<std::string> files;  // relative to root, sorted: what git would commit, nested repositories' files included
  std::vector<std::string> warnings;  // what git said on stderr while answering ("git: warning: ...")
};

// `git ls-files -z --cached --others --exclude-standard` in root and in every nested
// repository below it. Errc::not_found: git is not installed; Errc::usage: git refused the
// repository (its message says why, e.g. "dubious ownership"); Errc::internal: git's answer
// was unreadable.
[[nodiscard]] Result<GitFiles> list_git_files(const std::filesystem::path& root);

// For paths (relative to root) that git leaves out: "SOURCE:LINE: PATTERN" of the rule that
// does, asked of the repository that holds each path (root's, or the deepest of `repos`, the
// nested repositories relative to root). Paths no rule names are absent.
[[nodiscard]] Result<std::map<std::string, std::string>> git_ignore_reasons(const std::filesystem::path& root,
                                                                           const std::vector<std::string>& repos,
                                                                           const std::vector<std::string>& paths);

struct GitHead {
  std::optional<std::string> commit;  // nullopt: no commit yet
  bool dirty = false;                 // tracked files differ from the commit (untracked files do not count)
};
[[nodiscard]] Result<GitHead> git_head(const std::filesystem::path& root);

}  // namespace gpurent
