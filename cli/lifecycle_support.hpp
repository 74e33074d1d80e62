// SPDX-License-Identifier: MIT
#pragma once
// What up, attach, status and down share: opening a provider driver with its key and URL,
// confirmations (--yes / TTY / refuse), crash points for tests, wait settings, time text.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config.hpp"
#include "common/result.hpp"
#include "providers/catalog.hpp"
#include "providers/http/retrying_http_client.hpp"
#include "providers/lifecycle.hpp"
#include "providers/provider.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;

struct ProviderHandle {
  std::unique_ptr<RetryingHttpClient> http;
  std::unique_ptr<Provider> provider;
};

// The driver for `name` with its key (env or config) and base URL (GPURENT_<P>_API_URL or
// config). Errc::refused for a provider without an API; Errc::unauthorized without a key.
[[nodiscard]] Result<ProviderHandle> open_provider(Services& s, const Config& cfg, std::string_view name);
// Whether a key is configured for the driver (status --refresh skips the others).
[[nodiscard]] bool has_api_key(const Config& cfg, std::string_view name);

// `offers --refresh`: fetches the offers of every API provider with a key (or only `only`) into
// the offer cache; returns what was fetched. Providers that fail are reported in `errors`.
[[nodiscard]] Result<std::vector<Offer>> refresh_all_offers(Services& s, const Config& cfg, std::string_view only,
                                                            std::vector<std::string>& errors);
// The fresh cached offers (max age from config offers_max_age_hours); empty when none.
[[nodiscard]] Result<std::vector<Offer>> cached_offers(const Services& s, const Config& cfg);

// --yes: true. A TTY: asks on stderr, reads a line, true on y/yes. No TTY: Errc::refused (exit 3).
[[nodiscard]] Result<void> confirm(Services& s, std::string_view question);

// Test hook: GPURENT_TEST_CRASH_AT=<point> ends the process at once with _exit(137) at that
// point ("recorded", "created", "destroy-recorded", "destroy-called"), like a kill -9.
// Documented in docs/lifecycle.md.
void crash_point(Services& s, std::string_view point);

// GPURENT_WAIT_TIMEOUT_S (default 600) and GPURENT_POLL_MS (default 5000).
[[nodiscard]] WaitOptions wait_options(const Services& s);

// The rent terms of a provider for a price (spot billing when spot).
[[nodiscard]] RentTerms terms_for(const ProviderInfo& info, MicroUsd price, bool spot);

// What the provider reports for the server itself replaces the rent-time terms: its price per
// hour (Vast's dph_total, storage included; RunPod's costPerHr) and its storage per hour, which is
// the stopped rate where a stop keeps billing storage (Vast). Stored, and said on stderr; returns
// whether anything changed.
[[nodiscard]] Result<bool> adopt_reported_prices(Services& s, StateStore& store, ServerRecord& rec, const Instance& in);

// 2026-11-30T10:00:00Z
[[nodiscard]] std::string iso_time(TimePoint t);
// "2026-11-30T10:00:00Z" or Unix seconds.
[[nodiscard]] std::optional<TimePoint> parse_time(std::string_view text);
// "$1.23/h"; "$0.3542/h" when the rate is not whole cents.
[[nodiscard]] std::string per_hour(MicroUsd m);
// What `rec` bills per hour now, from its ledger (its price when the ledger cannot be read).
[[nodiscard]] MicroUsd billing_now(StateStore& store, const ServerRecord& rec);
// "$1.23"; "$0.000197" for an amount under a cent (a server that lived seconds), so it is not $0.00.
[[nodiscard]] std::string money_text(MicroUsd m);

}  // namespace gpurent
