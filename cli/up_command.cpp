// SPDX-License-Identifier: MIT
// `gpurent up`: rents a server from a provider with an API. The server is recorded (state
// `creating`) BEFORE the create call; idempotent on --name; anything that fails after the
// create call destroys what was created and says so. A tracked server of that name that is
// stopped (or was left booting) is started instead (cli/start_support.hpp), never destroyed.
// With --from-plan MODEL, the provider, card and GPU count are the cheapest fit that `plan`
// finds among the providers with an API.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/autostop_support.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/interrupt.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/plan_options.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "cli/start_support.hpp"
#include "common/terminal_text.hpp"
#include "cli/up_choice.hpp"
#include "cli/up_group.hpp"
#include "cli/ssh_options.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/cost.hpp"
#include "providers/ledger.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

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
  nlohmann::json view{{"name", r.name},          {"provider", r.provider}, {"provider_id", r.provider_id},
                      {"card", r.card},          {"gpus", r.gpus},         {"state", std::string(to_string(r.status))},
                      {"host", r.host},          {"port", r.port},         {"user", r.user},
                      {"host_key", r.host_key},  {"price_per_hour", to_units(r.terms.price_per_hour)},
                      {"currency", r.terms.currency}, {"spot", r.spot}};
  add_group_keys(view, r);
  return view;
}


// Destroys a server `up` created but cannot hand over (over --max-price, never running, no SSH):
// one destroy request, confirmed by the provider, recorded either way. The error says whether
// billing stopped and what the short life cost.
Error destroy_created(Services& s, Provider& p, StateStore& store, const ServerRecord& rec, const Error& why)
{
  s.err << "gpurent: " << escape_controls(why.message) << "\ngpurent: destroying " << rec.name << " (" << rec.provider_id
        << "), which was created for nothing\n";
  auto d = destroy_tracked(s, p, store, rec, "up failed: " + why.message, false);
  if (!d) {
    return Error{Errc::internal, why.message + "; destroying the server it created could not be recorded (" +
                                     d.error().message + "); check `gpurent status --refresh` and the provider's console"};
  }
  if (d->outcome.confirmed) {
    return Error{why.code, why.message + "; the server it created was destroyed (confirmed by " + rec.provider +
                               "; billing stopped): " + d->billed};
  }
  return Error{Errc::unavailable, why.message + "; destroying the server it created was NOT confirmed (" +
                                      d->outcome.error.message + "): it is tracked as " +
                                      std::string(to_string(d->status)) + " and may still bill; retry with `gpurent down " +
                                      rec.name + " --destroy` or `gpurent status --refresh`"};
}

std::optional<Error> above_ceiling(Services& s, const ServerRecord& rec, MicroUsd reported, MicroUsd quote,
                                   std::optional<MicroUsd> max_price);

// What bring_up holds a created server to, and says when interrupted.
struct Handover {
  MicroUsd quote;                    // the price the user confirmed
  std::optional<MicroUsd> max_price; // --max-price: the ceiling instead of the quote
  std::string resume;                // the `gpurent up …` that resumes this server
};

// The command that resumes an interrupted `up` of `rec` (up is idempotent on --name).
std::string resume_command(const ServerRecord& rec)
{
  return "gpurent up --provider " + rec.provider + " --card " + rec.card + " --gpus " + std::to_string(rec.gpus) +
         (rec.spot ? " --spot" : "") + " --name " + rec.name;
}

// Interrupted after the create call: the server is left as it is (the user may want it), its
// record brought up to date from one more look at the provider, and the error says what it
// bills and the commands that release or resume it. Nothing a user did not see happens.
Error left_billing(Services& s, Provider& p, StateStore& store, ServerRecord rec, const Error& why,
                   const std::string& resume)
{
  auto look = p.get(rec.provider_id);
  if (look && (!look->has_value() || (*look)->state == InstanceState::terminated)) {
    (void)store.record_state(rec.id, ServerStatus::gone, s.clock.now(), "interrupted; the provider no longer has it");
    Error e = why;
    e.message = why.message + "; " + rec.provider + " no longer has " + rec.name + " (" + rec.provider_id +
                "): nothing bills, and the record is closed";
    return e;
  }
  if (look && !(*look)->host.empty()) {
    (void)store.set_connection(rec.id, (*look)->user, (*look)->host, (*look)->port, rec.host_key);
  }
  const std::string state = look ? (*look)->raw_state : "not known (" + look.error().message + ")";
  const MicroUsd rate = billing_now(store, rec);
  Error e = why;
  e.message = why.message + " (" + caught_signal_name(s) + "): " + rec.name + " (" + rec.provider + " " + rec.provider_id +
              ", " + state + ") was NOT destroyed and bills " + per_hour(rate) + " until released; release it with `gpurent down " +
              rec.name + " --destroy --no-backup`, or resume with `" + resume + "`";
  return e;
}

// After the create call answered: wait for running + SSH, else destroy what was created.
Result<ServerRecord> bring_up(Services& s, Provider& p, StateStore& store, ServerRecord rec, const UpOptions& o,
                              const std::filesystem::path& identity, const Handover& ceiling)
{
  const WaitOptions wait = wait_options(s);
  auto cleanup = [&](const Error& why) -> Error { return destroy_created(s, p, store, rec, why); };
  auto running = wait_running(p, s.clock, rec.provider_id, wait, [&](const Instance& in) {
    if (!s.global.json) {
      s.err << "gpurent: " << rec.name << ": " << in.raw_state << (in.host.empty() ? "" : " at " + in.host) << '\n';
    }
  });
  if (!running) {
    if (running.error().interrupted) {
      return std::unexpected(left_billing(s, p, store, rec, running.error(), ceiling.resume));
    }
    return std::unexpected(cleanup(running.error()));
  }
  // The instance's own price (Vast: its dph_total with the disk it has) is the ledger's price,
  // and held to the ceiling (not a spot server's: Vast documents no instance price for a bid).
  if (!rec.spot) {
    if (auto above = above_ceiling(s, rec, running->price_per_hour, ceiling.quote, ceiling.max_price)) {
      return std::unexpected(cleanup(*above));
    }
  }
  TRY(adopt_reported_prices(s, store, rec, *running));
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
    if (key.error().interrupted) {
      return std::unexpected(left_billing(s, p, store, rec, key.error(), ceiling.resume));
    }
    return std::unexpected(cleanup(key.error()));
  }
  TRY(store.set_connection(rec.id, rec.user, rec.host, rec.port, *key));
  TRY(store.record_state(rec.id, ServerStatus::running, s.clock.now(), "SSH answered"));
  rec.host_key = *key;
  rec.status = ServerStatus::running;
  return rec;
}

// A built-in price (data/offers.json's or the market snapshot's) is a guess and an unknown one no
// quote at all: the provider's own answer,
// asked now, is the price the user confirms (and, unless --max-price says otherwise, the most
// `up` keeps a server at). A provider that cannot answer leaves the guess, said so.
void requote(Services& s, Provider& p, PricedOffer& priced, std::uint32_t gpus)
{
  const std::string& origin = priced.offer.price_origin;
  if (!origin.starts_with("built-in ") && priced.offer.price_source != "snapshot" && origin != "provider") {
    return;
  }
  const std::string& who = priced.provider.name;
  auto live = p.fetch_offers();
  const Offer* now = live ? find_offer(*live, who, priced.card.id, gpus) : nullptr;
  if (now == nullptr) {
    const std::string why = live ? who + " does not list " + priced.card.id + " x" + std::to_string(gpus) + " right now"
                                 : "asking " + who + " for its current price failed: " + live.error().message;
    report_warning(s, why + ": the quote stays " +
                          (priced.offer.price_per_hour.n > 0
                               ? per_hour(priced.offer.price_per_hour) + " (" + priced.offer.price_origin + ")"
                               : std::string("unknown")) +
                          ", and a server created at a higher price is destroyed");
    return;
  }
  const MicroUsd was = priced.offer.price_per_hour;
  priced.offer = *now;
  priced.offer.price_origin = "quoted by " + who + " now";
  priced.origin_text = priced.offer.price_origin;
  if (was.n > 0 && was != now->price_per_hour) {
    s.err << "gpurent: " << who << " quotes " << per_hour(now->price_per_hour) << " for " << priced.card.id << " x" << gpus
          << " now (the built-in price was " << per_hour(was) << ")\n";
  }
}

// The price the server was created at against the ceiling: --max-price when given, else the
// quote the user confirmed. Above it the server is destroyed, unless a terminal says keep it.
// nullopt: keep it.
std::optional<Error> above_ceiling(Services& s, const ServerRecord& rec, MicroUsd reported, MicroUsd quote,
                                   std::optional<MicroUsd> max_price)
{
  const MicroUsd ceiling = max_price ? *max_price : quote;
  if (ceiling.n <= 0 || reported <= ceiling) {
    return std::nullopt;
  }
  const std::string what = rec.provider + " created " + rec.name + " at " + per_hour(reported) + ", above " +
                           (max_price ? "--max-price " + per_hour(*max_price)
                                      : "the " + per_hour(quote) + " you confirmed");
  if (!max_price && !s.global.yes && s.stdin_tty) {
    if (confirm(s, what + ". Keep it at " + per_hour(reported) + "?")) {
      s.err << "gpurent: keeping " << rec.name << " at " << per_hour(reported) << " (confirmed)\n";
      return std::nullopt;
    }
  }
  return Error{Errc::refused, what + "; " + (max_price ? std::string("raise --max-price or try later")
                                                        : "to rent at that price, re-run with `--max-price " +
                                                              format_usd(reported, reported.n % 10'000 == 0 ? 2 : 4).substr(1) +
                                                              "`, or try later")};
}

// The server `up --name` found tracked and not running, started the way `gpurent start` does:
// nothing this call did not create is ever destroyed.
Result<ServerRecord> resume_tracked(Services& s, const Config& cfg, StateStore& store, const ServerRecord& rec,
                                    const UpOptions& o, std::vector<std::string>& changes)
{
  if (!startable(rec)) {
    return fail(Errc::refused, "'" + rec.name + "' is " + std::string(to_string(rec.status)) +
                                   " at " + rec.provider + "; `up` does not resume that: see `gpurent status --refresh " + rec.name + "`");
  }
  TRY_ASSIGN(const StartReport r, start_tracked(s, cfg, store, rec, StartRequest{o.ssh, o.no_wait, "gpurent start"}));
  changes = r.changes;
  return r.record;
}

Result<ServerRecord> run_up(Services& s, const UpOptions& o, nlohmann::json& plan, InterruptWatch& watch,
                            std::vector<std::string>& changes)
{
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(UpChoice choice, o.from_plan.empty() ? choose_given(s, cfg, o) : choose_from_plan(s, cfg, o));
  if (!choice.plan.is_null()) {
    plan = std::move(choice.plan);  // a group's other members do not say it again
  }
  PricedOffer priced = choice.priced;
  const std::uint32_t gpus = choice.gpus;
  const ProviderInfo& info = priced.provider;
  if (!info.has_api) {
    return fail(Errc::refused, info.name + " has no public API: rent the server in its console, then track it with "
                                           "`gpurent attach --provider " + info.name + " ...`");
  }
  std::optional<MicroUsd> max_price;
  if (!o.max_price.empty()) {
    const auto m = parse_usd_per_hour(o.max_price);
    if (!m) {
      return fail(Errc::usage, "--max-price: " + m.error().message);
    }
    max_price = *m;
    const MicroUsd guess = o.spot && priced.offer.spot_price_per_hour ? *priced.offer.spot_price_per_hour
                                                                       : priced.offer.price_per_hour;
    if (guess.n > 0 && guess > *m) {
      return fail(Errc::refused, info.name + " " + priced.card.id + " x" + std::to_string(gpus) + " costs " +
                                     per_hour(guess) + " (" + priced.origin_text + "), above --max-price " +
                                     per_hour(*m) + "; raise --max-price or pick a cheaper card");
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
  bool inserted = false;  // by this run (a record from an earlier run may have a create call behind it)
  if (existing && !is_closed(existing->status)) {
    rec = *existing;
    if (rec.provider != info.name || rec.card != priced.card.id || rec.gpus != gpus || rec.group != o.group) {
      return fail(Errc::refused, "a server named '" + name + "' is already tracked (" + rec.provider + " " + rec.card +
                                     " x" + std::to_string(rec.gpus) + "); pick another --name");
    }
    if (rec.status == ServerStatus::running) {
      if (!o.second_pass) {
        s.err << "gpurent: " << name << " is already up\n";
      }
      return rec;
    }
    if (rec.status == ServerStatus::destroying || rec.status == ServerStatus::destroy_failed ||
        rec.status == ServerStatus::release_pending) {
      return fail(Errc::refused, "'" + name + "' is " + std::string(to_string(rec.status)) + "; finish that with `gpurent down " +
                                     name + " --destroy`, or pick another --name");
    }
    if (!o.second_pass) {
      s.err << "gpurent: resuming " << name << " (" << to_string(rec.status) << ")\n";
    }
    if (!rec.provider_id.empty() && !o.create_only && !o.second_pass) {
      // Created by an earlier call (stopped since, or left booting): started, never destroyed.
      return resume_tracked(s, cfg, *store, rec, o, changes);
    }
    if (o.create_only && (rec.status == ServerStatus::stopped || rec.status == ServerStatus::hibernated)) {
      return fail(Errc::refused, "'" + name + "' is " + std::string(to_string(rec.status)) + "; start the group's stopped servers "
                                     "with `gpurent start " + o.group + "` first (`up` never destroys a server it did not create)");
    }
  } else {
    std::chrono::seconds hours{3600};
    if (!o.hours.empty()) {
      // Qualified: cost_command.cpp, in the same unity unit, has its own parse_hours.
      const auto given = gpurent::parse_hours(o.hours);
      if (!given) {
        return fail(Errc::usage, "--hours: " + given.error().message);
      }
      hours = *given;
    }
    requote(s, p, priced, gpus);
    const MicroUsd price = o.spot && priced.offer.spot_price_per_hour ? *priced.offer.spot_price_per_hour
                                                                       : priced.offer.price_per_hour;
    if (max_price && price.n > 0 && price > *max_price) {
      return fail(Errc::refused, info.name + " " + priced.card.id + " x" + std::to_string(gpus) + " costs " +
                                     per_hour(price) + " (" + priced.origin_text + "), above --max-price " +
                                     per_hour(*max_price) + "; raise --max-price or pick a cheaper card");
    }
    const BillingPolicy policy = o.spot ? info.spot_billing : info.billing;
    if (!o.confirmed) {
      // A group is checked and confirmed once, for all its servers.
      const std::int64_t count = o.group.empty() ? 1 : std::max<std::int64_t>(o.nodes, 1);
      TRY(check_budget(*store, cfg, MicroUsd{policy.charge(price, hours).n * count}, s.clock.now()));
      s.err << "gpurent: " << info.display << " " << priced.card.display << " x" << gpus << (o.spot ? " (spot)" : "")
            << ": " << (price.n > 0 ? per_hour(price) : std::string("price unknown until the provider answers")) << ", "
            << info.billing_label << " billing (increment " << increment_label(policy.increment) << ", minimum "
            << increment_label(policy.minimum) << "); " << priced.origin_text << '\n';
      TRY(confirm(s, o.group.empty() ? "Rent " + name + " on " + info.name + " (" + per_hour(price) + ")?"
                                     : "Rent group " + o.group + ": " + std::to_string(count) + " servers on " + info.name +
                                           " (" + per_hour(price) + " each, " + per_hour(MicroUsd{price.n * count}) +
                                           " in all)?"));
    }
    rec.name = name;
    rec.provider = info.name;
    rec.card = priced.card.id;
    rec.gpus = gpus;
    rec.spot = o.spot;
    rec.region = o.region;
    rec.terms = terms_for(info, price, o.spot);
    rec.status = ServerStatus::creating;
    rec.created_at = s.clock.now();
    rec.group = o.group;
    rec.group_rank = o.group_rank;
    // Remembered for backup, ssh, doctor and down.
    std::error_code ec;
    rec.identity_file = identity.empty() || !std::filesystem::exists(identity, ec)
                            ? std::string{}
                            : std::filesystem::absolute(identity, ec).string();
    rec.known_hosts_file = o.ssh.known_hosts.empty() ? std::string{}
                                                     : std::filesystem::absolute(o.ssh.known_hosts, ec).string();
    TRY_ASSIGN(rec, store->insert_server(rec));
    inserted = true;
  }
  crash_point(s, "recorded");
  const std::string resume = resume_command(rec);
  if (rec.provider_id.empty()) {
    watch.set_last_words("gpurent: " + name + " is recorded as `creating`; whether " + info.name +
                         " created it is not known: `gpurent status --refresh` settles it\n");
    if (s.signal_caught() != 0) {
      // Before the create call: nothing was asked of the provider (a record from an earlier
      // run stays as it was: that run may have sent one).
      if (inserted) {
        (void)store->record_state(rec.id, ServerStatus::failed, s.clock.now(), "interrupted before the create call");
      }
      return std::unexpected(interrupted_error("before the create call (" + caught_signal_name(s) + "): " + info.name +
                                               " was not asked to create " + name + ", and nothing bills"));
    }
  }

  // What the user confirmed (the price recorded with the server before the create call).
  MicroUsd quote = rec.terms.price_per_hour;
  if (rec.provider_id.empty()) {
    // Where the provider picks among offers (Vast), none above the ceiling is taken.
    const MicroUsd ceiling = max_price ? *max_price : quote;
    LaunchRequest req{name, rec.card, rec.gpus, rec.spot, o.region,
                      ceiling.n > 0 ? std::optional<MicroUsd>(ceiling) : std::nullopt, public_key, o.image};
    auto launched = p.launch(req);
    if (!launched) {
      // The create may have reached the provider whatever the error: its list by name decides.
      const Error create_error = launched.error();
      // (Unless it never left this machine, or was refused for its credentials.)
      auto found = create_error.code == Errc::unauthorized || create_error.not_sent
                       ? Result<std::optional<Instance>>(std::optional<Instance>{})
                       : find_named(p, s.clock, name, wait_options(s));
      if (found && found->has_value()) {
        s.err << "gpurent: the create call failed (" << escape_controls(create_error.message) << "), but " << info.name << " has "
              << name << " (" << (*found)->id << "): tracking it\n";
        launched = **found;
      } else if (found || !is_transient(create_error) || create_error.not_sent) {
        // Not in the provider's list, refused, or never sent (the API was unreachable): nothing
        // was created and nothing bills, so the record closes instead of accruing a rate.
        (void)store->record_state(rec.id, ServerStatus::failed, s.clock.now(), "create failed: " + create_error.message);
        if (create_error.not_sent) {
          Error e = create_error;
          e.message = info.name + "'s API was not reached (" + create_error.message + "): nothing was created and " +
                      name + " is not billed";
          return std::unexpected(e);
        }
        return std::unexpected(create_error);
      } else {
        Error e{Errc::unavailable, create_error.message + "; whether " + info.name + " created " + name +
                                       " is not known (" + found.error().message + "): it stays tracked as "
                                       "`creating`; run `gpurent status --refresh` to settle it"};
        e.interrupted = found.error().interrupted;
        e.code = e.interrupted ? Errc::partial : e.code;
        return std::unexpected(e);
      }
    }
    rec.provider_id = launched->id;
    TRY(store->set_provider_id(rec.id, rec.provider_id));
    TRY(adopt_reported_prices(s, *store, rec, *launched));
    TRY(store->record_state(rec.id, ServerStatus::provisioning, s.clock.now(), "created: " + rec.provider_id));
    rec.status = ServerStatus::provisioning;
    watch.set_last_words("gpurent: " + name + " (" + info.name + " " + rec.provider_id + ") is recorded as provisioning and bills " +
                         per_hour(rec.terms.price_per_hour) + ": release it with `gpurent down " + name +
                         " --destroy --no-backup`, or resume with `" + resume + "`\n");
    // RunPod picks the machine: its price is known only now. Above the ceiling it is given
    // back, confirmed.
    if (auto above = above_ceiling(s, rec, launched->price_per_hour, quote, max_price)) {
      return std::unexpected(destroy_created(s, p, *store, rec, *above));
    }
    quote = std::max(quote, launched->price_per_hour);  // kept at that price: not asked again
  }
  crash_point(s, "created");
  if (s.signal_caught() != 0) {
    return std::unexpected(left_billing(s, p, *store, rec, interrupted_error("after the create call"), resume));
  }
  if (o.create_only) {
    return rec;  // a group's first pass: the others are created before any is waited for
  }
  return bring_up(s, p, *store, rec, o, identity, Handover{quote, max_price, resume});
}

}  // namespace

void add_up_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<UpOptions>();
  auto* sub = app.add_subcommand("up", "rent a server from a provider with an API (recorded before the create call)");
  sub->add_option("--provider", opts->provider, "lambda, runpod or vast (with --from-plan: these clouds, a comma list)");
  sub->add_option("--card", opts->card, "card, e.g. rtx-4090, a100-80gb (with --from-plan: only this card)");
  sub->add_option("--gpus", opts->gpus, "GPUs in the server, 1-8 (default 1; with --from-plan the cheapest count that fits)");
  sub->add_option("--from-plan", opts->from_plan, "MODEL: let `plan` choose provider, card and GPUs for this job");
  sub->add_flag("--rentable", opts->sizing.rentable,
                "with --from-plan: choose among the clouds gpurent rents itself (without it, a cheaper cloud "
                "gpurent does not rent refuses, exit 3)");
  add_plan_sizing_options(*sub, opts->sizing);
  add_plan_job_options(*sub, opts->sizing);
  sub->add_flag("--spot", opts->spot, "an interruptible/spot server");
  sub->add_option("--name", opts->name, "name to track it by (idempotent: an existing one is resumed)");
  sub->add_option("--ssh-key", opts->ssh_key, "OpenSSH public key to install (default ~/.ssh/id_ed25519.pub)");
  sub->add_flag("--wait", opts->wait, "wait until SSH answers (the default)");
  sub->add_flag("--no-wait", opts->no_wait, "return once the provider reports it running, without checking SSH");
  sub->add_option("--max-price", opts->max_price, "refuse if the server costs more USD per hour");
  sub->add_option("--hours", opts->hours, "expected run time, for the budget check and the plan (default 1)");
  sub->add_option("--region", opts->region, "provider region");
  sub->add_option("--image", opts->image, "container or machine image");
  sub->add_option("--known-hosts", opts->ssh.known_hosts, "known-hosts file to record the host key in");
  sub->add_flag("--accept-new-host-key", opts->ssh.accept_new_host_key,
                "a stopped server it starts may present a new host key (RunPod re-creates the container): trust it");
  auto autostop = add_autostop_flag(*sub);
  auto credential = std::make_shared<std::string>();
  sub->add_option("--server-credential", *credential,
                  "with --autostop: hand the API key in this local environment variable to the server (stored 0600 there)");
  sub->add_option("--nodes", opts->nodes, "rent N servers as one group (1-64; needs --group)")->check(CLI::Range(1, 64));
  sub->add_option("--group", opts->group, "the group's NAME: its servers are NAME-0, NAME-1, ... (all or none)");
  sub->callback([&s, opts, autostop, credential] {
    nlohmann::json plan;
    std::vector<std::string> changes;
    if (!autostop->empty() || !credential->empty()) {
      // A malformed --autostop is a usage error before anything is rented.
      auto checked = [&]() -> Result<void> {
        if (autostop->empty()) {
          return fail(Errc::usage, "--server-credential goes with --autostop (the watchdog is what uses it)");
        }
        TRY_ASSIGN(AutostopRequest rq, parse_autostop_flag(*autostop));
        return check_autostop_request(rq);
      }();
      if (!checked) {
        s.exit_code = report_error(s, checked.error());
        return;
      }
    }
    InterruptWatch watch(s);
    if (opts->nodes > 1 || !opts->group.empty()) {
      auto members = rent_group(s, *opts, [&](const UpOptions& member) { return run_up(s, member, plan, watch, changes); },
                                [&]() -> Result<std::uint32_t> {
                                  TRY_ASSIGN(const Config cfg, load_config(s));
                                  TRY_ASSIGN(const UpChoice choice, choose_from_plan(s, cfg, *opts));
                                  plan = choice.plan;
                                  return choice.nodes;
                                });
      if (!members) {
        s.exit_code = report_error(s, members.error());
        return;
      }
      if (s.global.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& m : *members) {
          list.push_back(server_view(m));
        }
        nlohmann::json view{{"group", opts->group}, {"nodes", members->size()}, {"members", list}};
        if (!plan.is_null()) {
          view["plan"] = plan;
        }
        s.out << view.dump(2) << '\n';
      } else {
        MicroUsd total{0};
        for (const auto& m : *members) {
          total += m.terms.price_per_hour;
          s.out << m.name << " (node " << m.group_rank << "): " << to_string(m.status) << " on " << m.provider << " ("
                << m.provider_id << "), " << m.user << "@" << m.host << ":" << m.port << ", "
                << per_hour(m.terms.price_per_hour) << "\n";
        }
        s.out << "group " << opts->group << ": " << members->size() << " servers, " << per_hour(total) << " in all\n"
              << "  run: gpurent run " << opts->group << " -- torchrun ...   release: gpurent down " << opts->group
              << " --destroy\n";
      }
      bool armed_all = true;
      for (const auto& m : *members) {
        armed_all = arm_autostop_flag(s, m.name, *autostop, opts->ssh, *credential).has_value() && armed_all;
      }
      s.exit_code = armed_all ? 0 : exit_code_for(Errc::partial);
      return;
    }
    auto r = run_up(s, *opts, plan, watch, changes);
    if (!r) {
      s.exit_code = report_error(s, r.error());
      return;
    }
    // The watchdog is armed before the document is written, so that it can say how that went.
    const auto armed = arm_autostop_flag(s, r->name, *autostop, opts->ssh, *credential);
    if (s.global.json) {
      nlohmann::json view = server_view(*r);
      if (!plan.is_null()) {
        view["plan"] = plan;
      }
      if (!changes.empty()) {
        view["changes"] = changes;
      }
      if (!autostop->empty()) {
        view["autostop"] = armed ? autostop_json(**armed) : autostop_error_json(armed.error(), "up");
      }
      s.out << view.dump(2) << '\n';
    } else {
      s.out << r->name << ": " << to_string(r->status) << " on " << r->provider << " (" << r->provider_id << "), "
            << r->user << "@" << r->host << ":" << r->port << ", " << per_hour(r->terms.price_per_hour) << "\n";
      for (const auto& c : changes) {
        s.out << "  changed: " << c << "\n";
      }
      s.out << "  connect: gpurent ssh " << r->name << "   release: gpurent down " << r->name << " --destroy\n";
      if (armed && *armed) {
        print_autostop_text(s.out, r->name, **armed);
      }
    }
    s.exit_code = armed ? 0 : exit_code_for(Errc::partial);
  });
}

}  // namespace gpurent
