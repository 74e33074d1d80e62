// SPDX-License-Identifier: MIT
#include "sync/git_tree.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "sync/git_output.hpp"
#include "sync/local_process.hpp"

namespace gpurent {
namespace {

constexpr int k_max_depth = 16;  // nested repositories inside nested repositories

// The variables a git hook or a user's shell may set that would make git read another
// repository than the one at `cwd`.
const std::vector<std::string> k_repo_env{"GIT_DIR",          "GIT_WORK_TREE",       "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                                          "GIT_COMMON_DIR",   "GIT_NAMESPACE",       "GIT_PREFIX",     "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                                          "GIT_CEILING_DIRECTORIES"};

Result<LocalProcessResult> git(const std::filesystem::path& cwd, std::vector<std::string> args, std::string input = {})
{
  LocalProcessRequest req;
  // No fsmonitor hook runs on gpurent's behalf, the index is not refreshed (no lock), paths come as bytes.
  req.argv = {"git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off"};
  req.argv.insert(req.argv.end(), args.begin(), args.end());
  req.cwd = cwd;
  req.input = std::move(input);
  req.unset_env = k_repo_env;
  auto r = run_local_process(req);
  if (!r && r.error().code == Errc::not_found) {
    return fail(Errc::not_found, cwd.string() + " is a git repository but git is not installed; install git (apt-get install git): "
                                                 "push sends exactly what git would commit");
  }
  return r;
}

std::string first_line(const std::string& text)
{
  auto line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
    line.pop_back();
  }
  return line.empty() ? std::string("no message") : line;
}

bool has_dot_git(const std::filesystem::path& dir)
{
  struct stat st {};
  return ::lstat((dir / ".git").c_str(), &st) == 0;
}

bool directory_on_disk(const std::filesystem::path& p)
{
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string join(const std::string& prefix, const std::string& path)
{
  return prefix.empty() ? path : prefix + "/" + path;
}

Result<void> list_into(const std::filesystem::path& root, const std::string& prefix, int depth, GitFiles& out)
{
  const auto dir = prefix.empty() ? root : root / prefix;
  TRY_ASSIGN(const auto run, git(dir, {"ls-files", "-z", "--cached", "--others", "--exclude-standard"}));
  if (run.status != 0) {
    // A repository git refuses is the user's to mend: a usage error (exit 2), with git's words.
    return fail(Errc::usage, "git cannot list " + dir.string() + ": " + first_line(run.err) +
                                         "; run `git status` there, or push a directory outside the repository");
  }
  auto parsed = parse_ls_files(run.out);
  if (!parsed) {
    return fail(Errc::internal, "git ls-files in " + dir.string() + ": " + parsed.error().message);
  }
  auto listing = std::move(*parsed);
  std::istringstream said(run.err);
  for (std::string line; std::getline(said, line);) {
    if (!line.empty() && out.warnings.size() < 20) {
      out.warnings.push_back("git (in " + (prefix.empty() ? std::string(".") : prefix) + "): " + line);
    }
  }
  // A submodule is a gitlink among the tracked paths: a directory on disk.
  std::vector<std::string> nested = std::move(listing.nested);
  for (const auto& f : listing.files) {
    if (directory_on_disk(dir / f)) {
      nested.push_back(f);
    } else {
      out.files.push_back(join(prefix, f));
    }
  }
  for (const auto& n : nested) {
    const std::string rel = join(prefix, n);
    if (!has_dot_git(root / rel)) {
      continue;  // a submodule never checked out: nothing to send
    }
    if (depth >= k_max_depth) {
      return fail(Errc::usage, "push: repositories nested more than " + std::to_string(k_max_depth) + " deep at " + rel);
    }
    TRY(list_into(root, rel, depth + 1, out));
  }
  return {};
}

// The repository (root itself, "", or a nested one) that holds `path`: the longest prefix.
std::string repo_of(const std::vector<std::string>& repos, const std::string& path)
{
  std::string best;
  for (const auto& r : repos) {
    if (path.starts_with(r + "/") && r.size() > best.size()) {
      best = r;
    }
  }
  return best;
}

}  // namespace

std::optional<GitRepoLocation> find_git_repo(const std::filesystem::path& root)
{
  std::error_code ec;
  auto dir = std::filesystem::canonical(root, ec);
  if (ec) {
    return std::nullopt;
  }
  const auto start = dir;
  while (true) {
    if (has_dot_git(dir)) {
      GitRepoLocation r{dir, std::filesystem::relative(start, dir, ec).generic_string()};
      if (r.prefix == ".") {
        r.prefix.clear();
      }
      return r;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) {
      return std::nullopt;
    }
    dir = dir.parent_path();
  }
}

Result<GitFiles> list_git_files(const std::filesystem::path& root)
{
  GitFiles out;
  TRY(list_into(root, "", 0, out));
  std::sort(out.files.begin(), out.files.end());
  out.files.erase(std::unique(out.files.begin(), out.files.end()), out.files.end());
  return out;
}

Result<std::map<std::string, std::string>> git_ignore_reasons(const std::filesystem::path& root, const std::vector<std::string>& repos,
                                                             const std::vector<std::string>& paths)
{
  std::map<std::string, std::vector<std::string>> by_repo;
  for (const auto& p : paths) {
    by_repo[repo_of(repos, p)].push_back(p);
  }
  std::map<std::string, std::string> out;
  for (const auto& [repo, list] : by_repo) {
    std::string input;
    for (const auto& p : list) {
      input += (repo.empty() ? p : p.substr(repo.size() + 1));
      input += '\0';
    }
    TRY_ASSIGN(const auto run, git(repo.empty() ? root : root / repo, {"check-ignore", "-z", "-v", "-n", "--stdin"}, input));
    if (run.status != 0 && run.status != 1) {  // 1: none of them is ignored
      return fail(Errc::usage, "git check-ignore in " + (repo.empty() ? root : root / repo).string() + ": " + first_line(run.err));
    }
    const auto reasons = parse_check_ignore(run.out);
    if (!reasons) {
      return fail(Errc::internal, "git check-ignore: " + reasons.error().message);
    }
    for (const auto& [path, why] : *reasons) {
      out[join(repo, path)] = why;
    }
  }
  return out;
}

Result<GitHead> git_head(const std::filesystem::path& root)
{
  GitHead head;
  TRY_ASSIGN(const auto rev, git(root, {"rev-parse", "-q", "--verify", "HEAD"}));
  if (rev.status == 0) {
    head.commit = parse_commit_id(rev.out);
    if (!head.commit) {
      return fail(Errc::internal, "git rev-parse HEAD in " + root.string() + " printed no object name");
    }
  }
  TRY_ASSIGN(const auto status, git(root, {"status", "--porcelain", "-z", "--untracked-files=no"}));
  if (status.status != 0) {
    return fail(Errc::usage, "git status in " + root.string() + ": " + first_line(status.err));
  }
  head.dirty = !status.out.empty();
  return head;
}

}  // namespace gpurent
