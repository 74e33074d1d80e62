// SPDX-License-Identifier: MIT
#pragma once
// PURE: readers of what git prints for `push` (sync/git_tree.hpp runs it):
//   git ls-files -z --cached --others --exclude-standard   the paths git would commit
//   git check-ignore -z -v -n --stdin                        why a path is left out
//   git rev-parse HEAD, git status --porcelain -z            the commit a push carries
// Every reader takes any bytes: a malformed answer is an error value, never a crash.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct GitListing {
  std::vector<std::string> files;   // sorted, unique; relative to where git ran, '/'-separated
  std::vector<std::string> nested;  // directories git lists as one entry: a nested repository
                                    // ("dir/" among --others) or a submodule (a gitlink): sorted
};

// ls-files -z output. A path gpurent could not place safely under the pushed directory
// (absolute, an empty, "." or ".." component) is Errc::invalid_input: git never prints one.
[[nodiscard]] Result<GitListing> parse_ls_files(std::string_view z_output);

// check-ignore -z -v -n output: records of four NUL-terminated fields (source, line, pattern,
// path). Returns path -> "SOURCE:LINE: PATTERN" for the ignored ones ("" source: not ignored,
// left out of the map). Errc::invalid_input when the record structure is broken.
[[nodiscard]] Result<std::map<std::string, std::string>> parse_check_ignore(std::string_view z_output);

// rev-parse HEAD: one object name (40 or 64 hex digits) and a newline.
[[nodiscard]] std::optional<std::string> parse_commit_id(std::string_view output);

// Whether a path from git is one gpurent can place under the pushed directory: relative, no
// empty, "." or ".." component, no NUL.
[[nodiscard]] bool safe_relative_path(std::string_view path);

}  // namespace gpurent
