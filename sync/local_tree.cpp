// SPDX-License-Identifier: MIT
// The imperative shell around sync/ignore_rules.hpp, sync/git_tree.hpp and
// sync/secret_guard.hpp: reads directories, ignore files and the first bytes of files.
#include "sync/local_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "sync/backup.hpp"
#include "sync/git_tree.hpp"
#include "sync/ignore_rules.hpp"

namespace gpurent {
namespace {

constexpr std::uint64_t k_max_ignore_file = 4ULL << 20;  // a .gitignore over 4 MiB is not one (warned)

std::string join(const std::string& dir, const std::string& name)
{
  return dir.empty() ? name : dir + "/" + name;
}

EntryKind kind_of(mode_t m)
{
  return S_ISREG(m) ? EntryKind::file : S_ISDIR(m) ? EntryKind::directory : S_ISLNK(m) ? EntryKind::symlink : EntryKind::other;
}

// How a directory's entries are decided.
enum class Mode {
  rules,      // outside git: the .gitignore files of the tree (hand matcher)
  git,        // inside a repository: git's own list
  git_data,   // inside a `.git` directory sent with --with-git: everything
};

class Walker {
public:
  Walker(std::filesystem::path root, const WalkOptions& o) : m_root(std::move(root)), m_opts(o)
  {
    for (const auto& d : o.never) {
      struct stat st {};
      if (::stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        m_never.insert({st.st_dev, st.st_ino});
      }
    }
  }

  Result<LocalTree> run()
  {
    struct stat st {};
    if (::stat(m_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return fail(Errc::usage, "push: " + m_root.string() + " is not a directory; give the working tree to push");
    }
    for (const auto& a : m_opts.allow_secrets) {
      m_allowed.push_back(normalize_allowed_path(a));
    }
    Mode mode = Mode::rules;
    if (const auto repo = find_git_repo(m_root)) {
      m_prefix = repo->prefix;
      TRY_ASSIGN(const GitFiles files, list_git_files(m_root));
      add_git_files(files, "");
      TRY_ASSIGN(const GitHead head, git_head(m_root));
      m_out.git = true;
      m_out.git_commit = head.commit;
      m_out.git_dirty = head.dirty;
      load_gpurentignore_above(*repo);
      mode = Mode::git;
    }
    std::vector<IgnorePattern> excludes;
    for (const auto& g : m_opts.excludes) {
      auto p = exclude_pattern(g);
      p.base = m_prefix;
      excludes.push_back(std::move(p));
    }
    m_matcher.set_excludes(std::move(excludes));
    TRY(walk("", mode, false));
    TRY(explain_git_skips());
    for (const auto& d : m_deferred_git_dirs) {
      add(d.dir_path, d.rel, d.name, d.st, false);
      if (S_ISDIR(d.st.st_mode)) {
        TRY(walk(d.rel, Mode::git_data, false));
      }
    }
    for (std::size_t i = 0; i < m_allowed.size(); ++i) {
      if (!m_allow_used.contains(i)) {
        m_out.warnings.push_back("--allow-secret " + m_opts.allow_secrets[i] +
                                 ": no likely secret at that path is being sent (it is relative to the pushed directory)");
      }
    }
    return std::move(m_out);
  }

private:
  void add_git_files(const GitFiles& files, const std::string& base)
  {
    for (const auto& f : files.files) {
      m_git_files.insert(join(base, f));
    }
    for (const auto& w : files.warnings) {
      m_out.warnings.push_back(w);
    }
  }

  // A .gpurentignore above the root (the root is a subdirectory of the repository) still applies.
  void load_gpurentignore_above(const GitRepoLocation& repo)
  {
    std::string rel;
    std::filesystem::path dir = repo.top;
    std::stringstream parts(m_prefix);
    std::string part;
    while (!m_prefix.empty()) {
      push_ignore_files(dir, rel, false);
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

  std::vector<IgnorePattern> read_patterns(const std::filesystem::path& file, const std::string& base, const std::string& origin)
  {
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0) {
      return {};
    }
    if (!S_ISREG(st.st_mode)) {
      if (S_ISLNK(st.st_mode)) {
        m_out.warnings.push_back(origin + " is a symbolic link: not read (git does not follow one either)");
      }
      return {};
    }
    if (static_cast<std::uint64_t>(st.st_size) > k_max_ignore_file) {
      m_out.warnings.push_back(origin + " is larger than 4 MiB: its patterns are not applied");
      return {};
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_ignore_file(ss.str(), base, origin);
  }

  void push_ignore_files(const std::filesystem::path& dir, const std::string& repo_rel, bool gitignore)
  {
    const std::string shown = repo_rel.empty() ? std::string() : repo_rel + "/";
    m_matcher.push_dir(gitignore ? read_patterns(dir / ".gitignore", repo_rel, shown + ".gitignore") : std::vector<IgnorePattern>{},
                       read_patterns(dir / ".gpurentignore", repo_rel, shown + ".gpurentignore"));
  }

  [[nodiscard]] std::string repo_path(const std::string& rel) const
  {
    return m_prefix.empty() ? rel : rel.empty() ? m_prefix : m_prefix + "/" + rel;
  }

  [[nodiscard]] bool git_lists(const std::string& rel) const { return m_git_files.contains(rel); }
  [[nodiscard]] bool git_lists_below(const std::string& rel) const
  {
    const std::string prefix = rel + "/";
    const auto it = m_git_files.lower_bound(prefix);
    return it != m_git_files.end() && it->starts_with(prefix);
  }

  // `forced` (git mode): a `!` in a .gpurentignore re-included this directory, so what git
  // leaves out below it is sent too.
  Result<void> walk(const std::string& rel_dir, Mode mode, bool forced)
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
    const bool rules = mode != Mode::git_data;
    if (rules) {
      push_ignore_files(dir_path, repo_path(rel_dir), mode == Mode::rules);
    }
    Result<void> result;
    for (const auto& name : names) {
      const std::string rel = join(rel_dir, name);
      struct stat st {};
      if (::fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        continue;  // vanished meanwhile
      }
      result = visit(dir_path, rel, name, st, mode, forced);
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
                     Mode mode, bool forced)
  {
    const EntryKind kind = kind_of(st.st_mode);
    const bool is_dir = kind == EntryKind::directory;
    if (mode == Mode::git_data) {
      add(dir_path, rel, name, st, false);
      return is_dir ? walk(rel, mode, false) : Result<void>{};
    }
    const std::string rp = repo_path(rel);
    // --exclude and .gpurentignore first: they leave out anything, tracked files too.
    const IgnorePattern* by = m_matcher.decide(rp, is_dir, mode == Mode::rules && name != ".git");
    if (by != nullptr && !by->negated) {
      skip(dir_path / name, rel, is_dir, st, reason_of(*by));
      return {};
    }
    if (name == ".git") {
      return git_dir(dir_path, rel, name, st);
    }
    if (is_dir && m_never.contains({st.st_dev, st.st_ino})) {
      skip(dir_path / name, rel, true, st, "gpurent's own state or backups directory: never pushed");
      return {};
    }
    if (is_dir && holds_backup(dir_path / name)) {
      skip(dir_path / name, rel, true, st, "a gpurent backup (it holds .gpurent-manifest.json): never pushed back");
      return {};
    }
    if (kind == EntryKind::other) {
      skip(dir_path / name, rel, false, st, "not a regular file, directory or symbolic link");
      return {};
    }
    if (mode == Mode::rules) {
      if (is_dir && is_repository(dir_path / name)) {
        // A repository inside a tree that is not one: git's answer from here down.
        TRY_ASSIGN(const GitFiles files, list_git_files(dir_path / name));
        add_git_files(files, rel);
        add(dir_path, rel, name, st);
        return walk(rel, Mode::git, false);
      }
      add(dir_path, rel, name, st);
      return is_dir ? walk(rel, Mode::rules, false) : Result<void>{};
    }
    // Git mode: what git lists, and what a .gpurentignore `!` re-includes.
    const bool in = forced || (by != nullptr && by->negated);
    if (is_dir ? (in || git_lists_below(rel)) : (in || git_lists(rel))) {
      add(dir_path, rel, name, st);
      return is_dir ? walk(rel, Mode::git, in) : Result<void>{};
    }
    m_git_skips.push_back(m_out.skipped.size());
    skip(dir_path / name, rel, is_dir, st, "git does not list it");
    return {};
  }

  static std::string reason_of(const IgnorePattern& by)
  {
    return by.origin + ": " + (by.negated ? "!" : "") + by.pattern + (by.dir_only ? "/" : "");
  }

  // A directory `gpurent backup` wrote (`run --then backup` defaults inside the project).
  static bool holds_backup(const std::filesystem::path& dir)
  {
    struct stat st {};
    return ::lstat((dir / k_manifest_name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  static bool is_repository(const std::filesystem::path& dir)
  {
    struct stat st {};
    return ::lstat((dir / ".git").c_str(), &st) == 0;
  }

  Result<void> git_dir(const std::filesystem::path& dir_path, const std::string& rel, const std::string& name, const struct stat& st)
  {
    SkippedPath s{rel, S_ISDIR(st.st_mode), 0, 0, true, "the repository's history: sent only with --with-git"};
    if (s.directory) {
      measure(dir_path / name, s);
    } else {
      s.bytes = static_cast<std::uint64_t>(st.st_size);
      s.files = 1;
    }
    if (m_opts.with_git) {
      s.reason = "sent (--with-git)";
      m_out.git_dirs_sent = true;
      m_out.git_dirs.push_back(std::move(s));
      // Read last, after every git command of the walk: reading a split index touches
      // .git/sharedindex.* (git keeps it from expiring), which would otherwise look changed.
      m_deferred_git_dirs.push_back(Deferred{dir_path, rel, name, st});
      return {};
    }
    m_out.git_dirs.push_back(std::move(s));
    return {};
  }

  // The rule behind each path git left out, asked of git in one call per repository.
  Result<void> explain_git_skips()
  {
    if (m_git_skips.empty()) {
      return {};
    }
    std::vector<std::string> paths;
    for (const auto i : m_git_skips) {
      paths.push_back(m_out.skipped[i].path);
    }
    TRY_ASSIGN(const auto reasons, git_ignore_reasons(m_root, m_nested_repos, paths));
    for (const auto i : m_git_skips) {
      auto& s = m_out.skipped[i];
      if (const auto it = reasons.find(s.path); it != reasons.end()) {
        s.reason = it->second;
      } else if (s.directory && s.files == 0) {
        s.reason = "git lists nothing in it";
      }
    }
    // Empty directories git does not list are not worth a line.
    std::vector<SkippedPath> kept;
    for (auto& s : m_out.skipped) {
      if (!(s.directory && s.exact && s.files == 0 && s.reason == "git lists nothing in it")) {
        kept.push_back(std::move(s));
      }
    }
    m_out.skipped = std::move(kept);
    return {};
  }

  // `scan`: read the file for likely secrets (never inside a `.git` sent with --with-git).
  void add(const std::filesystem::path& dir_path, const std::string& rel, const std::string& name, const struct stat& st,
           bool scan = true)
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
    if (e.kind == EntryKind::directory && is_repository(dir_path / name)) {
      m_nested_repos.push_back(rel);
    }
    if (e.kind == EntryKind::file && m_opts.check_secrets && scan) {
      check_secret(dir_path / name, rel);
    }
    m_out.entries.push_back(std::move(e));
  }

  void check_secret(const std::filesystem::path& full, const std::string& rel)
  {
    auto why = secret_by_name(rel);
    if (!why) {
      why = secret_by_content(read_head(full));
    }
    if (!why) {
      return;
    }
    bool allowed = false;
    for (std::size_t i = 0; i < m_allowed.size(); ++i) {
      if (secret_allowed(rel, {m_allowed[i]})) {
        m_allow_used.insert(i);
        allowed = true;
      }
    }
    (allowed ? m_out.allowed_secrets : m_out.secrets).push_back(SecretFinding{rel, *why});
  }

  static std::string read_head(const std::filesystem::path& file)
  {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
      return {};
    }
    std::string head(k_secret_head_bytes, '\0');
    std::size_t got = 0;
    while (got < head.size()) {
      const auto n = ::read(fd, head.data() + got, head.size() - got);
      if (n > 0) {
        got += static_cast<std::size_t>(n);
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    ::close(fd);
    head.resize(got);
    return head;
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
  std::set<std::string> m_git_files;        // relative to the root
  std::vector<std::string> m_nested_repos;  // repositories met below the root, relative to it
  std::vector<std::size_t> m_git_skips;     // indexes into m_out.skipped that git left out
  std::vector<std::string> m_allowed;       // normalized --allow-secret values
  std::set<std::size_t> m_allow_used;
  std::set<std::pair<dev_t, ino_t>> m_never;  // WalkOptions::never, by device and inode
  struct Deferred {
    std::filesystem::path dir_path;
    std::string rel;
    std::string name;
    struct stat st;
  };
  std::vector<Deferred> m_deferred_git_dirs;  // `.git` directories sent with --with-git
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
