// SPDX-License-Identifier: MIT
#include "cli/job_steps.hpp"

#include <ostream>

#include "cli/down.hpp"
#include "cli/job_support.hpp"
#include "cli/services.hpp"
#include "sync/backup.hpp"

namespace gpurent {
namespace {

struct BackupStep {
  std::string remote;
  std::string local;
};

// "backup:REMOTE[:LOCAL]" -> REMOTE and LOCAL (LOCAL may be empty, and may hold ':').
std::optional<BackupStep> parse_backup(std::string_view step)
{
  if (!step.starts_with("backup:")) {
    return std::nullopt;
  }
  step.remove_prefix(7);
  const auto colon = step.find(':');
  BackupStep b{std::string(step.substr(0, colon)), colon == std::string_view::npos ? std::string() : std::string(step.substr(colon + 1))};
  return b;
}

std::string last_part(std::string path)
{
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  const auto slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.empty() || base == "~" || base == "." || base == ".." ? std::string("home") : base;
}

std::string resolve_remote(const std::string& remote, const std::string& workdir)
{
  if (remote.starts_with('/') || remote == "~" || remote.starts_with("~/")) {
    return remote;
  }
  std::string base = workdir;
  while (base.size() > 1 && base.back() == '/') {
    base.pop_back();
  }
  return remote == "." ? base : base + "/" + remote;
}

Result<void> backup_step(Services& s, StateStore& store, const JobServer& server, const BackupStep& b, std::string& detail)
{
  TRY_ASSIGN(auto session, connect_job_server(s, server));
  s.err << "gpurent: backing up " << server.dest.name << ":" << b.remote << " to " << b.local << "\n";
  BackupRequest req;
  req.remote_paths = {b.remote};
  req.dest = b.local;
  req.more_sessions = more_sessions(s, server.dest.target, server.options, *session);
  NullBackupObserver quiet;
  TRY_ASSIGN(const BackupReport report, run_backup(*session, req, quiet));
  if (server.dest.server_id != 0) {
    TRY(store.add_backup(BackupRecord{0, server.dest.server_id, s.clock.now(), std::filesystem::absolute(report.manifest).string(),
                                      report.verified && report.failed.empty(), report.files_total, Bytes{report.bytes_total}}));
  }
  detail = std::to_string(report.files_copied) + " file(s) copied, " + std::to_string(report.files_skipped) + " unchanged";
  if (!report.failed.empty()) {
    return fail(Errc::partial, std::to_string(report.failed.size()) + " file(s) failed, the first: " + report.failed.front().path + ": " +
                                   report.failed.front().error);
  }
  if (!report.verified) {
    return fail(Errc::partial, "the copy could not be verified (" + report.verify_method + ")");
  }
  detail += ", verified";
  return {};
}

}  // namespace

Result<std::vector<JobStep>> prepare_then_steps(const std::vector<std::string>& args, const std::string& workdir,
                                                const std::filesystem::path& cwd, const std::filesystem::path& backups,
                                                const std::string& name, bool tracked)
{
  std::vector<JobStep> steps;
  for (const auto& a : args) {
    if (const auto b = parse_backup(a)) {
      if (b->remote.empty()) {
        return fail(Errc::usage, "--then " + a + ": give the remote path to back up (backup:REMOTE[:LOCAL])");
      }
      if (b->local.empty() && backups.empty()) {
        return fail(Errc::usage, "--then " + a + ": no data directory for backups (neither XDG_DATA_HOME nor HOME, "
                                 "and no backup_dir in the config file); give backup:REMOTE:LOCAL");
      }
      const std::string remote = resolve_remote(b->remote, workdir);
      std::filesystem::path local = b->local.empty() ? backups / last_part(remote) : std::filesystem::path(b->local);
      if (local.is_relative()) {
        local = cwd / local;
      }
      steps.push_back(JobStep{"backup:" + remote + ":" + local.lexically_normal().string(), "pending", ""});
      continue;
    }
    if (a == "down:stop" || a == "down:hibernate" || a == "down:destroy") {
      if (!tracked) {
        return fail(Errc::refused, "--then " + a + ": " + name +
                                       " was not rented with `gpurent up` (attached or --host), so gpurent cannot release it; "
                                       "release it in the provider's console");
      }
      steps.push_back(JobStep{a, "pending", ""});
      continue;
    }
    return fail(Errc::usage, "--then " + a + ": unknown step; use backup:REMOTE[:LOCAL] or down:stop|hibernate|destroy");
  }
  return steps;
}

bool run_then_steps(Services& s, StateStore& store, const JobServer& server, JobRecord& job)
{
  bool failed = false;
  std::optional<BackupStep> last_backup;
  for (auto& step : job.steps) {
    if (step.state == "done") {
      if (auto b = parse_backup(step.step)) {
        last_backup = *b;
      }
      continue;
    }
    if (step.state != "pending" && step.state != "running") {
      failed = failed || step.state == "failed";
      continue;
    }
    if (failed) {
      step.state = "skipped";
      step.detail = "an earlier step failed";
      (void)store.update_job(job);
      continue;
    }
    step.state = "running";
    (void)store.update_job(job);
    s.err << "gpurent: job " << job.job_id << " ended; --then " << step.step << "\n";
    Result<void> r;
    std::string detail;
    if (const auto b = parse_backup(step.step)) {
      r = backup_step(s, store, server, *b, detail);
      if (r) {
        last_backup = *b;
      }
    } else if (step.step.starts_with("down:")) {
      DownRequest req{server.dest.name, step.step.substr(5), {}, {}, server.flags};
      req.ssh.host.clear();
      if (last_backup) {
        // Destroy backs up first: the path the job's backup step just copied, into the same place.
        req.backup_paths = {last_backup->remote};
        req.backup_to = last_backup->local;
      }
      if (!server.record || server.record->attached) {
        r = fail(Errc::refused, "the server was not rented with `gpurent up`; release it in the provider's console");
      } else {
        auto down = down_server(s, req);
        if (down) {
          detail = std::string("now ") + down->value("state", std::string("?"));
        } else {
          r = std::unexpected(down.error());
        }
      }
    } else {
      r = fail(Errc::usage, "unknown step");
    }
    step.state = r ? "done" : "failed";
    step.detail = r ? detail : r.error().message;
    if (!r) {
      report_warning(s, "job " + job.job_id + ": --then " + step.step + " failed: " + r.error().message);
      failed = true;
    }
    (void)store.update_job(job);
  }
  return !failed;
}

}  // namespace gpurent
