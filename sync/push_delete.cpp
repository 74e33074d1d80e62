// SPDX-License-Identifier: MIT
#include "sync/push_delete.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include "sync/backup.hpp"
#include "sync/git_output.hpp"
#include "sync/range_plan.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

// "a/b/c" -> "a", "a/b".
void add_ancestors(std::set<std::string, std::less<>>& out, std::string_view path)
{
  for (auto slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
    out.emplace(path.substr(0, slash));
  }
}


bool has_git_component(std::string_view p)
{
  std::size_t start = 0;
  while (true) {
    const auto slash = p.find('/', start);
    if (p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start) == ".git") {
      return true;
    }
    if (slash == std::string_view::npos) {
      return false;
    }
    start = slash + 1;
  }
}

bool bookkeeping(std::string_view p)
{
  const std::string ledger = std::string(k_partial_suffix) + std::string(k_range_ledger_suffix);
  return p.ends_with(k_partial_suffix) || p.ends_with(ledger);
}

}  // namespace

bool path_or_ancestor_in(const PathSet& set, std::string_view path)
{
  if (set.contains(path)) {
    return true;
  }
  for (auto slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1)) {
    if (set.contains(path.substr(0, slash))) {
      return true;
    }
  }
  return false;
}

PushDeletions plan_push_deletions(const std::vector<LocalEntry>& local, const std::vector<SkippedPath>& skipped,
                                  const std::vector<RemoteEntry>& remote, const std::optional<PathSet>& pushed_before)
{
  PushDeletions out;
  out.recorded = pushed_before.has_value();
  PathSet present;    // local entries: never deleted
  PathSet holders;    // their directories, and those of every other path kept
  PathSet left_out;   // skipped paths: they and what is below them are kept
  for (const auto& e : local) {
    present.insert(e.path);
    add_ancestors(holders, e.path);
  }
  for (const auto& sk : skipped) {
    left_out.insert(sk.path);
    add_ancestors(holders, sk.path);
  }
  // Not local, and not kept for any other reason: deleted when pushed before, else kept.
  PathSet unpushed;
  std::vector<std::string> candidates;
  for (const auto& r : remote) {
    const std::string_view p = r.path;
    if (has_git_component(p) || bookkeeping(p) || !safe_relative_path(p) || path_or_ancestor_in(left_out, p)) {
      add_ancestors(holders, p);  // kept, and so is the directory that holds it
      continue;
    }
    if (present.contains(p)) {
      continue;
    }
    if (!pushed_before || !pushed_before->contains(p)) {
      unpushed.insert(r.path);
      add_ancestors(holders, p);
      continue;
    }
    candidates.push_back(r.path);
  }
  std::sort(candidates.begin(), candidates.end());
  PathSet chosen;
  for (auto& c : candidates) {
    if (holders.contains(c) || path_or_ancestor_in(chosen, c)) {
      continue;  // holds something kept, or below a directory already chosen
    }
    chosen.insert(c);
    out.doomed.push_back(std::move(c));
  }
  for (const auto& u : unpushed) {
    const auto slash = u.rfind('/');
    // Top-most: below neither a path kept as never pushed nor one to delete.
    bool below = false;
    for (auto s = u.find('/'); s != std::string::npos && s <= slash; s = u.find('/', s + 1)) {
      const std::string_view up = std::string_view(u).substr(0, s);
      if (unpushed.contains(up) || chosen.contains(up)) {
        below = true;
        break;
      }
    }
    if (!below) {
      out.never_pushed.push_back(u);
    }
  }
  return out;
}

std::string push_delete_command(std::string_view dir)
{
  return "d=" + remote_shell_path(dir) +
         "\n"
         "cd -- \"$d\" 2>/dev/null || { printf 'gpurent-agent-error\\0cd\\0'; exit 3; }\n"
         "xargs -0 rm -rf -- 2>/dev/null\n"
         "printf 'gpurent-delete\\0%d\\0' $?\n";
}

Result<std::string> push_delete_input(const std::vector<std::string>& rels)
{
  std::string out;
  for (const auto& r : rels) {
    if (!safe_relative_path(r)) {
      return fail(Errc::invalid_input, "push --delete: refusing to delete '" + r + "': not a path inside the pushed directory");
    }
    out += "./" + r;
    out.push_back('\0');
  }
  return out;
}

Result<int> parse_push_delete(std::string_view out)
{
  constexpr std::string_view error = "gpurent-agent-error";
  if (out.starts_with(error)) {
    return fail(Errc::unavailable, "push --delete: the pushed directory is gone from the server; nothing was deleted");
  }
  constexpr std::string_view marker = "gpurent-delete";
  if (!out.starts_with(marker) || out.size() <= marker.size() || out[marker.size()] != '\0') {
    return fail(Errc::invalid_input, "push --delete: no report from the server; run `gpurent push --delete` again to see what is left");
  }
  out.remove_prefix(marker.size() + 1);
  const auto nul = out.find('\0');
  int status = 0;
  const auto digits = out.substr(0, nul);
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), status);
  if (nul == std::string_view::npos || digits.empty() || ec != std::errc{} || p != digits.data() + digits.size()) {
    return fail(Errc::invalid_input, "push --delete: unreadable status from the server; run `gpurent push --delete` again");
  }
  return status;
}

}  // namespace gpurent
