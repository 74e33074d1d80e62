// SPDX-License-Identifier: MIT
// `gpurent backup (NAME | --host USER@HOST[:PORT]) [REMOTE_PATH...] [--to DIR] ...`
#include <CLI/CLI.hpp>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/backup_place.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/interrupt.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "cli/stream_stats.hpp"
#include "cli/ssh_options.hpp"
#include "common/rounding.hpp"
#include "providers/ledger.hpp"
#include "providers/state_store.hpp"
#include "sync/backup.hpp"

namespace gpurent {
namespace {

struct BackupOptions {
  std::vector<std::string> args;  // NAME then REMOTE_PATHs, or only REMOTE_PATHs with --host
  std::string to;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::size_t streams = 0;
  std::int64_t node = -1;  // --node K: only that member of a group
  SshFlags ssh;
};

// The progress bar on stderr: bytes, rate, ETA, files. Only on a TTY and never under --json.
class ProgressBar final : public BackupObserver {
public:
  ProgressBar(Services& s, bool enabled)
      : m_s(s), m_enabled(enabled), m_dumb(s.getenv("TERM").value_or("") == "dumb"), m_start(std::chrono::steady_clock::now())
  {
  }
  ~ProgressBar() override { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void on_progress(const BackupProgress& p) override
  {
    if (!m_enabled) {
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last < std::chrono::milliseconds(100) && p.bytes_done < p.bytes_total) {
      return;
    }
    m_last = now;
    const double secs = std::chrono::duration<double>(now - m_start).count();
    const double rate = secs > 0 ? static_cast<double>(p.bytes_done) / secs : 0;
    const double frac = p.bytes_total > 0 ? static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total) : 1.0;
    const int width = 24;
    const int filled = std::clamp(static_cast<int>(frac * width), 0, width);
    std::string eta = "--:--";
    if (rate > 0 && p.bytes_total >= p.bytes_done) {
      const auto left = static_cast<long>(static_cast<double>(p.bytes_total - p.bytes_done) / rate);
      eta = fmt::format("{:02}:{:02}", left / 60, left % 60);
    }
    const std::string line = fmt::format("[{}{}] {:3.0f}% {} / {}  {}/s  ETA {}  files {}/{}",
                                         std::string(static_cast<std::size_t>(filled), '#'),
                                         std::string(static_cast<std::size_t>(width - filled), ' '), frac * 100,
                                         format_bytes(p.bytes_done), format_bytes(p.bytes_total),
                                         format_bytes(static_cast<std::uint64_t>(rate)), eta, p.files_done, p.files_total);
    // A dumb terminal has no "erase to the end of the line": spaces cover a longer previous line.
    m_s.err << '\r' << line << (m_dumb ? std::string(m_width > line.size() ? m_width - line.size() : 0, ' ') : "\x1b[K")
            << std::flush;
    m_width = line.size();
    m_drawn = true;
  }
  void on_warning(std::string_view message) override
  {
    finish();
    report_warning(m_s, message);
  }
  [[nodiscard]] bool cancelled() const override { return m_s.signal_caught() != 0; }
  void finish()
  {
    if (m_drawn) {
      m_s.err << '\r' << (m_dumb ? std::string(m_width, ' ') + "\r" : "\x1b[K") << std::flush;
      m_drawn = false;
    }
  }

private:
  Services& m_s;
  bool m_enabled;
  bool m_dumb;  // TERM=dumb: no escape sequences
  bool m_drawn = false;
  std::size_t m_width = 0;  // of the line drawn last
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_last{};
};

std::string json_text(const std::string& s)
{
  // Remote names may not be UTF-8: keep JSON valid by replacing bad bytes.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void print_json(Services& s, const BackupReport& r)
{
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : r.failed) {
    failed.push_back({{"path", nlohmann::json::parse(json_text(f.path))}, {"error", nlohmann::json::parse(json_text(f.error))}});
  }
  nlohmann::json j = {{"files_total", r.files_total},
                      {"files_copied", r.files_copied},
                      {"files_skipped", r.files_skipped},
                      {"bytes_copied", r.bytes_copied},
                      {"bytes_total", r.bytes_total},
                      {"seconds", round_to_places(r.seconds, 3)},
                      {"verified", r.verified},
                      {"streams", r.streams},
                      {"per_stream", per_stream_json(r.per_stream, "ranges")},
                      {"ranges_resumed", r.ranges_resumed},
                      {"manifest", nlohmann::json::parse(json_text(r.manifest.string()))},
                      {"failed", failed},
                      {"warnings", r.warnings}};
  s.out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void print_text(Services& s, const std::string& who, const std::filesystem::path& dest, const BackupReport& r)
{
  const double mbps = r.seconds > 0 ? static_cast<double>(r.bytes_copied) / r.seconds / 1e6 : 0;
  s.out << "Backed up " << who << " to " << dest.string() << "\n";
  s.out << fmt::format("  files     {} ({} copied, {} unchanged, {} failed)\n", r.files_total, r.files_copied, r.files_skipped,
                       r.failed.size());
  s.out << fmt::format("  data      {} copied of {} in {:.1f} s ({:.0f} MB/s{}{})\n", format_bytes(r.bytes_copied),
                       format_bytes(r.bytes_total), r.seconds, mbps,
                       r.streams > 1 ? fmt::format(", {} connections", r.streams) : std::string(),
                       r.ranges_resumed > 0 ? fmt::format(", {} verified range(s) kept from the last run", r.ranges_resumed) : std::string());
  std::string verified = "no, see the failures below";
  if (r.verified && r.files_copied == 0) {
    verified = "yes, nothing changed since the last verified copy";
  } else if (r.verified) {
    verified = "yes, SHA-256 computed on the server (" + r.verify_method + ") matches every copy";
  } else if (r.verify_method == "size-only") {
    verified = "by size only (no openssl, sha256sum or shasum on the server)";
  }
  s.out << "  verified  " << verified << "\n";
  s.out << "  manifest  " << r.manifest.string() << "\n";
  for (const auto& f : r.failed) {
    s.out << "  FAILED    " << json_text(f.path) << ": " << f.error << "\n";
  }
}

// An interrupted backup: nothing is recorded as backed up; what was copied is kept for the
// re-run; a tracked server's rate is said, since it bills while the backup waits.
Error interrupted_backup(Services& s, const SshDestination& dest, const std::filesystem::path& to, const Error& why)
{
  std::string bills;
  if (dest.server_id != 0 && s.state) {
    if (auto store = s.state()) {
      if (auto rec = (*store)->find_server(dest.name); rec && *rec) {
        bills = "; " + dest.name + " is " + std::string(to_string((*rec)->status)) + " and bills " +
                per_hour(billing_now(**store, **rec)) + " meanwhile (`gpurent down " + dest.name + " --stop` or " +
                "`--destroy` releases it)";
      }
    }
  }
  return interrupted_error("backing up " + dest.name + " to " + to.string() + " (" + caught_signal_name(s) + "; " +
                           interrupted_step(why) +
                           "): not verified and not recorded as a backup; the files copied so far are kept and the "
                           "same `gpurent backup` resumes them" + bills);
}

Result<int> run(Services& s, BackupOptions& o, InterruptWatch& watch)
{
  TRY_ASSIGN(SshOptions options, make_ssh_options(s, o.ssh));
  std::string name;
  std::vector<std::string> paths = o.args;
  if (o.ssh.host.empty() && !paths.empty()) {
    name = paths.front();
    paths.erase(paths.begin());
  }
  TRY_ASSIGN(const SshDestination dest, resolve_destination(s, name, o.ssh, options));
  BackupRequest req;
  req.remote_paths = paths;
  if (req.remote_paths.empty() && !dest.workspace_dir.empty()) {
    req.remote_paths.push_back(dest.workspace_dir);
  }
  if (o.to.empty()) {
    TRY_ASSIGN(const Config cfg, load_config(s));
    TRY_ASSIGN(req.dest, default_backup_dir(s, cfg.backup_dir, dest.name));
    if (!s.global.json) {
      s.err << "gpurent: backing up " << dest.name << " to " << req.dest.string() << " (--to DIR for elsewhere)\n";
    }
  } else {
    req.dest = o.to;
  }
  req.include = o.include;
  req.exclude = o.exclude;
  TRY_ASSIGN(auto session, connect_ssh(s, dest.target, options));
  req.streams = o.streams;
  req.more_sessions = more_sessions(s, dest.target, options, *session);
  ProgressBar bar(s, s.stderr_tty && !s.global.json);
  watch.set_last_words("gpurent: the backup to " + req.dest.string() + " is incomplete and not verified; the files copied "
                       "so far are kept, and the same command resumes it\n");
  auto ran = run_backup(*session, req, bar);
  bar.finish();
  if (!ran && (ran.error().interrupted || s.signal_caught() != 0)) {
    return std::unexpected(interrupted_backup(s, dest, req.dest, ran.error()));
  }
  TRY_ASSIGN(const BackupReport report, std::move(ran));
  if (dest.server_id != 0 && s.state) {
    if (auto store = s.state()) {
      BackupRecord rec;
      rec.server_id = dest.server_id;
      rec.at = s.clock.now();
      rec.manifest = std::filesystem::absolute(report.manifest).string();
      rec.verified = report.verified;
      rec.files = report.files_total;
      rec.bytes = Bytes{report.bytes_total};
      if (auto added = (*store)->add_backup(rec); !added) {
        report_warning(s, "the backup is done but was not recorded: " + added.error().message);
      }
    }
  }
  if (s.global.json) {
    print_json(s, report);
  } else {
    print_text(s, to_string(dest.target), req.dest, report);
  }
  if (!report.failed.empty()) {
    std::string named;
    for (std::size_t i = 0; i < report.failed.size() && i < 3; ++i) {
      const std::string quoted = json_text(report.failed[i].path);  // one line whatever the name holds
      named += (i == 0 ? "" : ", ") + quoted.substr(1, quoted.size() - 2) + " (" + report.failed[i].error.substr(0, 60) + ")";
    }
    if (report.failed.size() > 3) {
      named += ", and " + std::to_string(report.failed.size() - 3) + " more";
    }
    return report_error(s, Error{Errc::partial, "backup: " + std::to_string(report.failed.size()) +
                                                    " item(s) failed and the rest is backed up: " + named +
                                                    "; fix or drop those paths and re-run `gpurent backup`"});
  }
  return 0;
}

}  // namespace

void add_backup_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<BackupOptions>();
  auto* sub = app.add_subcommand("backup", "copy a server's files to this machine: incremental, verified, resumable");
  sub->add_option("args", opts->args, "NAME (a tracked server or a group) then REMOTE_PATHs; with --host only REMOTE_PATHs (default: the workspace or home)");
  sub->add_option("--to", opts->to, "destination directory (default: backup_dir/NAME, else ~/.local/share/gpurent/backups/NAME)");
  sub->add_option("--include", opts->include, "copy only paths matching this glob (repeatable; * ** ? supported)");
  sub->add_option("--exclude", opts->exclude, "skip paths matching this glob (repeatable)");
  add_streams_flag(*sub, opts->streams);
  add_ssh_flags(*sub, opts->ssh);
  sub->add_option("--node", opts->node, "with a group NAME: only node K (default: every node)")->check(CLI::Range(0, 63));
  sub->callback([&s, opts] {
    InterruptWatch watch(s);
    auto group = opts->ssh.host.empty() && !opts->args.empty() ? find_group(s, opts->args.front()) : std::nullopt;
    if (!group) {
      if (opts->node >= 0) {
        s.exit_code = report_error(s, Error{Errc::usage, "--node is for a server group NAME"});
        return;
      }
      auto r = run(s, *opts, watch);
      s.exit_code = r ? *r : report_error(s, r.error());
      return;
    }
    std::optional<std::uint32_t> only;
    if (opts->node >= 0) {
      auto m = member_at(*group, static_cast<std::uint32_t>(opts->node));
      if (!m) {
        s.exit_code = report_error(s, m.error());
        return;
      }
      only = (*m)->group_rank;
    }
    // Each node into its own directory: --to DIR/<member>, else backup_dir/<member>.
    s.exit_code = for_each_member(s, *group, only, [&](Services& ms, const ServerRecord& m) {
      BackupOptions one = *opts;
      one.args.front() = m.name;
      if (!one.to.empty()) {
        one.to = (std::filesystem::path(opts->to) / m.name).string();
      }
      auto r = run(ms, one, watch);
      return r ? *r : report_error(ms, r.error());
    });
  });
}

}  // namespace gpurent
