// SPDX-License-Identifier: MIT
#include "cli/destroy_backup.hpp"

#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <system_error>

#include "cli/backup_place.hpp"
#include "cli/config.hpp"
#include "cli/job_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "common/units.hpp"
#include "sync/manifest.hpp"
#include "sync/remote_sizes.hpp"

namespace gpurent {
namespace {

std::string joined(const std::vector<std::string>& v)
{
  std::string out;
  for (const auto& p : v) {
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

Result<std::vector<std::string>> job_dirs(StateStore& store, const ServerRecord& rec)
{
  TRY_ASSIGN(auto jobs, store.jobs(to_string(SshTarget{rec.user, rec.host, rec.port})));
  std::vector<std::string> out;
  for (const auto& j : jobs) {
    if (j.server_id == rec.id && !j.workdir.empty()) {
      out.push_back(j.workdir);
    }
  }
  return out;
}

// The plan an interrupted `down --destroy` recorded, unless the flags ask for another one.
Result<std::optional<BackupPlanRecord>> recorded_plan(StateStore& store, const ServerRecord& rec, const DownFlags& flags)
{
  TRY_ASSIGN(auto plan, store.backup_plan(rec.id));
  if (!plan) {
    return plan;
  }
  std::error_code ec;
  const bool other_paths = !flags.paths.empty() && flags.paths != plan->given_paths;
  const bool other_to = !flags.to.empty() && std::filesystem::absolute(flags.to, ec).lexically_normal() !=
                                                 std::filesystem::path(plan->dest).lexically_normal();
  if (other_paths || other_to) {
    DownFlags again = flags;
    again.paths = plan->given_paths;
    again.to = plan->given_to.empty() ? std::string{} : plan->dest;
    return fail(Errc::refused, "refusing to back up " + rec.name + " differently: an interrupted `down --destroy` recorded "
                                   "its backup (" + joined(plan->remote_paths) + " to " + plan->dest + ") and only that one "
                                   "resumes, so its partial copy is finished, not left behind. Resume it with `" +
                                   down_command_line(again) + "`; back up anything else first with `gpurent backup " +
                                   rec.name + " PATH --to DIR`. Nothing was copied or destroyed");
  }
  return plan;
}

// The destination must be a directory (or creatable as one) with room for what is still to copy.
Result<void> check_destination(const std::filesystem::path& dest, std::uint64_t bytes)
{
  std::error_code ec;
  std::filesystem::path existing = dest;
  while (!existing.empty() && !std::filesystem::exists(existing, ec)) {
    existing = existing.parent_path();
  }
  const auto refuse = [&](const std::string& why) {
    return fail(Errc::refused, "refusing to destroy: the backup destination " + dest.string() + " " + why +
                                   "; choose another --to (nothing was copied or destroyed)");
  };
  if (existing.empty() || !std::filesystem::is_directory(existing, ec)) {
    return refuse("cannot be created (" + existing.string() + " is not a directory)");
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return refuse("is not writable (" + existing.string() + ")");
  }
  std::uint64_t have = 0;
  if (auto m = load_manifest(dest / k_manifest_name)) {
    for (const auto& [path, e] : m->entries) {
      have += e.kind == EntryKind::file ? e.size : 0;
    }
  }
  const std::uint64_t need = bytes > have ? bytes - have : 0;
  const auto space = std::filesystem::space(existing, ec);
  if (!ec && space.available < need) {
    return refuse("has " + format_bytes(space.available) + " free and the backup needs " + format_bytes(need) + " more");
  }
  return {};
}

Result<void> probe(SshSession& session, std::vector<BackupSource>& sources)
{
  std::vector<std::string> paths;
  for (const auto& src : sources) {
    paths.push_back(src.path);
  }
  if (paths.empty()) {
    return {};
  }
  TRY_ASSIGN(const ExecResult r, session.exec(remote_sizes_command(paths)));
  if (r.exit_status != 0) {
    return fail(Errc::unavailable, "the server could not say what is at the paths to back up (exit " +
                                       std::to_string(r.exit_status) + ")");
  }
  TRY_ASSIGN(const auto sizes, parse_remote_sizes(r.out, paths.size()));
  for (std::size_t i = 0; i < sources.size(); ++i) {
    sources[i].size = sizes[i];
  }
  return {};
}

}  // namespace

Result<PreparedBackup> prepare_destroy_backup(Services& s, StateStore& store, const ServerRecord& rec, const Config& cfg,
                                              const DownFlags& flags)
{
  PreparedBackup b;
  TRY_ASSIGN(auto recorded, recorded_plan(store, rec, flags));
  TRY_ASSIGN(const auto pushes, store.push_dirs(rec.id));
  std::vector<std::string> push_paths;
  for (const auto& p : pushes) {
    push_paths.push_back(p.remote_dir);
  }
  TRY_ASSIGN(auto jobs, job_dirs(store, rec));

  TRY_ASSIGN(SshOptions options, make_ssh_options(s, flags.ssh));
  apply_remembered(s, options, flags.ssh, rec);
  const SshTarget target{rec.user, rec.host, rec.port};
  TRY_ASSIGN(b.session, connect_ssh(s, target, options));
  // A job records the directory it ran in as the server's shell resolved it (HOME/gpurent/x);
  // a push records "~/gpurent/x": one directory, named once.
  TRY_ASSIGN(const ExecResult home, b.session->exec("printf '%s' \"$HOME\""));
  if (home.exit_status == 0) {
    for (auto& p : push_paths) {
      p = home_relative(p, home.out);
    }
    for (auto& j : jobs) {
      j = home_relative(j, home.out);
    }
  }
  b.sources = gather_backup_sources(push_paths, jobs, rec.terms.workspace_dir, flags.paths);
  if (recorded) {
    // Resumed as recorded: exactly its paths, named with the reasons they were chosen.
    std::vector<BackupSource> as_recorded;
    for (const auto& p : recorded->remote_paths) {
      const auto same = std::find_if(b.sources.begin(), b.sources.end(), [&](const BackupSource& x) { return x.path == p; });
      BackupSource src = same != b.sources.end() ? *same : BackupSource{p, {BackupOrigin::given}, std::nullopt, {}};
      src.inside.reset();
      as_recorded.push_back(std::move(src));
    }
    b.sources = std::move(as_recorded);
    b.plan = *recorded;
    b.resumed = true;
  }

  TRY(probe(*b.session, b.sources));
  if (auto why = backup_refusal(b.sources)) {
    return fail(Errc::refused, "refusing to destroy " + rec.name + ": " + *why + ". Nothing was copied or destroyed");
  }
  if (!b.resumed) {
    std::filesystem::path dest;
    if (!flags.to.empty()) {
      dest = flags.to;
    } else {
      TRY_ASSIGN(dest, default_backup_dir(s, cfg.backup_dir, rec.name));
    }
    std::error_code ec;
    dest = std::filesystem::absolute(dest, ec).lexically_normal();
    b.plan = BackupPlanRecord{rec.id, paths_to_copy(b.sources), dest.string(), flags.paths, flags.to, s.clock.now()};
  }
  std::uint64_t bytes = 0;
  for (const auto& src : b.sources) {
    bytes += src.inside ? 0 : src.size.bytes;
  }
  TRY(check_destination(b.plan.dest, bytes));
  b.more_sessions = more_sessions(s, target, options, *b.session);
  return b;
}

std::string backup_plan_text(const PreparedBackup& b)
{
  std::string out = b.resumed ? "  backs up (resuming the interrupted backup, as it was recorded) to " + b.plan.dest + ":\n"
                              : "  backs up to " + b.plan.dest + ":\n";
  for (const auto& src : b.sources) {
    out += "    " + source_line(src);
    if (src.inside) {
      out += " (inside " + b.sources[*src.inside].path + ", copied with it)";
    } else if (!src.size.exists) {
      out += ": nothing to copy";
    }
    out += "\n";
  }
  return out;
}

Result<BackupRecord> run_destroy_backup(Services& s, StateStore& store, const ServerRecord& rec, PreparedBackup& b,
                                        BackupObserver& observer)
{
  TRY(store.put_backup_plan(b.plan));
  BackupRequest req;
  req.remote_paths = b.plan.remote_paths;
  req.dest = b.plan.dest;
  req.more_sessions = b.more_sessions;
  s.err << "gpurent: " << (b.resumed ? "resuming the backup of " : "backing up ") << rec.name << " to " << req.dest.string()
        << " before destroying it\n";
  auto report = run_backup(*b.session, req, observer);
  if (!report && (report.error().interrupted || s.signal_caught() != 0)) {
    return std::unexpected(report.error());  // the plan stays: the next `down --destroy` resumes it
  }
  TRY(store.clear_backup_plan(rec.id));
  if (!report) {
    return std::unexpected(report.error());
  }
  b.report = *report;
  const bool verified = report->verified && report->failed.empty();
  return store.add_backup(BackupRecord{0, rec.id, s.clock.now(), report->manifest.string(), verified, report->files_total,
                                       Bytes{report->bytes_total}});
}

nlohmann::json backup_plan_json(const PreparedBackup& b)
{
  nlohmann::json paths = nlohmann::json::array();
  const auto copied = b.plan.remote_paths;
  for (const auto& src : b.sources) {
    nlohmann::json origins = nlohmann::json::array();
    for (const auto o : src.origins) {
      origins.push_back(to_string(o));
    }
    paths.push_back({{"path", text_json(src.path)},
                     {"origins", origins},
                     {"exists", src.size.exists},
                     {"bytes", src.size.bytes},
                     {"files", src.size.files},
                     {"copied", std::find(copied.begin(), copied.end(), src.path) != copied.end()},
                     {"inside", src.inside ? nlohmann::json(text_json(b.sources[*src.inside].path)) : nlohmann::json(nullptr)}});
  }
  nlohmann::json out{{"dest", text_json(b.plan.dest)}, {"resumed", b.resumed}, {"paths", paths}};
  if (b.report) {
    out["files_total"] = b.report->files_total;
    out["bytes_total"] = b.report->bytes_total;
    out["verified"] = b.report->verified && b.report->failed.empty();
    out["manifest"] = text_json(b.report->manifest.string());
  }
  return out;
}

}  // namespace gpurent
