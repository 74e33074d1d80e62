// SPDX-License-Identifier: MIT
#include "cli/push_support.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "providers/atomic_file.hpp"
#include "cli/backup_place.hpp"
#include "cli/config.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "cli/stream_stats.hpp"
#include "common/rounding.hpp"
#include "common/units.hpp"
#include "providers/state_store.hpp"
#include "sync/push_record.hpp"

namespace gpurent {
namespace {

constexpr std::size_t k_largest_shown = 10;
constexpr std::size_t k_secrets_in_message = 8;
constexpr std::size_t k_deleted_named = 10;

// The progress bar of a push on stderr: only on a TTY, never under --json.
class PushBar final : public PushObserver {
public:
  PushBar(Services& s, bool enabled) : m_s(s), m_enabled(enabled), m_start(std::chrono::steady_clock::now()) {}
  void on_progress(std::uint64_t done, std::uint64_t total) override
  {
    if (!m_enabled || total == 0) {
      return;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
    m_s.err << fmt::format("\rpushing {} / {}  {}/s\x1b[K", format_bytes(done), format_bytes(total), format_bytes(static_cast<std::uint64_t>(rate)))
            << std::flush;
    m_drawn = true;
  }
  void on_warning(std::string_view message) override
  {
    clear();
    report_warning(m_s, message);
  }
  void clear()
  {
    if (m_drawn) {
      m_s.err << "\r\x1b[K" << std::flush;
      m_drawn = false;
    }
  }

private:
  Services& m_s;
  bool m_enabled;
  bool m_drawn = false;
  std::chrono::steady_clock::time_point m_start;
};

nlohmann::json findings_json(const std::vector<SecretFinding>& findings)
{
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    out.push_back({{"path", text_json(f.path)}, {"why", f.why}});
  }
  return out;
}

std::string short_commit(const std::string& id)
{
  return id.substr(0, 12);
}

// The server as the record of pushes names it: a tracked server by its record id and name (its
// address may change across a stop and start), a --host destination by user@host:port.
std::string record_key(const JobServer& server)
{
  if (server.record) {
    return fmt::format("server {} {}", server.record->id, server.record->name);
  }
  return "host " + server.target;
}

Result<std::filesystem::path> record_path(Services& s, const JobServer& server, const std::string& remote_dir)
{
  TRY_ASSIGN(const auto dir, state_dir([&](const std::string& k) { return s.getenv(k); }));
  return dir / "push-records" / push_record_file_name(record_key(server), remote_dir);
}

// The record of earlier pushes; nullopt when there is none, or (with a warning) when it cannot
// be read or is damaged: then nothing counts as pushed before.
std::optional<PathSet> load_push_record(Services& s, const JobServer& server, const std::string& remote_dir)
{
  const auto path = record_path(s, server, remote_dir);
  if (!path) {
    return std::nullopt;
  }
  std::error_code ec;
  if (!std::filesystem::exists(*path, ec)) {
    return std::nullopt;
  }
  const auto size = std::filesystem::file_size(*path, ec);
  std::string text;
  if (!ec && size <= k_push_record_max_bytes + 4096) {
    std::ifstream in(*path, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    text = in ? buf.str() : std::string();
  }
  auto record = read_push_record(text, record_key(server), remote_dir);
  if (!record) {
    if (record.error().code != Errc::not_found) {
      report_warning(s, fmt::format("{}: {}; it counts as no record: --delete deletes nothing this time, and this push writes a new one",
                                    path->string(), record.error().message));
    }
    return std::nullopt;
  }
  return std::move(*record);
}

// Written atomically (a temporary file renamed over it), 0600, in a 0700 directory.
Result<void> save_push_record(Services& s, const JobServer& server, const std::string& remote_dir, const PathSet& paths)
{
  TRY_ASSIGN(const auto path, record_path(s, server, remote_dir));
  TRY_ASSIGN(const std::string text, write_push_record(record_key(server), remote_dir, paths));
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  ::chmod(path.parent_path().c_str(), 0700);
  return write_file_atomically(path.string(), text, 0600);
}

}  // namespace

std::string default_push_dir(const std::filesystem::path& local)
{
  std::error_code ec;
  auto abs = std::filesystem::weakly_canonical(std::filesystem::absolute(local), ec);
  std::string base = (ec ? local : abs).filename().string();
  if (base.empty() || base == "." || base == "..") {
    base = "root";
  }
  return "~/gpurent/" + base;
}

Result<LocalTree> walk_for_push(Services& s, const PushSettings& p)
{
  TRY_ASSIGN(const WalkOptions walk, push_walk_options(s, p));
  TRY_ASSIGN(LocalTree tree, walk_local_tree(p.local, walk));
  return refuse_secrets(s, std::move(tree));
}

Result<WalkOptions> push_walk_options(Services& s, const PushSettings& p)
{
  WalkOptions walk;
  walk.excludes = p.excludes;
  walk.with_git = p.with_git;
  for (const auto& a : p.allow_secrets) {
    if (normalize_allowed_path(a).empty()) {
      return fail(Errc::usage, "--allow-secret " + a + ": give a path inside the pushed directory, relative to it (e.g. `--allow-secret .env`)");
    }
  }
  walk.allow_secrets = p.allow_secrets;
  // gpurent's own state and backups, should they sit inside the project.
  const auto env = [&](const std::string& k) { return s.getenv(k); };
  if (auto dir = state_dir(env)) {
    walk.never.push_back(*dir);
  }
  if (auto cfg = load_config(s)) {
    if (auto b = default_backup_dir(s, cfg->backup_dir, "x")) {
      walk.never.push_back(b->parent_path());
    }
  }
  return walk;
}

Result<LocalTree> refuse_secrets(Services& s, LocalTree tree)
{
  if (tree.secrets.empty()) {
    return tree;
  }
  std::string list;
  for (std::size_t i = 0; i < tree.secrets.size() && i < k_secrets_in_message; ++i) {
    list += (i == 0 ? "" : ", ") + tree.secrets[i].path + " (" + tree.secrets[i].why + ")";
  }
  if (tree.secrets.size() > k_secrets_in_message) {
    list += fmt::format(" and {} more", tree.secrets.size() - k_secrets_in_message);
  }
  if (s.global.json) {
    s.out << nlohmann::json{{"secrets", findings_json(tree.secrets)}}.dump() << '\n';
  } else if (tree.secrets.size() > k_secrets_in_message) {
    for (const auto& f : tree.secrets) {
      s.err << "  likely secret: " << f.path << " (" << f.why << ")\n";
    }
  }
  return fail(Errc::refused, fmt::format("push: {} file(s) look like credentials and would be sent to the server: {}; nothing was sent: "
                                         "leave them out (.gitignore, .gpurentignore or --exclude), or send one on purpose with "
                                         "`--allow-secret PATH`",
                                         tree.secrets.size(), list));
}

Result<PushReport> push_to_server(Services& s, const JobServer& server, SshSession& session, const PushSettings& p, LocalTree tree)
{
  return push_to_server(s, server, session, p, [&tree]() -> Result<LocalTree> { return std::move(tree); });
}

Result<PushReport> push_to_server(Services& s, const JobServer& server, SshSession& session, const PushSettings& p,
                                  std::function<Result<LocalTree>()> walked)
{
  PushRequest req;
  req.local_root = p.local;
  req.remote_dir = p.to.empty() ? default_push_dir(p.local) : p.to;
  if (const auto n = s.getenv("GPURENT_PUSH_SESSIONS")) {
    req.max_sessions = static_cast<std::size_t>(std::max(1L, std::strtol(n->c_str(), nullptr, 10)));
  }
  // Walked with p's options (req.walk is not used), awaited while the server lists the directory.
  req.walked = [&s, &server, &req, walked = std::move(walked)]() -> Result<LocalTree> {
    TRY_ASSIGN(LocalTree tree, walked());
    if (server.dest.server_id != 0) {
      // Recorded before anything is sent: `down --destroy` backs up every directory push/run used.
      TRY_ASSIGN(StateStore* store, s.state());
      TRY(store->record_push_dir(server.dest.server_id, req.remote_dir, s.clock.now()));
    }
    return tree;
  };
  PushBar bar(s, s.stderr_tty && !s.global.json);
  req.streams = p.streams;
  req.delete_extra = p.delete_extra;
  req.confirm_delete = [&s, &bar, &req](const std::vector<std::string>& doomed) -> Result<void> {
    bar.clear();
    std::string names;
    for (std::size_t i = 0; i < doomed.size() && i < k_deleted_named; ++i) {
      names += (i == 0 ? "" : ", ") + doomed[i];
    }
    if (doomed.size() > k_deleted_named) {
      names += fmt::format(" and {} more", doomed.size() - k_deleted_named);
    }
    s.err << fmt::format("gpurent: --delete: {} path(s) in {} on the server are not in the local directory and will be deleted "
                         "(a directory with everything in it): {}\n",
                         doomed.size(), req.remote_dir, names);
    return confirm(s, fmt::format("delete these {} path(s) from the server", doomed.size()));
  };
  req.pushed_before = load_push_record(s, server, req.remote_dir);
  const SessionFactory more = more_sessions(s, server.dest.target, server.options, session);
  auto report = run_push(session, more, req, bar);
  bar.clear();
  if (report && report->record) {
    // Not written: the next --delete deletes only what the earlier record names (never more).
    if (auto saved = save_push_record(s, server, req.remote_dir, *report->record); !saved) {
      report->warnings.push_back("the record of what this push sent was not written (" + saved.error().message +
                                 "); --delete will not delete what only this push sent");
      report_warning(s, report->warnings.back());
    }
  }
  return report;
}

nlohmann::json push_report_json(const PushReport& r)
{
  nlohmann::json largest = nlohmann::json::array();
  for (const auto& sk : largest_skipped(r.tree, k_largest_shown)) {
    largest.push_back({{"path", text_json(sk.path)},
                       {"bytes", sk.bytes},
                       {"files", sk.files},
                       {"directory", sk.directory},
                       {"exact", sk.exact},
                       {"reason", text_json(sk.reason)}});
  }
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& f : r.failed) {
    failed.push_back({{"path", text_json(f.path)}, {"error", text_json(f.error)}});
  }
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto* list : {&r.tree.warnings, &r.warnings}) {
    for (const auto& w : *list) {
      warnings.push_back(text_json(w));
    }
  }
  nlohmann::json deleted = nlohmann::json::array();
  for (const auto& d : r.deleted) {
    deleted.push_back(text_json(d));
  }
  nlohmann::json never_pushed = nlohmann::json::array();
  for (std::size_t i = 0; i < r.never_pushed.size() && i < k_deleted_named; ++i) {
    never_pushed.push_back(text_json(r.never_pushed[i]));
  }
  nlohmann::json git = nullptr;
  if (r.tree.git) {
    nlohmann::json dir = nullptr;
    for (const auto& d : r.tree.git_dirs) {
      if (d.path == ".git") {
        dir = {{"bytes", d.bytes}, {"files", d.files}, {"exact", d.exact}, {"sent", r.tree.git_dirs_sent}};
      }
    }
    git = {{"commit", r.tree.git_commit ? nlohmann::json(*r.tree.git_commit) : nlohmann::json(nullptr)},
           {"dirty", r.tree.git_dirty},
           {"git_dir", dir}};
  }
  return {{"remote_dir", text_json(r.remote_dir)},
          {"files_total", r.files_total},
          {"files_sent", r.files_sent},
          {"bytes_total", r.bytes_total},
          {"bytes_sent", r.bytes_sent},
          {"skipped", {{"count", r.tree.skipped_files}, {"bytes", r.tree.skipped_bytes}, {"largest", largest}}},
          {"seconds", round_to_places(r.seconds, 3)},
          {"sessions", r.sessions},
          {"streams", r.sessions},
          // What chose the connections (sync/push_plan.hpp choose_push_sessions); null when --streams said.
          {"link", r.round_trip && r.connection_setup
                       ? nlohmann::json{{"round_trip_ms", round_to_places(r.round_trip->count() * 1000.0, 3)},
                                        {"connection_setup_s", round_to_places(r.connection_setup->count(), 3)}}
                       : nlohmann::json(nullptr)},
          {"per_stream", per_stream_json(r.per_stream, "units")},
          {"ranges_resumed", r.ranges_resumed},
          {"verified", r.verified},
          {"verify_method", r.verify_method},
          {"failed", failed},
          {"warnings", warnings},
          {"git", git},
          {"secrets_sent", findings_json(r.tree.allowed_secrets)},
          {"deleted", deleted},
          {"never_pushed", {{"count", r.never_pushed.size()}, {"paths", never_pushed}}},
          {"delete_without_record", r.delete_without_record}};
}

void print_push_report(std::ostream& o, const PushReport& r)
{
  const double mbps = r.seconds > 0 ? static_cast<double>(r.bytes_sent) / r.seconds / 1e6 : 0;
  o << "Pushed to " << r.remote_dir << "\n";
  o << fmt::format("  files     {} ({} sent, {} unchanged, {} failed)\n", r.files_total, r.files_sent,
                   r.files_total - std::min(r.files_total, r.files_sent + r.failed.size()), r.failed.size());
  o << fmt::format("  data      {} sent of {} in {:.1f} s ({:.0f} MB/s{})\n", format_bytes(r.bytes_sent), format_bytes(r.bytes_total), r.seconds,
                   mbps, r.sessions > 1 ? fmt::format(", {} connections", r.sessions) : std::string());
  std::string verified = "no, see the failures below";
  if (r.verified && r.files_sent == 0) {
    verified = "yes, nothing changed";
  } else if (r.verified) {
    verified = "yes, SHA-256 computed on the server (" + r.verify_method + ") matches every file sent";
  } else if (r.verify_method == "size-only") {
    verified = "by size only (no openssl, sha256sum or shasum on the server)";
  }
  o << "  verified  " << verified << "\n";
  if (r.tree.skipped_files > 0 || !r.tree.skipped.empty()) {
    o << fmt::format("  skipped   {} file(s), {} ({}, .gpurentignore, --exclude); the largest:\n", r.tree.skipped_files,
                     format_bytes(r.tree.skipped_bytes), r.tree.git ? "what git would not commit" : ".gitignore");
    for (const auto& sk : largest_skipped(r.tree, k_largest_shown)) {
      o << fmt::format("    {:>10}  {}{}  ({})\n", (sk.exact ? "" : ">=") + format_bytes(sk.bytes), sk.path, sk.directory ? "/" : "", sk.reason);
    }
  }
  if (r.tree.git) {
    o << "  git       " << (r.tree.git_commit ? "commit " + short_commit(*r.tree.git_commit) : std::string("no commit yet"))
      << (r.tree.git_dirty ? " with uncommitted changes" : "") << "; files as git lists them\n";
  }
  if (!r.tree.git_dirs.empty()) {
    std::uint64_t bytes = 0;
    bool exact = true;
    for (const auto& d : r.tree.git_dirs) {
      bytes += d.bytes;
      exact = exact && d.exact;
    }
    const auto n = r.tree.git_dirs.size();
    o << fmt::format("  .git      {}{}{} {}\n", exact ? "" : ">=", format_bytes(bytes), n > 1 ? fmt::format(" in {} repositories", n) : "",
                     r.tree.git_dirs_sent ? "sent (--with-git)" : n > 1 ? "not sent (--with-git sends them)" : "not sent (--with-git sends it)");
  }
  for (const auto& f : r.tree.allowed_secrets) {
    o << "  secret    sent on purpose (--allow-secret): " << f.path << " (" << f.why << ")\n";
  }
  if (!r.deleted.empty()) {
    o << "  deleted   " << r.deleted.size() << " path(s) no longer in the local directory (--delete):";
    for (std::size_t i = 0; i < r.deleted.size() && i < k_deleted_named; ++i) {
      o << " " << r.deleted[i];
    }
    o << (r.deleted.size() > k_deleted_named ? fmt::format(" and {} more", r.deleted.size() - k_deleted_named) : "") << "\n";
  }
  if (r.delete_without_record) {
    o << "  kept      everything on the server (--delete): no record of an earlier push to this directory; this push "
         "wrote one, so the next --delete removes what it sent and you deleted\n";
  }
  if (!r.never_pushed.empty()) {
    o << "  kept      " << r.never_pushed.size() << " path(s) gpurent never pushed (job outputs?) (--delete):";
    for (std::size_t i = 0; i < r.never_pushed.size() && i < k_deleted_named; ++i) {
      o << " " << r.never_pushed[i];
    }
    o << (r.never_pushed.size() > k_deleted_named ? fmt::format(" and {} more", r.never_pushed.size() - k_deleted_named) : "") << "\n";
  }
  for (const auto& f : r.failed) {
    o << "  FAILED    " << f.path << ": " << f.error << "\n";
  }
}

}  // namespace gpurent
