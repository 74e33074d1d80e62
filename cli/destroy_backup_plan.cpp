// SPDX-License-Identifier: MIT
#include "cli/destroy_backup_plan.hpp"

#include <algorithm>
#include <map>

#include "common/units.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

// The path as the server's shell sees it: "~" and "~/x" relative to the login directory ("",
// "x"), trailing slashes and "./" prefixes dropped.
std::string shell_key(std::string p)
{
  if (p == "~" || p == "~/") {
    return {};
  }
  if (p.starts_with("~/")) {
    p.erase(0, 2);
  }
  while (p.starts_with("./")) {
    p.erase(0, 2);
  }
  if (p == ".") {
    return {};
  }
  while (p.size() > 1 && p.back() == '/') {
    p.pop_back();
  }
  return p;
}

bool is_inside(const std::string& inner, const std::string& outer)
{
  if (inner == outer) {
    return false;
  }
  const bool inner_abs = inner.starts_with('/');
  const bool outer_abs = outer.starts_with('/');
  if (inner_abs != outer_abs) {
    return false;
  }
  if (outer.empty()) {
    return true;  // the home directory holds every relative path
  }
  if (outer == "/") {
    return true;
  }
  return inner.starts_with(outer + "/");
}

// What a copied root is called under the destination when there are several (sync/backup.cpp's
// last_component).
std::string landing_name(std::string root)
{
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  const auto slash = root.rfind('/');
  std::string base = slash == std::string::npos ? root : root.substr(slash + 1);
  return (base.empty() || base == "." || base == "~" || base == "..") ? std::string("home") : base;
}

std::string size_text(const RemotePathSize& s)
{
  if (!s.exists) {
    return "NOT on the server";
  }
  if (s.files == 0) {
    return "no files";
  }
  return format_bytes(s.bytes) + " in " + std::to_string(s.files) + (s.files == 1 ? " file" : " files");
}

}  // namespace

std::string home_relative(const std::string& path, std::string_view home)
{
  std::string_view h = home;
  while (h.size() > 1 && h.back() == '/') {
    h.remove_suffix(1);
  }
  if (h.size() < 2 || !h.starts_with('/') || !path.starts_with(h)) {
    return path;
  }
  const std::string_view rest = std::string_view(path).substr(h.size());
  if (rest.empty() || rest == "/") {
    return "~";
  }
  return rest.starts_with('/') ? "~" + std::string(rest) : path;
}

const char* to_string(BackupOrigin o) noexcept
{
  switch (o) {
  case BackupOrigin::push: return "push";
  case BackupOrigin::job: return "job";
  case BackupOrigin::workspace: return "workspace";
  case BackupOrigin::given: return "--path";
  }
  return "?";
}

bool BackupSource::has(BackupOrigin o) const
{
  return std::find(origins.begin(), origins.end(), o) != origins.end();
}

std::vector<BackupSource> gather_backup_sources(const std::vector<std::string>& push_dirs, const std::vector<std::string>& job_dirs,
                                                const std::string& workspace, const std::vector<std::string>& given)
{
  std::vector<BackupSource> out;
  std::vector<std::string> keys;
  const auto add = [&](const std::string& path, BackupOrigin origin) {
    if (path.empty()) {
      return;
    }
    const std::string key = shell_key(path);
    const auto at = std::find(keys.begin(), keys.end(), key);
    if (at != keys.end()) {
      auto& s = out[static_cast<std::size_t>(at - keys.begin())];
      if (!s.has(origin)) {
        s.origins.push_back(origin);
      }
      return;
    }
    keys.push_back(key);
    out.push_back(BackupSource{path, {origin}, std::nullopt, {}});
  };
  for (const auto& p : push_dirs) {
    add(p, BackupOrigin::push);
  }
  for (const auto& p : job_dirs) {
    add(p, BackupOrigin::job);
  }
  // A provider without a volume path of its own says "~": the whole home directory, backed up
  // only when nothing else is known (what it always was), never beside the directories gpurent
  // knows the jobs used.
  const bool home_only = workspace.empty() || workspace == "~" || workspace == "~/";
  if (!home_only || (push_dirs.empty() && job_dirs.empty() && given.empty())) {
    add(home_only ? std::string("~") : workspace, BackupOrigin::workspace);
  }
  for (const auto& p : given) {
    add(p, BackupOrigin::given);
  }
  // The outermost enclosing source covers a nested one.
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::optional<std::size_t> best;
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (j != i && is_inside(keys[i], keys[j]) && (!best || keys[j].size() < keys[*best].size())) {
        best = j;
      }
    }
    out[i].inside = best;
  }
  return out;
}

std::vector<std::string> paths_to_copy(const std::vector<BackupSource>& sources)
{
  std::vector<std::string> out;
  for (const auto& s : sources) {
    if (!s.inside && s.size.exists) {
      out.push_back(s.path);
    }
  }
  return out;
}

std::optional<std::string> backup_refusal(const std::vector<BackupSource>& sources)
{
  for (const auto& s : sources) {
    if (s.has(BackupOrigin::given) && !s.size.exists) {
      return "--path " + s.path + " is not on the server; check the path (e.g. `gpurent ssh NAME -- ls`)";
    }
  }
  const auto copied = paths_to_copy(sources);
  if (copied.size() > 1) {
    std::map<std::string, std::string> landing;
    for (const auto& p : copied) {
      const auto [it, fresh] = landing.emplace(landing_name(p), p);
      if (!fresh) {
        return it->second + " and " + p + " would both be backed up as " + it->first +
               "/ in the destination; back one of them up with `gpurent backup NAME PATH --to DIR` first, then pass "
               "--no-backup";
      }
    }
  }
  std::string looked;
  bool jobs_known = false;
  bool users_found = false;
  std::uint64_t files = 0;
  for (const auto& s : sources) {
    if (s.has(BackupOrigin::push) || s.has(BackupOrigin::job)) {
      jobs_known = true;
    }
    if (s.users() && s.size.files > 0) {
      users_found = true;
    }
    if (!s.inside) {
      files += s.size.files;
    }
    looked += (looked.empty() ? "" : ", ") + s.path + " (" + size_text(s.size) + ")";
  }
  if (sources.empty()) {
    return std::string("there is nothing to back up: no push or job directory is recorded, the provider names no volume "
                       "path and no --path was given");
  }
  if (jobs_known && !users_found) {
    return "the backup would hold nothing your jobs wrote: looked at " + looked +
           "; name the files with --path, or pass --no-backup if nothing on it matters";
  }
  if (files == 0) {
    return "there are no files to back up: looked at " + looked + "; pass --no-backup if nothing on it matters";
  }
  return std::nullopt;
}

std::string source_line(const BackupSource& s)
{
  std::string origins;
  for (const auto o : s.origins) {
    origins += (origins.empty() ? "" : ", ") + std::string(to_string(o));
  }
  return s.path + " (" + origins + "): " + size_text(s.size);
}

std::string shell_word(const std::string& word)
{
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./-_").find(c) != std::string_view::npos;
  });
  if (plain) {
    return word;
  }
  return shell_quote(word);
}

std::string down_command_line(const DownFlags& f)
{
  std::string out = "gpurent down " + shell_word(f.name) + " --" + f.mode;
  const auto flag = [&](bool on, const char* name) {
    if (on) {
      out += std::string(" ") + name;
    }
  };
  const auto option = [&](const std::string& value, const char* name) {
    if (!value.empty()) {
      out += std::string(" ") + name + " " + shell_word(value);
    }
  };
  flag(f.no_backup, "--no-backup");
  flag(f.force, "--force");
  for (const auto& p : f.paths) {
    out += " --path " + shell_word(p);
  }
  option(f.to, "--to");
  option(f.ssh.host, "--host");
  option(f.ssh.identity, "--identity");
  option(f.ssh.known_hosts, "--known-hosts");
  flag(f.ssh.accept_new_host_key, "--accept-new-host-key");
  flag(f.yes, "--yes");
  flag(f.json, "--json");
  flag(f.verbose, "--verbose");
  return out;
}

}  // namespace gpurent
