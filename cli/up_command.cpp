// SPDX-License-Identifier: MIT
// `gpurent up`: rents a server from a provider with an API. The server is recorded (state
// `creating`) BEFORE the create call; idempotent on --name; anything that fails after the
// create call destroys what was created and says so.
#include <CLI/CLI.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "common/text.hpp"
#include "providers/cost.hpp"
#include "providers/ledger.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

struct UpOptions {
  std::string provider;
  std::string card;
  std::uint32_t gpus = 1;
  bool spot = false;
  std::string name;
  std::string ssh_key;
  bool wait = false;
  bool no_wait = false;
  std::string max_price;
  double hours = 1;
  std::string region;
  std::string image;
  SshFlags ssh;
};

Result<std::string> read_public_key(const std::filesystem::path& path)
{
  std::ifstream in(path);
  if (!in) {
    return fail(Errc::usage, "--ssh-key " + path.string() + ": cannot read it; give an OpenSSH public key (.pub)");
  }
  std::string line;
  std::getline(in, line);
  if (line.rfind("ssh-", 0) != 0 && line.rfind("ecdsa-", 0) != 0) {
    return fail(Errc::usage, "--ssh-key " + path.string() + ": not an OpenSSH public key line");
  }
  return line;
}

// Accrued on every open server plus `projected`: refused when it would pass the budget.
Result<void> check_budget(StateStore& store, const Config& cfg, MicroUsd projected, TimePoint now)
{
  if (!cfg.budget) {
    return {};
  }
  TRY_ASSIGN(auto servers, store.list_servers(false));
  MicroUsd spent{0};
  for (const auto& srv : servers) {
    TRY_ASSIGN(auto ev, store.events(srv.id));
    spent += accrue(srv.terms, ev, now).accrued;
  }
  if (spent + projected > *cfg.budget) {
    return fail(Errc::refused, "budget: " + format_usd(spent) + " accrued on tracked servers + " + format_usd(projected) +
                                   " projected for this one would pass budget_usd " + format_usd(*cfg.budget) +
                                   "; stop something (`gpurent status`) or raise budget_usd");
  }
  return {};
}

nlohmann::json server_view(const ServerRecord& r)
{
  return {{"name", r.name},          {"provider", r.provider}, {"provider_id", r.provider_id},
          {"card", r.card},          {"gpus", r.gpus},         {"state", std::string(to_string(r.status))},
          {"host", r.host},          {"port", r.port},         {"user", r.user},
          {"host_key", r.host_key},  {"price_per_hour", to_units(r.terms.price_per_hour)},
          {"currency", r.terms.currency}, {"spot", r.spot}};
}

// After the create call answered: wait for running + SSH, else destroy what was created.
Result<ServerRecord> bring_up(Services& s, Provider& p, StateStore& store, ServerRecord rec, const UpOptions& o,
                              const std::filesystem::path& identity)
{
  const WaitOptions wait = wait_options(s);
  auto cleanup = [&](const Error& why) -> Error {
    s.err << "gpurent: " << why.message << "\ngpurent: destroying " << rec.name << " (" << rec.provider_id
          << "), which was created for nothing\n";
    auto gone = ensure_terminated(p, s.clock, rec.provider_id, wait);
    if (gone) {
      (void)store.record_state(rec.id, ServerStatus::destroyed, s.clock.now(), "up failed: destroyed what it created");
      return Error{why.code, why.message + "; the server it created was destroyed (billing stopped)"};
    }
    (void)store.record_state(rec.id, ServerStatus::destroying, s.clock.now(), "up failed: destroy not confirmed");
    return Error{why.code, why.message + "; destroying the server it created was NOT confirmed (" + gone.error().message +
                               "); run `gpurent down " + rec.name + " --destroy --force`"};
  };
  auto running = wait_running(p, s.clock, rec.provider_id, wait, [&](const Instance& in) {
    if (!s.global.json) {
      s.err << "gpurent: " << rec.name << ": " << in.raw_state << (in.host.empty() ? "" : " at " + in.host) << '\n';
    }
  });
  if (!running) {
    return std::unexpected(cleanup(running.error()));
  }
  TRY(store.set_connection(rec.id, running->user, running->host, running->port, running->host_key));
  rec.user = running->user;
  rec.host = running->host;
  rec.port = running->port;
  if (o.no_wait) {
    TRY(store.record_state(rec.id, ServerStatus::running, s.clock.now(), "running (SSH not checked: --no-wait)"));
    rec.status = ServerStatus::running;
    return rec;
  }
  auto options = make_ssh_options(s, o.ssh);
  if (!options) {
    return std::unexpected(cleanup(options.error()));
  }
  if (!identity.empty()) {
    options->identities = {identity};
    options->use_agent = false;
  }
  options->accept_new_host_key = true;  // the first key seen is recorded (trust on first use)
  options->expected_host_key = running->host_key.empty() ? "" : host_key_fingerprint_of(running->host_key).value_or("");
  const SshTarget target{rec.user, rec.host, rec.port};
  auto key = wait_ssh([&]() -> Result<std::string> {
    TRY_ASSIGN(auto session, connect_ssh(s, target, *options));
    return session->host_key_fingerprint();
  }, s.clock, wait);
  if (!key) {
    return std::unexpected(cleanup(key.error()));
  }
  TRY(store.set_connection(rec.id, rec.user, rec.host, rec.port, *key));
  TRY(store.record_state(rec.id, ServerStatus::running, s.clock.now(), "SSH answered"));
  rec.host_key = *key;
  rec.status = ServerStatus::running;
  return rec;
}

Result<ServerRecord> run_up(Services& s, const UpOptions& o)
{
  TRY_ASSIGN(const Config cfg, load_config(s));
  auto resolved = resolve_offer(cfg, o.provider, o.card, o.gpus, "", o.spot);
  if (!resolved && resolved.error().code == Errc::not_found) {
    // No built-in or configured price: a fresh fetched offer, else the price the provider reports.
    TRY_ASSIGN(ProviderInfo pi, find_provider(o.provider));
    TRY_ASSIGN(Card card, find_card(o.card));
    PricedOffer po{pi, card, Offer{pi.name, card.id, o.gpus, MicroUsd{0}, std::nullopt, o.region, "provider"},
                   "price as the provider reports it once the server exists"};
    if (auto cached = cached_offers(s, cfg)) {
      if (const Offer* f = find_offer(*cached, pi.name, card.id, o.gpus)) {
        po.offer = *f;
        po.origin_text = f->price_origin;
      }
    }
    resolved = po;
  }
  TRY_ASSIGN(PricedOffer priced, std::move(resolved));
  const ProviderInfo& info = priced.provider;
  if (!info.has_api) {
    return fail(Errc::refused, info.name + " has no public API: rent the server in its console, then track it with "
                                           "`gpurent attach --provider " + info.name + " ...`");
  }
  const MicroUsd price = o.spot && priced.offer.spot_price_per_hour ? *priced.offer.spot_price_per_hour
                                                                     : priced.offer.price_per_hour;
  std::optional<MicroUsd> max_price;
  if (!o.max_price.empty()) {
    const auto v = parse_double(o.max_price);
    if (!v) {
      return fail(Errc::usage, "--max-price " + o.max_price + ": not a number of USD per hour");
    }
    TRY_ASSIGN(MicroUsd m, usd_to_micro(*v));
    max_price = m;
    if (price.n > 0 && price > m) {
      return fail(Errc::refused, info.name + " " + priced.card.id + " x" + std::to_string(o.gpus) + " costs " +
                                     per_hour(price) + " (" + priced.origin_text + "), above --max-price " +
                                     per_hour(m) + "; raise --max-price or pick a cheaper card");
    }
  }
  const std::string name = o.name.empty() ? info.name + "-" + priced.card.id : o.name;
  TRY_ASSIGN(StateStore* store, s.state());
  TRY_ASSIGN(ProviderHandle h, open_provider(s, cfg, info.name));
  Provider& p = *h.provider;
  if (o.spot) {
    if (auto why = p.unsupported(Feature::spot)) {
      return fail(Errc::refused, *why);
    }
  }
  std::filesystem::path pub = o.ssh_key;
  if (pub.empty()) {
    const auto home = s.getenv("HOME");
    if (!home) {
      return fail(Errc::usage, "no --ssh-key and no HOME to find ~/.ssh/id_ed25519.pub; pass --ssh-key PATH");
    }
    pub = std::filesystem::path(*home) / ".ssh" / "id_ed25519.pub";
  }
  TRY_ASSIGN(std::string public_key, read_public_key(pub));
  std::filesystem::path identity = pub;
  identity = identity.extension() == ".pub" ? identity.replace_extension() : std::filesystem::path{};

  // Idempotent on the name.
  TRY_ASSIGN(auto existing, store->find_server(name));
  ServerRecord rec;
  if (existing && !is_closed(existing->status)) {
    rec = *existing;
    if (rec.provider != info.name || rec.card != priced.card.id || rec.gpus != o.gpus) {
      return fail(Errc::refused, "a server named '" + name + "' is already tracked (" + rec.provider + " " + rec.card +
                                     " x" + std::to_string(rec.gpus) + "); pick another --name");
    }
    if (rec.status == ServerStatus::running) {
      s.err << "gpurent: " << name << " is already up\n";
      return rec;
    }
    s.err << "gpurent: resuming " << name << " (" << to_string(rec.status) << ")\n";
  } else {
    const BillingPolicy policy = o.spot ? info.spot_billing : info.billing;
    const auto hours = std::chrono::seconds{static_cast<std::int64_t>(o.hours * 3600.0)};
    TRY(check_budget(*store, cfg, policy.charge(price, hours), s.clock.now()));
    s.err << "gpurent: " << info.display << " " << priced.card.display << " x" << o.gpus << (o.spot ? " (spot)" : "")
          << ": " << (price.n > 0 ? per_hour(price) : std::string("price unknown until the provider answers")) << ", "
          << info.billing_label << " billing (increment " << increment_label(policy.increment) << ", minimum "
          << increment_label(policy.minimum) << "); " << priced.origin_text << '\n';
    TRY(confirm(s, "Rent " + name + " on " + info.name + " (" + per_hour(price) + ")?"));
    rec.name = name;
    rec.provider = info.name;
    rec.card = priced.card.id;
    rec.gpus = o.gpus;
    rec.spot = o.spot;
    rec.region = o.region;
    rec.terms = terms_for(info, price, o.spot);
    rec.status = ServerStatus::creating;
    rec.created_at = s.clock.now();
    TRY_ASSIGN(rec, store->insert_server(rec));
  }
  crash_point(s, "recorded");

  if (rec.provider_id.empty()) {
    LaunchRequest req{name, rec.card, rec.gpus, rec.spot, o.region, max_price, public_key, o.image};
    auto launched = p.launch(req);
    if (!launched) {
      // A create that may have reached the provider is looked up by name before giving up.
      if (launched.error().code == Errc::timeout || launched.error().code == Errc::unavailable) {
        if (auto all = p.list()) {
          for (const auto& in : *all) {
            if (in.name == name && in.state != InstanceState::terminated) {
              launched = in;
            }
          }
        }
      }
      if (!launched) {
        (void)store->record_state(rec.id, ServerStatus::failed, s.clock.now(), "create failed: " + launched.error().message);
        return std::unexpected(launched.error());
      }
    }
    rec.provider_id = launched->id;
    TRY(store->set_provider_id(rec.id, rec.provider_id));
    if (launched->price_per_hour.n > 0 && launched->price_per_hour != rec.terms.price_per_hour) {
      s.err << "gpurent: " << info.name << " reports " << per_hour(launched->price_per_hour)
            << " for this server; the ledger uses that price\n";
      TRY(store->set_price(rec.id, launched->price_per_hour));
      rec.terms.price_per_hour = launched->price_per_hour;
    }
    TRY(store->record_state(rec.id, ServerStatus::provisioning, s.clock.now(), "created: " + rec.provider_id));
    rec.status = ServerStatus::provisioning;
  }
  crash_point(s, "created");
  return bring_up(s, p, *store, rec, o, identity);
}

}  // namespace

void add_up_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<UpOptions>();
  auto* sub = app.add_subcommand("up", "rent a server from a provider with an API (recorded before the create call)");
  sub->add_option("--provider", opts->provider, "lambda, runpod or vast")->required();
  sub->add_option("--card", opts->card, "card, e.g. rtx-4090, a100-80gb")->required();
  sub->add_option("--gpus", opts->gpus, "GPUs in the server")->check(CLI::Range(1, 8));
  sub->add_flag("--spot", opts->spot, "an interruptible/spot server");
  sub->add_option("--name", opts->name, "name to track it by (idempotent: an existing one is resumed)");
  sub->add_option("--ssh-key", opts->ssh_key, "OpenSSH public key to install (default ~/.ssh/id_ed25519.pub)");
  sub->add_flag("--wait", opts->wait, "wait until SSH answers (the default)");
  sub->add_flag("--no-wait", opts->no_wait, "return once the provider reports it running, without checking SSH");
  sub->add_option("--max-price", opts->max_price, "refuse if the server costs more USD per hour");
  sub->add_option("--hours", opts->hours, "expected run time, for the budget check (default 1)")->check(CLI::PositiveNumber);
  sub->add_option("--region", opts->region, "provider region");
  sub->add_option("--image", opts->image, "container or machine image");
  sub->add_option("--known-hosts", opts->ssh.known_hosts, "known-hosts file to record the host key in");
  sub->callback([&s, opts] {
    auto r = run_up(s, *opts);
    if (!r) {
      s.exit_code = report_error(s, r.error());
      return;
    }
    if (s.global.json) {
      s.out << server_view(*r).dump(2) << '\n';
    } else {
      s.out << r->name << ": " << to_string(r->status) << " on " << r->provider << " (" << r->provider_id << "), "
            << r->user << "@" << r->host << ":" << r->port << ", " << per_hour(r->terms.price_per_hour) << "\n"
            << "  connect: gpurent ssh " << r->name << "   release: gpurent down " << r->name << " --destroy\n";
    }
    s.exit_code = 0;
  });
}

}  // namespace gpurent
