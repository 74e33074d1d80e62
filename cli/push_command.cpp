// SPDX-License-Identifier: MIT
// `gpurent push NAME [LOCAL_DIR] [--to REMOTE_DIR] [--exclude GLOB]... [--json]`: an incremental,
// verified upload of a working tree honouring .gitignore and .gpurentignore; says what it left out.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/job_support.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
namespace {

struct PushCommandOptions {
  std::vector<std::string> args;  // NAME [LOCAL_DIR]; with --host only [LOCAL_DIR]
  std::string to;
  std::vector<std::string> excludes;
  SshFlags ssh;
};

Result<int> run_push_command(Services& s, const PushCommandOptions& o)
{
  const auto [name, args] = name_and_rest(o.args, o.ssh);
  if (args.size() > 1) {
    return fail(Errc::usage, "push: give one local directory (extra: " + args[1] + ")");
  }
  TRY_ASSIGN(const JobServer server, open_job_server(s, name, o.ssh));
  TRY_ASSIGN(auto session, connect_job_server(s, server));
  PushSettings p;
  p.local = args.empty() ? std::filesystem::path(".") : std::filesystem::path(args.front());
  p.to = o.to;
  p.excludes = o.excludes;
  TRY_ASSIGN(const PushReport report, push_to_server(s, server, *session, p));
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
  auto* sub = app.add_subcommand("push", "upload a working tree to a server: incremental, verified, honours .gitignore");
  sub->add_option("args", opts->args, "NAME (a tracked server) then LOCAL_DIR (default .); with --host only LOCAL_DIR");
  sub->add_option("--to", opts->to, "remote directory (default ~/gpurent/<name of LOCAL_DIR>)");
  sub->add_option("--exclude", opts->excludes, "also leave out paths matching this pattern (.gitignore syntax; repeatable)")
      ->allow_extra_args(false);  // one value per flag: never eats NAME or the command
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    auto r = run_push_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
