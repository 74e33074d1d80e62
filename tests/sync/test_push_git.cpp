// SPDX-License-Identifier: MIT
// What `push` sends from a git repository is git's own answer (sync/local_tree.hpp over
// sync/git_tree.hpp), checked against `git ls-files` run here by the test itself: the global
// excludes file (core.excludesFile and $XDG_CONFIG_HOME/git/ignore), nested repositories and
// submodules (their own rules, never their .git), a split index, skip-worktree files,
// core.ignorecase, a symlinked or oversized .gitignore, `a**/b`, an ignored directory pushed on
// its own, --exclude over tracked files, .gpurentignore re-including, the commit recorded; and
// a generated tree with several hundred patterns. Outside git: the hand matcher, and a
// repository inside such a tree read by git.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/local_tree.hpp"

using namespace gpurent;
namespace fs = std::filesystem;

namespace {

// A test HOME: no global git configuration of the machine running the tests leaks in, and the
// git that gpurent runs (this process's environment) sees the same as the test's git.
class GitHome {
public:
  explicit GitHome(const fs::path& home) : m_home(home)
  {
    fs::create_directories(home / "config");
    ::setenv("HOME", home.c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (home / "config").c_str(), 1);
    ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    ::unsetenv("GIT_CONFIG_GLOBAL");
    ::unsetenv("GIT_DIR");
    ::unsetenv("GIT_WORK_TREE");
    sh("git config --global user.email t@example.com && git config --global user.name t && "
       "git config --global init.defaultBranch main && git config --global protocol.file.allow always",
       home);
  }
  [[nodiscard]] std::map<std::string, std::string> env() const
  {
    return {{"HOME", m_home.string()}, {"XDG_CONFIG_HOME", (m_home / "config").string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  }
  std::string sh(const std::string& script, const fs::path& cwd) const
  {
    const auto r = gpurent::testing::run_sh(script, {}, cwd, env());
    INFO(script << "\n" << r.err);
    REQUIRE(r.status == 0);
    return r.out;
  }

private:
  fs::path m_home;
};

std::set<std::string> sent_files(const LocalTree& t)
{
  std::set<std::string> out;
  for (const auto& e : t.entries) {
    if (e.kind != EntryKind::directory) {
      out.insert(e.path);
    }
  }
  return out;
}

// git's own list of what it would commit in `dir`, files that exist on disk only.
std::set<std::string> git_list(const GitHome& home, const fs::path& dir)
{
  const std::string out = home.sh("git ls-files -z --cached --others --exclude-standard", dir);
  std::set<std::string> files;
  std::string item;
  std::istringstream in(out);
  while (std::getline(in, item, '\0')) {
    struct stat st {};
    if (!item.empty() && item.back() != '/' && ::lstat((dir / item).c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      files.insert(item);
    }
  }
  return files;
}

void write(const fs::path& p, const std::string& text = "x\n")
{
  gpurent::testing::write_file(p, text);
}

// Left-out path -> the rule that left it out.
std::map<std::string, std::string> reasons(const LocalTree& t)
{
  std::map<std::string, std::string> why;
  for (const auto& s : t.skipped) {
    why[s.path] = s.reason;
  }
  return why;
}

LocalTree walk(const fs::path& root, WalkOptions o = {})
{
  auto t = walk_local_tree(root, o);
  INFO((t ? std::string() : t.error().message));
  REQUIRE(t.has_value());
  return *t;
}

}  // namespace

TEST_CASE("push from git: the global excludes file is git's, whichever way it is set", "[sync][push][git]")
{
  const test::TempDir tmp("gpurent-push-git-global");
  GitHome home(tmp.path() / "home");
  const auto repo = tmp.path() / "repo";
  write(repo / "train.py");
  write(repo / ".env", "HF_TOKEN=hf_x\n");
  write(repo / "certs" / "server.pem", "-----BEGIN CERTIFICATE-----\n");
  write(repo / "secrets" / "db.txt");
  write(repo / "notes.md");
  home.sh("git init -q . && git add train.py && git commit -qm init", repo);

  SECTION("$XDG_CONFIG_HOME/git/ignore")
  {
    write(tmp.path() / "home" / "config" / "git" / "ignore", ".env\n*.pem\nsecrets/\n");
  }
  SECTION("core.excludesFile")
  {
    write(tmp.path() / "home" / "my-excludes", ".env\n*.pem\nsecrets/\n");
    home.sh("git config --global core.excludesFile \"$HOME/my-excludes\"", repo);
  }
  const auto t = walk(repo);
  CHECK(sent_files(t) == std::set<std::string>{"notes.md", "train.py"});
  CHECK(sent_files(t) == git_list(home, repo));
  CHECK(t.secrets.empty());  // the excluded .env never reaches the secret guard
  const auto why = reasons(t);
  CHECK_THAT(why.at(".env"), Catch::Contains(": .env"));
  CHECK_THAT(why.at("secrets"), Catch::Contains(": secrets/"));
  CHECK(t.git_commit.has_value());
  CHECK(t.git_commit->size() == 40);
  CHECK_FALSE(t.git_dirty);
  write(repo / "train.py", "changed\n");
  CHECK(walk(repo).git_dirty);
}

TEST_CASE("push from git: nested repositories and submodules by their own rules, without their .git", "[sync][push][git]")
{
  const test::TempDir tmp("gpurent-push-git-nested");
  GitHome home(tmp.path() / "home");
  const auto lib = tmp.path() / "lib";
  write(lib / "lib.py");
  write(lib / ".gitignore", "*.cache\n");
  write(lib / "tracked.cache");
  home.sh("git init -q . && git add lib.py .gitignore && git add -f tracked.cache && git commit -qm lib", lib);
  const auto repo = tmp.path() / "repo";
  write(repo / "main.py");
  home.sh("git init -q . && git add main.py && git commit -qm main && git submodule add -q ../lib third_party/lib && git commit -qm sub", repo);
  write(repo / "third_party" / "lib" / "local.cache");  // ignored by the submodule's own .gitignore
  write(repo / "third_party" / "lib" / "new.py");       // untracked there, not ignored
  const auto nested = repo / "tools" / "nested";
  write(nested / "tool.py");
  write(nested / "private.txt");
  write(nested / "build.log");
  write(nested / ".gitignore", "*.log\n");
  write(nested / "forced.log");
  home.sh("git init -q . && git add tool.py .gitignore && git add -f forced.log && printf 'private.txt\\n' >> .git/info/exclude", nested);
  const auto empty_sub = repo / "vendor" / "unfetched";
  fs::create_directories(empty_sub);

  const auto t = walk(repo);
  const std::set<std::string> expected{".gitmodules",
                                       "main.py",
                                       "third_party/lib/.gitignore",
                                       "third_party/lib/lib.py",
                                       "third_party/lib/new.py",
                                       "third_party/lib/tracked.cache",
                                       "tools/nested/.gitignore",
                                       "tools/nested/forced.log",
                                       "tools/nested/tool.py"};
  CHECK(sent_files(t) == expected);
  // The same as asking git in each repository.
  std::set<std::string> by_git;
  for (const auto& f : git_list(home, repo)) {
    by_git.insert(f);
  }
  for (const auto& f : git_list(home, repo / "third_party" / "lib")) {
    by_git.insert("third_party/lib/" + f);
  }
  for (const auto& f : git_list(home, nested)) {
    by_git.insert("tools/nested/" + f);
  }
  CHECK(sent_files(t) == by_git);
  // Their .git (a directory, or a gitdir file for a submodule) is reported, not sent.
  std::set<std::string> git_dirs;
  for (const auto& d : t.git_dirs) {
    git_dirs.insert(d.path);
  }
  CHECK(git_dirs == std::set<std::string>{".git", "third_party/lib/.git", "tools/nested/.git"});
  for (const auto& f : sent_files(t)) {
    CHECK(f.find(".git/") == std::string::npos);
  }
  // The reasons come from the repository that holds the path.
  const auto why = reasons(t);
  CHECK_THAT(why.at("tools/nested/private.txt"), Catch::Contains("info/exclude"));
  CHECK_THAT(why.at("tools/nested/build.log"), Catch::Contains(".gitignore:1: *.log"));
  CHECK_THAT(why.at("third_party/lib/local.cache"), Catch::Contains(".gitignore:1: *.cache"));

  // A tree that is not a repository, holding one: git's answer inside it, the hand rules outside.
  const auto plain = tmp.path() / "plain";
  write(plain / "a.txt");
  write(plain / "skip.tmp");
  write(plain / ".gitignore", "*.tmp\n");
  fs::create_directories(plain / "proj");
  fs::copy(nested, plain / "proj", fs::copy_options::recursive);
  const auto p = walk(plain);
  CHECK_FALSE(p.git);
  CHECK(sent_files(p) == std::set<std::string>{".gitignore", "a.txt", "proj/.gitignore", "proj/forced.log", "proj/tool.py"});
}

TEST_CASE("push from git: the index's extensions and git's settings, as git reads them", "[sync][push][git]")
{
  const test::TempDir tmp("gpurent-push-git-index");
  GitHome home(tmp.path() / "home");
  const auto repo = tmp.path() / "repo";
  write(repo / ".gitignore", "*.bin\nout/\nDATA/\nx**/y\n");
  write(repo / "model.bin");  // tracked although ignored
  write(repo / "sparse.txt");
  write(repo / "src" / "a.py");
  write(repo / "data" / "rows.csv");  // DATA/ matches only with core.ignorecase
  write(repo / "xa" / "b" / "y");     // x**/y crosses directories in git 2.39
  write(repo / "out" / "tracked.txt");
  write(repo / "out" / "junk.txt");
  home.sh("git init -q . && git add .gitignore src sparse.txt && git add -f model.bin out/tracked.txt && git commit -qm init", repo);

  SECTION("a split index")
  {
    home.sh("git update-index --split-index && echo more > src/b.py && git add src/b.py", repo);
    const auto t = walk(repo);
    CHECK(sent_files(t) == git_list(home, repo));
    CHECK(sent_files(t).contains("model.bin"));
    CHECK(sent_files(t).contains("src/b.py"));
    CHECK(t.warnings.empty());
  }
  SECTION("skip-worktree")
  {
    home.sh("git update-index --skip-worktree sparse.txt", repo);
    CHECK(sent_files(walk(repo)) == git_list(home, repo));
  }
  SECTION("core.ignorecase")
  {
    home.sh("git config core.ignorecase true", repo);
    const auto t = walk(repo);
    CHECK(sent_files(t) == git_list(home, repo));
    CHECK_FALSE(sent_files(t).contains("data/rows.csv"));
  }
  SECTION("a**/b crosses directories as git 2.39 does")
  {
    CHECK(sent_files(walk(repo)) == git_list(home, repo));
  }
  SECTION("a symlinked .gitignore is not followed; a large one is applied")
  {
    write(repo / "sub" / "real-ignore", "*.txt\n");
    fs::create_symlink("real-ignore", repo / "sub" / ".gitignore");
    write(repo / "sub" / "kept.txt");
    std::string big(5 << 20, '#');
    big += "\nbig-*.dat\n";
    write(repo / "big" / ".gitignore", big);
    write(repo / "big" / "big-1.dat");
    write(repo / "big" / "small.py");
    const auto t = walk(repo);
    CHECK(sent_files(t) == git_list(home, repo));
    CHECK(sent_files(t).contains("sub/kept.txt"));
    CHECK_FALSE(sent_files(t).contains("big/big-1.dat"));
  }
  SECTION("an ignored directory pushed on its own: only what git tracks there")
  {
    const auto t = walk(repo / "out");
    CHECK(sent_files(t) == std::set<std::string>{"tracked.txt"});
    CHECK(sent_files(t) == git_list(home, repo / "out"));
  }
  SECTION("--exclude leaves out tracked files too; a .gpurentignore ! re-includes what git leaves out")
  {
    write(repo / ".gpurentignore", "!out/junk.txt\nsrc/a.py\n");
    WalkOptions o;
    o.excludes = {"model.bin"};
    const auto t = walk(repo, o);
    CHECK_FALSE(sent_files(t).contains("model.bin"));
    CHECK_FALSE(sent_files(t).contains("src/a.py"));
    CHECK(sent_files(t).contains("out/junk.txt"));
    CHECK(sent_files(t).contains("out/tracked.txt"));
  }
}

TEST_CASE("push from git: generated trees with several hundred patterns send exactly git's list", "[sync][push][git][property]")
{
  const test::TempDir tmp("gpurent-push-git-gen");
  GitHome home(tmp.path() / "home");
  const std::vector<std::string> names{"a", "b", "build", "data", "x.log", "y.txt", "model.bin", "ckpt", "Cache", "logs",
                                       "deep", "n.py", ".hidden", "out", "w[1].csv", "sp ace"};
  const std::vector<std::string> shapes{"*.{}",  "{}",   "{}/",    "/{}",   "**/{}", "{}/**", "!{}",  "*{}*", "{}?",
                                        "[ab]*", "!*.{}", "{}/*/", "\\#{}", "{}  ",  "a/**/{}"};
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    const auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
    const auto repo = tmp.path() / ("repo" + std::to_string(seed));
    // ~150 files in nested directories.
    std::vector<std::string> files;
    for (int i = 0; i < 150; ++i) {
      std::string path;
      const int depth = 1 + static_cast<int>(rng() % 4);
      for (int d = 0; d < depth; ++d) {
        path += (d == 0 ? "" : "/") + pick(names) + (d + 1 < depth ? "" : std::to_string(rng() % 3));
      }
      files.push_back(path);
    }
    for (const auto& f : files) {
      std::error_code ec;
      if (!fs::is_directory(repo / f, ec)) {
        fs::create_directories((repo / f).parent_path(), ec);
        if (!ec && !fs::exists(repo / f)) {
          std::ofstream(repo / f) << f;
        }
      }
    }
    // Several hundred patterns over the root and nested .gitignore files.
    std::size_t patterns = 0;
    std::map<fs::path, std::string> ignore_files;
    for (int i = 0; i < 320; ++i) {
      std::string pat = pick(shapes);
      const auto at = pat.find("{}");
      if (at != std::string::npos) {
        pat.replace(at, 2, pick(names));
      }
      fs::path where = repo;
      if (rng() % 3 == 0) {
        const auto& f = files[rng() % files.size()];
        const auto parent = (repo / f).parent_path();
        if (fs::is_directory(parent)) {
          where = parent;
        }
      }
      ignore_files[where / ".gitignore"] += pat + "\n";
      ++patterns;
    }
    for (const auto& [file, text] : ignore_files) {
      write(file, text);
    }
    CHECK(patterns >= 300);
    home.sh("git init -q . && git add -A && git commit -qm gen -q && echo extra > untracked-extra.py", repo);
    if (seed % 2 == 0) {
      // Every tracked file becomes ignored (git keeps listing them; nothing untracked is new).
      write(repo / ".gitignore", "*\n!.gitignore\n" + ignore_files[repo / ".gitignore"]);
    }
    const auto t = walk(repo);
    INFO("seed " << seed);
    CHECK(sent_files(t) == git_list(home, repo));
  }
}

TEST_CASE("push from git: a repository git refuses is a usage error with git's words, nothing walked", "[sync][push][git]")
{
  const test::TempDir tmp("gpurent-push-git-broken");
  GitHome home(tmp.path() / "home");
  const auto repo = tmp.path() / "repo";
  write(repo / "a.py");
  write(repo / ".git", "junk\n");  // a gitdir file git cannot read
  const auto t = walk_local_tree(repo, WalkOptions{});
  REQUIRE_FALSE(t.has_value());
  CHECK(t.error().code == Errc::usage);
  CHECK_THAT(t.error().message, Catch::Contains("git cannot list") && Catch::Contains("gitfile"));
}
