// SPDX-License-Identifier: MIT
#include "cli/lifecycle_support.hpp"

#include <unistd.h>

#include <ctime>
#include <iostream>
#include <istream>
#include <ostream>

#include "cli/credential_guard.hpp"
#include "cli/services.hpp"
#include "common/clock.hpp"
#include "common/text.hpp"
#include "providers/ledger.hpp"
#include "providers/offer_cache.hpp"
#include "providers/registry.hpp"

namespace gpurent {
namespace {

const std::optional<std::string>* key_of(const Config& cfg, std::string_view name)
{
  if (name == "lambda") {
    return &cfg.lambda_api_key;
  }
  if (name == "runpod") {
    return &cfg.runpod_api_key;
  }
  if (name == "vast") {
    return &cfg.vast_api_key;
  }
  return nullptr;
}

std::optional<std::string> url_of(const Config& cfg, std::string_view name)
{
  if (name == "lambda") {
    return cfg.lambda_api_url;
  }
  if (name == "runpod") {
    return cfg.runpod_api_url;
  }
  if (name == "vast") {
    return cfg.vast_api_url;
  }
  return std::nullopt;
}

std::chrono::milliseconds env_ms(const Services& s, const std::string& key, std::int64_t scale, std::int64_t dflt)
{
  if (auto v = s.getenv(key)) {
    if (auto n = parse_u64(*v)) {
      return std::chrono::milliseconds{static_cast<std::int64_t>(*n) * scale};
    }
  }
  return std::chrono::milliseconds{dflt * scale};
}

}  // namespace

bool has_api_key(const Config& cfg, std::string_view name)
{
  const auto* k = key_of(cfg, name);
  return k != nullptr && k->has_value() && !(*k)->empty();
}

Result<ProviderHandle> open_provider(Services& s, const Config& cfg, std::string_view name)
{
  const DriverInfo* driver = find_driver(name);
  if (driver == nullptr) {
    return fail(Errc::refused, std::string(name) + " has no public API that gpurent drives; rent the server in its "
                                                   "console and track it with `gpurent attach`");
  }
  if (!has_api_key(cfg, name)) {
    return fail(Errc::unauthorized, std::string(name) + ": no API key; set " + std::string(driver->key_env) +
                                        " or " + std::string(name) + "_api_key in the config file");
  }
  DriverSettings settings;
  settings.api_key = **key_of(cfg, name);
  settings.base_url = url_of(cfg, name).value_or("");
  std::string url_source = config_value_source(cfg, std::string(name) + "_api_url");
  if (auto env_url = s.getenv(std::string(driver->url_env))) {
    settings.base_url = *env_url;
    url_source = driver->url_env;
  }
  // The key goes to every URL the driver sends it to: over https, or plain http to this machine.
  const std::string credential = "the " + std::string(name) + " API key";
  TRY(guard_credential_url(s, cfg, settings.base_url.empty() ? driver->default_url : settings.base_url, credential,
                           url_source));
  if (name == "runpod") {
    settings.graphql_url = s.getenv("GPURENT_RUNPOD_GRAPHQL_URL").value_or("");
    if (!settings.graphql_url.empty()) {
      TRY(guard_credential_url(s, cfg, settings.graphql_url, credential, "GPURENT_RUNPOD_GRAPHQL_URL"));
    }
  }
  TRY_ASSIGN(HttpClient* raw, s.http());
  RetryPolicy policy;
  policy.min_intervals = driver->rate_limits;
  policy.request_timeout = env_ms(s, "GPURENT_HTTP_TIMEOUT_S", 1000, 30);
  policy.initial_backoff = env_ms(s, "GPURENT_HTTP_BACKOFF_MS", 1, 1000);
  ProviderHandle h;
  h.http = std::make_unique<RetryingHttpClient>(*raw, s.clock, policy, s.global.verbose ? &s.err : nullptr);
  h.provider = driver->make(*h.http, settings);
  return h;
}

Result<std::vector<Offer>> refresh_all_offers(Services& s, const Config& cfg, std::string_view only,
                                              std::vector<std::string>& errors)
{
  TRY_ASSIGN(const auto path, offer_cache_path([&](const std::string& k) { return s.getenv(k); }));
  std::vector<Offer> all;
  for (const auto& d : driver_registry()) {
    if ((!only.empty() && d.name != only) || !has_api_key(cfg, d.name)) {
      continue;
    }
    auto h = open_provider(s, cfg, d.name);
    auto got = h ? refresh_offers(*h->provider, path, s.clock.now()) : Result<std::vector<Offer>>(std::unexpected(h.error()));
    if (!got) {
      errors.push_back(got.error().message);
      continue;
    }
    all.insert(all.end(), got->begin(), got->end());
  }
  return all;
}

Result<std::vector<Offer>> cached_offers(const Services& s, const Config& cfg)
{
  TRY_ASSIGN(const auto path, offer_cache_path([&](const std::string& k) { return s.getenv(k); }));
  const auto max_age = std::chrono::seconds{static_cast<std::int64_t>(cfg.offers_max_age_hours * 3600.0)};
  return load_fresh_offers(path, s.clock.now(), max_age);
}

Result<void> confirm(Services& s, std::string_view question)
{
  if (s.global.yes) {
    return {};
  }
  if (!s.stdin_tty) {
    return fail(Errc::refused, std::string(question) + ": not confirmed, and stdin is not a terminal to ask on; "
                                                       "re-run with --yes to confirm");
  }
  s.err << question << " [y/N] " << std::flush;
  std::string answer;
  std::getline(s.in, answer);
  const std::string a = to_lower(trim(answer));
  if (a == "y" || a == "yes") {
    return {};
  }
  return fail(Errc::refused, std::string(question) + ": not confirmed; nothing was changed");
}

void crash_point(Services& s, std::string_view point)
{
  if (auto at = s.getenv("GPURENT_TEST_CRASH_AT"); at && *at == point) {
    s.err << "gpurent: test crash at '" << point << "'\n" << std::flush;
    std::cout.flush();
    ::_exit(137);
  }
}

WaitOptions wait_options(const Services& s)
{
  WaitOptions w;
  w.timeout = env_ms(s, "GPURENT_WAIT_TIMEOUT_S", 1000, 600);
  w.poll = env_ms(s, "GPURENT_POLL_MS", 1, 5000);
  w.cancelled = [&s] { return s.signal_caught() != 0; };
  return w;
}

RentTerms terms_for(const ProviderInfo& info, MicroUsd price, bool spot)
{
  RentTerms t;
  t.price_per_hour = price;
  t.currency = info.currency;
  t.billing = spot ? info.spot_billing : info.billing;
  t.stopped = info.stopped;
  t.hibernated = info.hibernated;
  t.destroy_loses = info.destroy_loses;
  t.workspace_dir = info.workspace_dir;
  return t;
}

Result<bool> adopt_reported_prices(Services& s, StateStore& store, ServerRecord& rec, const Instance& in)
{
  RentTerms t = rec.terms;
  if (in.price_per_hour.n > 0) {
    t.price_per_hour = in.price_per_hour;
  }
  const bool storage_stop = t.stopped.available && !t.stopped.bills_full_rate;
  if (in.storage_per_hour.n > 0 && storage_stop) {
    t.stopped.fixed_per_hour = in.storage_per_hour;
  }
  if (in.stopped_per_hour.n > 0 && storage_stop) {
    t.stopped.fixed_per_hour = in.stopped_per_hour;  // the provider prices the stopped state apart
  }
  if (t.price_per_hour == rec.terms.price_per_hour && t.stopped.fixed_per_hour == rec.terms.stopped.fixed_per_hour) {
    return false;
  }
  TRY(store.set_terms(rec.id, t));
  s.err << "gpurent: " << rec.provider << " reports " << per_hour(t.price_per_hour) << " for " << rec.name;
  if (storage_stop && in.stopped_per_hour.n > 0) {
    s.err << " (stopped, its volume disk bills " << per_hour(in.stopped_per_hour) << ")";
  } else if (storage_stop && in.storage_per_hour.n > 0) {
    s.err << " (" << per_hour(in.storage_per_hour) << " of it storage, which a stop keeps billing)";
  }
  s.err << "; the ledger uses that price\n";
  rec.terms = t;
  return true;
}

std::string iso_time(TimePoint t) { return utc_iso8601(t); }

std::optional<TimePoint> parse_time(std::string_view text)
{
  if (auto n = parse_u64(text)) {
    return from_unix(static_cast<std::int64_t>(*n));
  }
  std::tm tm{};
  const std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') {
    return std::nullopt;
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

MicroUsd billing_now(StateStore& store, const ServerRecord& rec)
{
  auto ev = store.events(rec.id);
  return ev ? rate_now(rec.terms, *ev) : rec.terms.price_per_hour;
}

std::string per_hour(MicroUsd m)
{
  // Whole cents as cents; anything finer (Vast's storage-included prices, storage rates) to a
  // hundredth of a cent, so that $0.354167/h does not read as $0.35/h.
  return format_usd(m, m.n % 10'000 == 0 ? 2 : 4) + "/h";
}

std::string money_text(MicroUsd m)
{
  return format_usd(m, m.n > 0 && m.n < 10'000 ? 6 : 2);
}

}  // namespace gpurent
