// SPDX-License-Identifier: MIT
#include "sync/backup_plan.hpp"

#include <algorithm>
#include <set>

#include "sync/backup.hpp"

namespace gpurent {
namespace {

std::vector<std::string_view> components(std::string_view path)
{
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto end = slash == std::string_view::npos ? path.size() : slash;
    out.push_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return out;
}

std::string_view parent_of(std::string_view path)
{
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

bool excluded(const Filters& f, std::string_view path)
{
  return std::any_of(f.exclude.begin(), f.exclude.end(), [&](const std::string& p) { return path_matches(p, path); });
}

bool included(const Filters& f, std::string_view path)
{
  return f.include.empty() ||
         std::any_of(f.include.begin(), f.include.end(), [&](const std::string& p) { return path_matches(p, path); });
}

}  // namespace

bool is_safe_relative_path(std::string_view path) noexcept
{
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos) {
    return false;
  }
  for (const auto c : components(path)) {
    if (c.empty() || c == "." || c == "..") {
      return false;
    }
  }
  return true;
}

bool link_stays_inside(std::string_view link_path, std::string_view target) noexcept
{
  if (target.empty() || target.front() == '/' || target.find('\0') != std::string_view::npos) {
    return false;
  }
  // Depth of the directory holding the link, then walk the target lexically.
  long depth = static_cast<long>(components(link_path).size()) - 1;
  for (const auto c : components(target)) {
    if (c == "..") {
      if (--depth < 0) {
        return false;
      }
    } else if (!c.empty() && c != ".") {
      ++depth;
    }
  }
  return true;
}

bool glob_match(std::string_view pattern, std::string_view text)
{
  // Dynamic programming over (pattern index, text index): linear memory, no backtracking blow-up.
  const std::size_t n = text.size();
  std::string cur(n + 1, '\0');
  std::string next(n + 1, '\0');
  cur[0] = 1;
  std::size_t i = 0;
  while (i < pattern.size()) {
    next.assign(n + 1, '\0');
    const char pc = pattern[i];
    if (pc == '*') {
      const bool star2 = i + 1 < pattern.size() && pattern[i + 1] == '*';
      bool reach = false;
      for (std::size_t j = 0; j <= n; ++j) {
        // A star extends a match over any character, '/' only for "**".
        reach = cur[j] != 0 || (reach && j > 0 && (star2 || text[j - 1] != '/'));
        next[j] = reach ? 1 : 0;
      }
      i += star2 ? 2 : 1;
    } else {
      char literal = pc;
      bool any = pc == '?';
      std::size_t step = 1;
      if (pc == '\\' && i + 1 < pattern.size()) {
        literal = pattern[i + 1];
        any = false;
        step = 2;
      }
      for (std::size_t j = 0; j < n; ++j) {
        if (cur[j] != 0 && ((any && text[j] != '/') || (!any && text[j] == literal))) {
          next[j + 1] = 1;
        }
      }
      i += step;
    }
    std::swap(cur, next);
  }
  return cur[n] != 0;
}

bool path_matches(std::string_view pattern, std::string_view path)
{
  if (pattern.find('/') == std::string_view::npos) {
    for (const auto c : components(path)) {
      if (glob_match(pattern, c)) {
        return true;
      }
    }
    return false;
  }
  while (!pattern.empty() && pattern.front() == '/') {
    pattern.remove_prefix(1);
  }
  for (std::size_t end = 0; end <= path.size(); ++end) {
    if ((end == path.size() || path[end] == '/') && glob_match(pattern, path.substr(0, end))) {
      return true;
    }
  }
  return false;
}

BackupPlan plan_backup(const std::vector<RemoteEntry>& remote, const Manifest& manifest,
                       const std::map<std::string, LocalFile>& local, const Filters& filters)
{
  BackupPlan plan;
  std::map<std::string, const RemoteEntry*> by_path;
  for (const auto& e : remote) {
    if (!is_safe_relative_path(e.path)) {
      plan.rejected.push_back("unsafe name " + std::string(e.path) + ": not copied");
      continue;
    }
    const std::string_view base = std::string_view(e.path).substr(e.path.rfind('/') + 1);
    if (base.ends_with(k_partial_suffix) || e.path == k_manifest_name) {
      plan.rejected.push_back(e.path + ": name reserved by gpurent backup, not copied");
      continue;
    }
    by_path.emplace(e.path, &e);
  }

  // Keep an entry only when every ancestor is a directory of the listing: nothing is ever
  // written through a symlink or into a path the listing does not vouch for.
  std::vector<const RemoteEntry*> selected;
  std::set<std::string> needed_dirs;
  for (const auto& [path, e] : by_path) {
    bool parents_ok = true;
    for (auto p = parent_of(path); !p.empty(); p = parent_of(p)) {
      const auto it = by_path.find(std::string(p));
      if (it == by_path.end() || it->second->kind != EntryKind::directory) {
        parents_ok = false;
        break;
      }
    }
    if (!parents_ok) {
      plan.rejected.push_back(path + ": a parent is not a directory on the server, not copied");
      continue;
    }
    if (e->kind == EntryKind::other || excluded(filters, path)) {
      continue;
    }
    if (e->kind == EntryKind::directory) {
      if (filters.include.empty() || included(filters, path)) {
        needed_dirs.insert(path);
      }
      continue;
    }
    if (!included(filters, path)) {
      continue;
    }
    selected.push_back(e);
    for (auto p = parent_of(path); !p.empty(); p = parent_of(p)) {
      needed_dirs.insert(std::string(p));
    }
  }

  for (const auto& d : needed_dirs) {  // std::set order puts parents before children
    plan.actions.push_back(PlanAction{ActionKind::make_dir, *by_path.at(d), false});
  }
  for (const RemoteEntry* e : selected) {
    if (e->kind == EntryKind::symlink) {
      plan.actions.push_back(PlanAction{ActionKind::make_symlink, *e, !link_stays_inside(e->path, e->link_target)});
      continue;
    }
    ++plan.files_total;
    plan.bytes_total += e->size;
    bool unchanged = false;
    const auto m = manifest.entries.find(e->path);
    if (m != manifest.entries.end() && m->second.kind == EntryKind::file && m->second.size == e->size &&
        m->second.mtime_ns == e->mtime_ns) {
      const auto l = local.find(e->path);
      unchanged = l != local.end() && l->second.size == e->size && l->second.mtime_ns == e->mtime_ns;
    }
    if (unchanged) {
      plan.actions.push_back(PlanAction{ActionKind::skip, *e, false});
    } else {
      plan.actions.push_back(PlanAction{ActionKind::copy, *e, false});
      ++plan.files_to_copy;
      plan.bytes_to_copy += e->size;
    }
  }
  for (const auto& [path, entry] : manifest.entries) {
    if (!by_path.contains(path)) {
      plan.forgotten.push_back(path);
    }
  }
  return plan;
}

bool same_listed_mtime(std::int64_t a_ns, std::int64_t b_ns) noexcept
{
  constexpr std::int64_t second = 1'000'000'000;
  if (a_ns == b_ns) {
    return true;
  }
  const auto floor_s = [](std::int64_t ns) { return ns >= 0 ? ns / second : -((-(ns + 1)) / second) - 1; };
  const bool whole = a_ns % second == 0 || b_ns % second == 0;
  return whole && floor_s(a_ns) == floor_s(b_ns);
}

}  // namespace gpurent
