// SPDX-License-Identifier: MIT
#pragma once
// PURE: which paths `gpurent push` leaves out where git does not decide: the .gitignore files of
// a tree that is not a git repository, and .gpurentignore and --exclude everywhere (inside a
// repository the walker asks git itself, sync/git_tree.hpp). The rules are git's
// (gitignore(5)): blank lines and `#` comments, trailing spaces unless escaped, `!` negation,
// a trailing `/` for directories only, a pattern with a `/` anchored to the directory of its
// file, one without matched against the name at any depth, `*` `?` `[...]` and `**`. Checked
// against git itself (tests/sync/test_ignore_rules.cpp compares with `git ls-files -o
// --exclude-standard` on generated trees). Reading the files is the walker's job
// (sync/local_tree.hpp); this file only parses and decides.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

// git's wildmatch: `*` any run, `?` one character, `[...]` a set (ranges, `!` or `^` to negate,
// `[:alpha:]`-style classes), `\x` the character x. With `pathname`, `*`, `?` and sets never
// match '/', and `**` between slashes (or at either end) matches any number of directories.
[[nodiscard]] bool wildmatch(std::string_view pattern, std::string_view text, bool pathname);

struct IgnorePattern {
  std::string pattern;         // without the leading '!' and the trailing '/'
  std::string base;            // directory of the file it came from, relative to the root: "" or "a/b"
  std::string origin;          // where it was written, for messages: ".gitignore:3", "--exclude"
  bool negated = false;        // "!pattern": re-includes
  bool dir_only = false;       // "pattern/": directories only
  bool basename_only = false;  // no '/' inside: matches the last component at any depth below base
};

// The patterns of one ignore file in file order; `base` is its directory ("" for the root),
// `origin` names it in messages (line numbers are appended).
[[nodiscard]] std::vector<IgnorePattern> parse_ignore_file(std::string_view text, std::string_view base,
                                                           std::string_view origin);
// One --exclude GLOB, with the same syntax, relative to the root.
[[nodiscard]] IgnorePattern exclude_pattern(std::string_view glob);

// Whether one pattern matches `path` (relative to the root, '/'-separated).
[[nodiscard]] bool pattern_matches(const IgnorePattern& p, std::string_view path, bool is_dir);

// The decision for a path, from every list that applies to it, by git's precedence: the last
// matching pattern of the most specific list decides. Lists, highest first: --exclude, the
// .gpurentignore files from the deepest directory up, the .gitignore files from the deepest
// directory up. A .gpurentignore can thus re-include (`!`) what a .gitignore leaves out. As in git, nothing below an ignored directory can be re-included (the walker
// does not enter it).
class IgnoreMatcher {
public:
  void set_excludes(std::vector<IgnorePattern> patterns) { m_excludes = std::move(patterns); }
  // Entering a directory (the root first): the patterns of its .gitignore and .gpurentignore.
  void push_dir(std::vector<IgnorePattern> gitignore, std::vector<IgnorePattern> gpurentignore);
  void pop_dir();
  // The pattern that decides, or nullptr when none matches. Ignored = result && !result->negated.
  // Without `gitignore`, only --exclude and .gpurentignore count (for `.git` itself, which git's
  // own rules never ignore).
  [[nodiscard]] const IgnorePattern* decide(std::string_view path, bool is_dir, bool gitignore = true) const;
  [[nodiscard]] bool ignored(std::string_view path, bool is_dir) const
  {
    const IgnorePattern* p = decide(path, is_dir);
    return p != nullptr && !p->negated;
  }

private:
  std::vector<IgnorePattern> m_excludes;
  std::vector<std::vector<IgnorePattern>> m_git;       // one per directory on the current path
  std::vector<std::vector<IgnorePattern>> m_gpurent;
};

}  // namespace gpurent
