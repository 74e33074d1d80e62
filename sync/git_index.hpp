// SPDX-License-Identifier: MIT
#pragma once
// PURE: the paths a git index (.git/index, versions 2, 3 and 4, SHA-1 or SHA-256 object names)
// tracks. git applies .gitignore only to untracked files, so `gpurent push` sends a tracked
// file even where a pattern matches it; otherwise `git status` on the server would show it
// deleted. Format: Documentation/gitformat-index.txt in git.
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

// The tracked paths in index order (sorted, as git writes them; a path in conflict appears once
// per stage). Entries marked skip-worktree (sparse checkout: not in the working tree) are left
// out. Errc::invalid_input for anything that is not a whole, well-formed index.
[[nodiscard]] Result<std::vector<std::string>> parse_git_index(std::string_view bytes);

}  // namespace gpurent
