// SPDX-License-Identifier: MIT
// `gpurent push NAME [LOCAL_DIR] [--to REMOTE_DIR] [--exclude GLOB]... [--with-git]
// [--allow-secret PATH]... [--delete] [--json]`: an incremental, verified upload of what git
// would commit (or, outside git, of what .gitignore leaves), with .gpurentignore and --exclude on
// top; refuses likely secrets; says what it left out; --delete removes what an earlier push sent and LOCAL_DIR lost.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <future>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/group_support.hpp"
#include "cli/job_support.hpp"
#include "cli/push_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
namespace {

struct PushCommandOptions {
  std::vector<std::string> args;  // NAME [LOCAL_DIR]; with --host only [LOCAL_DIR]
  std::string to;
  std::vector<std::string> excludes;
  bool with_git = false;
  std::vector<std::string> allow_secrets;
  std::size_t streams = 0;
  bool delete_extra = false;
  SshFlags ssh;
};

Result<int> run_push_command(Services& s, const PushCommandOptions& o)
{
  const auto [name, args] = name_and_rest(o.args, o.ssh);
  if (args.size() > 1) {
    return fail(Errc::usage, "push: give one local directory (extra: " + args[1] + ")");
  }
  PushSettings p;
  p.local = args.empty() ? std::filesystem::path(".") : std::filesystem::path(args.front());
  p.to = o.to;
  p.excludes = o.excludes;
  p.with_git = o.with_git;
  p.allow_secrets = o.allow_secrets;
  p.streams = o.streams;
  p.delete_extra = o.delete_extra;
  TRY_ASSIGN(const JobServer server, open_job_server(s, name, o.ssh));
  // What would be sent is decided, and likely secrets refused, before anything is sent: the walk
  // (git's file set, the secret guard's reads of every file) runs on its own thread while the
  // connection is made (issue #43: 0.3 s of a 20,000-file re-push), and its refusal comes first.
  TRY_ASSIGN(const WalkOptions walk_options, push_walk_options(s, p));
  // The server is then asked for its listing while the walk goes on (push_to_server).
  auto walking = std::async(std::launch::async, [&p, &walk_options] { return walk_local_tree(p.local, walk_options); });
  const auto walked = [&s, &walking]() -> Result<LocalTree> {
    TRY_ASSIGN(LocalTree tree, walking.get());
    return refuse_secrets(s, std::move(tree));
  };
  auto connected = connect_job_server(s, server);
  if (!connected) {
    TRY(walked());  // the refusal first
    return std::unexpected(connected.error());
  }
  TRY_ASSIGN(const PushReport report, push_to_server(s, server, **connected, p, walked));
  if (server.dest.server_id != 0 && report.files_sent > 0) {
    if (auto store = s.state()) {
      (void)(*store)->mark_changed(server.dest.server_id, s.clock.now());
    }
  }
  if (s.global.json) {
    s.out << push_report_json(report).dump() << '\n';
  } else {
    print_push_report(s.out, report);
  }
  if (!report.failed.empty()) {
    return report_error(s, Error{Errc::partial, std::to_string(report.failed.size()) +
                                                    " file(s) were not pushed intact (listed above); run `gpurent push` again"});
  }
  return 0;
}

}  // namespace

void add_push_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<PushCommandOptions>();
  auto* sub = app.add_subcommand("push", "upload what git would commit to a server: incremental, verified, refuses likely secrets");
  sub->add_option("args", opts->args, "NAME (a tracked server or group) then LOCAL_DIR (default .); with --host only LOCAL_DIR");
  sub->add_option("--to", opts->to, "remote directory (default ~/gpurent/<name of LOCAL_DIR>)");
  sub->add_option("--exclude", opts->excludes, "also leave out paths matching this pattern, tracked files too (.gitignore syntax; repeatable)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  sub->add_flag("--with-git", opts->with_git, "also send the .git directory (the repository's history); by default only its size is reported");
  sub->add_option("--allow-secret", opts->allow_secrets, "send this likely secret (or every one below this directory) on purpose (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--delete", opts->delete_extra,
                "also delete from the server what an earlier push sent and LOCAL_DIR no longer has (never what gpurent did not "
                "push, such as job outputs, nor .git, ignored or excluded paths); "
                "says what first and asks (--yes to confirm)");
  add_streams_flag(*sub, opts->streams);
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    if (auto group = opts->ssh.host.empty() && !opts->args.empty() ? find_group(s, opts->args.front()) : std::nullopt) {
      s.exit_code = for_each_member(s, *group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
        PushCommandOptions one = *opts;  // the same tree to every node
        one.args.front() = m.name;
        auto r = run_push_command(ms, one);
        return r ? *r : report_error(ms, r.error());
      });
      return;
    }
    auto r = run_push_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
