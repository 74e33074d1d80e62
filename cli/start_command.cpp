// SPDX-License-Identifier: MIT
// `gpurent start NAME [--no-wait] [--accept-new-host-key] [--json]`: starts a stopped (or
// hibernated) tracked server through its provider (RunPod POST /pods/{id}/start, Vast's state
// change), after saying what it bills per hour once running and what the provider lists for its
// card; waits for running and SSH and says what changed (GPU, address, host key, price). It never
// destroys: a refused start leaves the server stopped. A provider without start: exit 3.
// cli/start_support.hpp; docs/lifecycle.md, "Starting a stopped server".
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/group_support.hpp"
#include "cli/interrupt.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "cli/start_support.hpp"

namespace gpurent {
namespace {

struct StartCommandOptions {
  std::string name;
  bool no_wait = false;
  SshFlags ssh;  // --identity, --known-hosts, --accept-new-host-key (no --host: a tracked server only)
};

Result<int> run_start_command(Services& s, const StartCommandOptions& o)
{
  if (o.name.empty()) {
    return fail(Errc::usage, "which server? give NAME (see `gpurent status`)");
  }
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(StateStore * store, s.state());
  TRY_ASSIGN(const auto found, store->find_server(o.name));
  if (!found || is_closed(found->status)) {
    return fail(Errc::not_found, found ? o.name + " is " + std::string(to_string(found->status)) + ": there is nothing to start; "
                                                                                               "rent a new one with `gpurent up`"
                                       : "no server named " + o.name + " is tracked; see `gpurent status`");
  }
  const bool was_running = found->status == ServerStatus::running;
  TRY_ASSIGN(const StartReport report, start_tracked(s, cfg, *store, *found, StartRequest{o.ssh, o.no_wait, "gpurent start"}));
  if (s.global.json) {
    s.out << start_json(report).dump(2) << '\n';
    return 0;
  }
  const ServerRecord& r = report.record;
  if (was_running) {
    s.out << r.name << ": already running on " << r.provider << " (" << r.provider_id << "), " << r.user << "@" << r.host
          << ":" << r.port << "\n";
    return 0;
  }
  s.out << r.name << ": " << to_string(r.status) << " on " << r.provider << " (" << r.provider_id << "), " << r.user << "@"
        << r.host << ":" << r.port << ", " << per_hour(r.terms.price_per_hour) << "\n";
  for (const auto& c : report.changes) {
    s.out << "  changed: " << c << "\n";
  }
  s.out << "  connect: gpurent ssh " << r.name << "   stop: gpurent down " << r.name << " --stop\n";
  return 0;
}

}  // namespace

void add_start_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<StartCommandOptions>();
  auto* sub = app.add_subcommand("start", "start a stopped server through its provider (never destroys it)");
  sub->add_option("name", opts->name, "NAME of a tracked server or group that is stopped");
  sub->add_flag("--no-wait", opts->no_wait, "return once the provider reports it running, without checking SSH");
  sub->add_option("--identity", opts->ssh.identity, "private key file (default: the one given at up/attach, the agent, ~/.ssh)");
  sub->add_option("--known-hosts", opts->ssh.known_hosts, "known-hosts file (default: gpurent's own, plus ~/.ssh/known_hosts)");
  sub->add_flag("--accept-new-host-key", opts->ssh.accept_new_host_key,
                "trust and record a host key the server did not have before (RunPod re-creates the container on start)");
  sub->callback([&s, opts] {
    InterruptWatch watch(s);  // Ctrl-C while waiting: left as the provider reports it, said so (exit 4)
    if (for_group_named(s, *opts, &StartCommandOptions::name, run_start_command)) {
      return;
    }
    auto r = run_start_command(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
