// SPDX-License-Identifier: MIT
// `gpurent attach`: tracks a server rented elsewhere (e.g. in the console of a provider without
// an API): checks SSH, records the host key, starts the ledger now (or at --since), and remembers
// the SSH settings given (--identity, --known-hosts, user and port) for backup, ssh, doctor, down.
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "cli/autostop_support.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"

namespace gpurent {
namespace {

struct AttachOptions {
  std::string provider;
  std::string card;
  std::uint32_t gpus = 1;
  std::string name;
  std::string since;
  std::string price;
  bool spot = false;
  std::string group;
  SshFlags ssh;
};

Result<ServerRecord> run_attach(Services& s, const AttachOptions& o)
{
  if (o.ssh.host.empty()) {
    return fail(Errc::usage, "attach: --host USER@HOST[:PORT] is required");
  }
  TRY_ASSIGN(const SshTarget target, parse_ssh_target(o.ssh.host));
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(PricedOffer priced, resolve_offer(s, cfg, o.provider, o.card, o.gpus, o.price, o.spot));
  TimePoint since = s.clock.now();
  if (!o.since.empty()) {
    const auto t = parse_time(o.since);
    if (!t) {
      return fail(Errc::usage, "--since " + o.since + ": give 2026-11-30T10:00:00Z or Unix seconds");
    }
    if (*t > s.clock.now()) {
      return fail(Errc::usage, "--since " + o.since + " is in the future");
    }
    since = *t;
  }
  TRY_ASSIGN(StateStore* store, s.state());
  TRY_ASSIGN(auto existing, store->find_server(o.name));
  if (existing && !is_closed(existing->status)) {
    return fail(Errc::refused, "a server named '" + o.name + "' is already tracked; pick another --name");
  }
  TRY_ASSIGN(const auto servers, store->list_servers(false));
  if (group_of(servers, o.name)) {
    return fail(Errc::refused, "'" + o.name + "' is a server group; pick another --name");
  }
  std::uint32_t rank = 0;
  if (!o.group.empty()) {
    if (o.group == o.name) {
      return fail(Errc::usage, "--group " + o.group + ": a group and its member need different names");
    }
    TRY(check_group_name(servers, o.group));
    rank = next_group_rank(servers, o.group);
  }
  TRY_ASSIGN(SshOptions options, make_ssh_options(s, o.ssh));
  TRY_ASSIGN(auto session, connect_ssh(s, target, options));
  const std::string key = session->host_key_fingerprint();
  const MicroUsd price = o.spot && priced.offer.spot_price_per_hour ? *priced.offer.spot_price_per_hour
                                                                     : priced.offer.price_per_hour;
  ServerRecord rec;
  rec.name = o.name;
  rec.provider = priced.provider.name;
  rec.card = priced.card.id;
  rec.gpus = o.gpus;
  rec.spot = o.spot;
  rec.attached = true;
  rec.terms = terms_for(priced.provider, price, o.spot);
  rec.user = target.user;
  rec.host = target.host;
  rec.port = target.port;
  rec.host_key = key;
  rec.status = ServerStatus::running;
  rec.created_at = since;
  rec.group = o.group;
  rec.group_rank = rank;
  // Remembered for backup, ssh, doctor and down (the user/host/port above too).
  std::error_code ec;
  rec.identity_file = o.ssh.identity.empty() ? std::string{} : std::filesystem::absolute(o.ssh.identity, ec).string();
  rec.known_hosts_file = o.ssh.known_hosts.empty() ? std::string{}
                                                   : std::filesystem::absolute(o.ssh.known_hosts, ec).string();
  TRY_ASSIGN(rec, store->insert_server(rec));
  s.err << "gpurent: tracking " << rec.name << " (" << priced.provider.display << " " << priced.card.display << " x"
        << rec.gpus << ", " << per_hour(price) << ", " << priced.origin_text << "); host key " << key << '\n';
  if (!rec.group.empty()) {
    s.err << "gpurent: " << rec.name << " is node " << rec.group_rank << " of group " << rec.group << '\n';
  }
  return rec;
}

}  // namespace

void add_attach_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<AttachOptions>();
  auto* sub = app.add_subcommand("attach", "track a server rented elsewhere (checks SSH, records the host key)");
  sub->add_option("--provider", opts->provider, "who bills it: any cloud key (lambda, runpod, vast, aws, nebius, ...: gpurent offers lists them)")->required();
  sub->add_option("--card", opts->card, "its card")->required();
  sub->add_option("--gpus", opts->gpus, "GPUs in it")->check(CLI::Range(1, 8));
  sub->add_option("--name", opts->name, "name to track it by")->required();
  sub->add_option("--since", opts->since, "when it was rented (default now): 2026-11-30T10:00:00Z or Unix seconds");
  sub->add_option("--price", opts->price, "USD per hour for the whole server, when no price is known");
  sub->add_flag("--spot", opts->spot, "a spot/interruptible server");
  sub->add_option("--group", opts->group, "join server group NAME as its next node (rank 0 = attached first)");
  add_ssh_flags(*sub, opts->ssh);
  auto autostop = add_autostop_flag(*sub);
  sub->callback([&s, opts, autostop] {
    auto r = run_attach(s, *opts);
    if (!r) {
      s.exit_code = report_error(s, r.error());
      return;
    }
    if (s.global.json) {
      nlohmann::json view{{"name", r->name},         {"provider", r->provider}, {"card", r->card},
                          {"gpus", r->gpus},         {"state", "running"},      {"since", iso_time(r->created_at)},
                          {"host", r->user + "@" + r->host + ":" + std::to_string(r->port)},
                          {"host_key", r->host_key}, {"price_per_hour", to_units(r->terms.price_per_hour)},
                          {"currency", r->terms.currency}};
      add_group_keys(view, *r);
      s.out << view.dump(2) << '\n';
    } else {
      s.out << r->name << ": tracked since " << iso_time(r->created_at) << " (" << r->provider << " " << r->card << " x"
            << r->gpus << ", " << per_hour(r->terms.price_per_hour) << ")\n";
    }
    (void)arm_autostop_flag(s, r->name, *autostop, opts->ssh);
    s.exit_code = 0;
  });
}

}  // namespace gpurent
