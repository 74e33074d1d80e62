// SPDX-License-Identifier: MIT
// The imperative shell around sync/ignore_rules.hpp: reads directories and ignore files.
#include "sync/local_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sync/git_index.hpp"
#include "sync/ignore_rules.hpp"

namespace gpurent {
namespace {

constexpr std::uint64_t k_max_ignore_file = 4ULL << 20;   // a .gitignore over 4 MiB is not one
constexpr std::uint64_t k_max_index = 1ULL << 30;

std::optional<std::string> read_small(const std::filesystem::path& p, std::uint64_t limit)
{
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > limit) {
    return std::nullopt;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<IgnorePattern> read_patterns(const std::filesystem::path& file, const std::string& base, const std::string& origin)
{
  const auto text = read_small(file, k_max_ignore_file);
  return text ? parse_ignore_file(*text, base, origin) : std::vector<IgnorePattern>{};
}

std::string join(const std::string& dir, const std::string& name)
{
  return dir.empty() ? name : dir + "/" + name;
}

EntryKind kind_of(mode_t m)
{
  return S_ISREG(m) ? EntryKind::file : S_ISDIR(m) ? EntryKind::directory : S_ISLNK(m) ? EntryKind::symlink : EntryKind::other;
}

// Where the repository holding `root` keeps its metadata.
struct Repo {
  std::filesystem::path top;      // the working tree's top
  std::filesystem::path git_dir;  // .git, or where a "gitdir:" file points
  std::string prefix;             // root relative to top ("" when root is the top)
};

std::optional<Repo> find_repo(const std::filesystem::path& root)
{
  std::error_code ec;
  auto dir = std::filesystem::canonical(root, ec);
  if (ec) {
    return std::nullopt;
  }
  const auto start = dir;
  while (true) {
    const auto dot_git = dir / ".git";
    struct stat st {};
    if (::lstat(dot_git.c_str(), &st) == 0) {
      Repo r{dir, dot_git, std::filesystem::relative(start, dir, ec).generic_string()};
      if (r.prefix == ".") {
        r.prefix.clear();
      }
      if (S_ISREG(st.st_mode)) {  // a worktree or submodule: "gitdir: PATH"
        const auto text = read_small(dot_git, 4096).value_or("");
        if (!text.starts_with("gitdir: ")) {
          return std::nullopt;
        }
        std::string target = text.substr(8);
        while (!target.empty() && (target.back() == '\n' || target.back() == '\r')) {
          target.pop_back();
        }
        const std::filesystem::path t(target);
        r.git_dir = t.is_absolute() ? t : dir / t;
      }
      return r;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) {
      return std::nullopt;
    }
    dir = dir.parent_path();
  }
}

class Walker {
public:
  Walker(std::filesystem::path root, const WalkOptions& o) : m_root(std::move(root)), m_opts(o) {}

  Result<LocalTree> run()
  {
    struct stat st {};
    if (::stat(m_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return fail(Errc::usage, "push: " + m_root.string() + " is not a directory; give the working tree to push");
    }
    if (const auto repo = find_repo(m_root)) {
      m_prefix = repo->prefix;
      load_repo(*repo);
    }
    std::vector<IgnorePattern> excludes;
    for (const auto& g : m_opts.excludes) {
      auto p = exclude_pattern(g);
      p.base = m_prefix;
      excludes.push_back(std::move(p));
    }
    m_matcher.set_excludes(std::move(excludes));
    TRY(walk("", false, nullptr));
    return std::move(m_out);
  }

private:
  void load_repo(const Repo& repo)
  {
    if (const auto index = read_small(repo.git_dir / "index", k_max_index)) {
      auto paths = parse_git_index(*index);
      if (paths) {
        m_tracked = std::move(*paths);
        std::sort(m_tracked.begin(), m_tracked.end());
      } else {
        m_out.warnings.push_back("cannot read " + (repo.git_dir / "index").string() + " (" + paths.error().message +
                                 "): files git tracks are treated like untracked ones");
      }
    }
    auto common = repo.git_dir;
    if (const auto dir = read_small(repo.git_dir / "commondir", 4096)) {
      std::string d = *dir;
      while (!d.empty() && (d.back() == '\n' || d.back() == '\r')) {
        d.pop_back();
      }
      common = std::filesystem::path(d).is_absolute() ? std::filesystem::path(d) : repo.git_dir / d;
    }
    m_matcher.set_info_exclude(read_patterns(common / "info" / "exclude", "", ".git/info/exclude"));
    // The ignore files of the directories above the root, from the top down.
    std::string rel;
    std::filesystem::path dir = repo.top;
    std::stringstream parts(m_prefix);
    std::string part;
    while (!m_prefix.empty()) {
      push_ignore_files(dir, rel);
      if (!std::getline(parts, part, '/')) {
        break;
      }
      dir /= part;
      rel = join(rel, part);
      if (rel == m_prefix) {
        break;
      }
    }
  }

  void push_ignore_files(const std::filesystem::path& dir, const std::string& repo_rel)
  {
    const std::string shown = repo_rel.empty() ? std::string() : repo_rel + "/";
    m_matcher.push_dir(read_patterns(dir / ".gitignore", repo_rel, shown + ".gitignore"),
                       read_patterns(dir / ".gpurentignore", repo_rel, shown + ".gpurentignore"));
  }

  [[nodiscard]] std::string repo_path(const std::string& rel) const
  {
    return m_prefix.empty() ? rel : rel.empty() ? m_prefix : m_prefix + "/" + rel;
  }

  [[nodiscard]] bool tracked(const std::string& repo_rel) const
  {
    return std::binary_search(m_tracked.begin(), m_tracked.end(), repo_rel);
  }
  [[nodiscard]] bool tracked_below(const std::string& repo_rel) const
  {
    const std::string prefix = repo_rel + "/";
    const auto it = std::lower_bound(m_tracked.begin(), m_tracked.end(), prefix);
    return it != m_tracked.end() && it->starts_with(prefix);
  }

  // `ignored_dir`: set inside an ignored directory entered only for the files git tracks there.
  Result<void> walk(const std::string& rel_dir, bool inside_git, const IgnorePattern* ignored_dir)
  {
    const auto dir_path = rel_dir.empty() ? m_root : m_root / rel_dir;
    DIR* d = ::opendir(dir_path.c_str());
    if (d == nullptr) {
      if (rel_dir.empty()) {
        return fail(Errc::invalid_input, "push: cannot read " + dir_path.string() + ": " + std::strerror(errno));
      }
      m_out.warnings.push_back("cannot read " + dir_path.string() + " (" + std::strerror(errno) + "): not pushed");
      return {};
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view n = e->d_name;
      if (n != "." && n != "..") {
        names.emplace_back(n);
      }
    }
    std::sort(names.begin(), names.end());
    const bool rules = !inside_git && ignored_dir == nullptr;
    if (rules) {
      push_ignore_files(dir_path, repo_path(rel_dir));
    }
    Result<void> result;
    for (const auto& name : names) {
      const std::string rel = join(rel_dir, name);
      struct stat st {};
      if (::fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        continue;  // vanished meanwhile
      }
      result = visit(dir_path, rel, name, st, inside_git, ignored_dir);
      if (!result) {
        break;
      }
    }
    if (rules) {
      m_matcher.pop_dir();
    }
    ::closedir(d);
    return result;
  }

  Result<void> visit(const std::filesystem::path& dir_path, const std::string& rel, const std::string& name, const struct stat& st,
                     bool inside_git, const IgnorePattern* ignored_dir)
  {
    const EntryKind kind = kind_of(st.st_mode);
    const bool is_dir = kind == EntryKind::directory;
    const std::string rp = repo_path(rel);
    if (!inside_git) {
      const IgnorePattern* by = ignored_dir;
      if (by == nullptr) {
        by = m_matcher.decide(rp, is_dir, name != ".git");
        by = by != nullptr && by->negated ? nullptr : by;
      }
      const bool keep_tracked = by != nullptr && !is_dir && name != ".git" && tracked(rp);
      if (by != nullptr && is_dir && name != ".git" && tracked_below(rp)) {
        add(dir_path, rel, name, st);
        return walk(rel, false, by);
      }
      if (by != nullptr && !keep_tracked) {
        skip(dir_path / name, rel, is_dir, st, by->origin + ": " + (by->negated ? "!" : "") + by->pattern + (by->dir_only ? "/" : ""));
        return {};
      }
    }
    if (kind == EntryKind::other) {
      skip(dir_path / name, rel, false, st, "not a regular file, directory or symbolic link");
      return {};
    }
    add(dir_path, rel, name, st);
    if (is_dir) {
      return walk(rel, inside_git || name == ".git", ignored_dir);
    }
    return {};
  }

  void add(const std::filesystem::path& dir_path, const std::string& rel, const std::string& name, const struct stat& st)
  {
    LocalEntry e;
    e.path = rel;
    e.kind = kind_of(st.st_mode);
    e.size = e.kind == EntryKind::file ? static_cast<std::uint64_t>(st.st_size) : 0;
    e.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
    e.mode = st.st_mode & 07777U;
    if (e.kind == EntryKind::symlink) {
      std::error_code ec;
      e.link_target = std::filesystem::read_symlink(dir_path / name, ec).string();
    }
    m_out.entries.push_back(std::move(e));
  }

  void skip(const std::filesystem::path& full, const std::string& rel, bool is_dir, const struct stat& st, std::string reason)
  {
    SkippedPath s{rel, is_dir, 0, 0, true, std::move(reason)};
    if (is_dir) {
      measure(full, s);
    } else {
      s.bytes = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
      s.files = 1;
    }
    m_out.skipped_files += s.files;
    m_out.skipped_bytes += s.bytes;
    m_out.skipped.push_back(std::move(s));
  }

  // Files and bytes below a skipped directory, within the measuring budget.
  void measure(const std::filesystem::path& dir, SkippedPath& s)
  {
    std::vector<std::filesystem::path> todo{dir};
    while (!todo.empty()) {
      const auto current = std::move(todo.back());
      todo.pop_back();
      DIR* d = ::opendir(current.c_str());
      if (d == nullptr) {
        continue;
      }
      while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n == "." || n == "..") {
          continue;
        }
        if (++m_measured > m_opts.measure_limit) {
          s.exact = false;
          ::closedir(d);
          return;
        }
        struct stat st {};
        if (::fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          continue;
        }
        if (S_ISDIR(st.st_mode)) {
          todo.push_back(current / e->d_name);
        } else {
          ++s.files;
          s.bytes += S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
        }
      }
      ::closedir(d);
    }
  }

  std::filesystem::path m_root;
  const WalkOptions& m_opts;
  IgnoreMatcher m_matcher;
  std::string m_prefix;
  std::vector<std::string> m_tracked;
  std::uint64_t m_measured = 0;
  LocalTree m_out;
};

}  // namespace

Result<LocalTree> walk_local_tree(const std::filesystem::path& root, const WalkOptions& options)
{
  Walker w(root, options);
  return w.run();
}

std::vector<SkippedPath> largest_skipped(const LocalTree& tree, std::size_t count)
{
  std::vector<SkippedPath> out = tree.skipped;
  std::sort(out.begin(), out.end(), [](const SkippedPath& a, const SkippedPath& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.path < b.path;
  });
  if (out.size() > count) {
    out.resize(count);
  }
  return out;
}

}  // namespace gpurent
