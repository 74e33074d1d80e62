// SPDX-License-Identifier: MIT
// Destroy once, confirm with the provider; find a server by name after a lost create answer.
#include <string>

#include "providers/lifecycle.hpp"

namespace gpurent {
namespace {

bool gone(const std::optional<Instance>& in)
{
  return !in.has_value() || in->state == InstanceState::terminated;
}

std::string seconds_of(std::chrono::milliseconds d)
{
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

DestroyOutcome unconfirmed(DestroyOutcome out, Error e)
{
  out.confirmed = false;
  out.error = std::move(e);
  return out;
}

DestroyOutcome confirmed(DestroyOutcome out)
{
  out.confirmed = true;
  out.error = Error{};
  return out;
}

}  // namespace

DestroyOutcome destroy_confirmed(Provider& provider, Clock& clock, std::string_view id, const WaitOptions& options,
                                 const DestroyHooks& hooks)
{
  const std::string who = std::string(provider.name()) + ": server " + std::string(id);
  const auto deadline = clock.now() + options.timeout;
  DestroyOutcome out;
  bool already_gone = false;  // the provider answered "no such server": get() must agree
  std::string last = "no answer yet";
  do {
    if (stop_asked(options)) {
      return unconfirmed(out, interrupted_error(out.accepted ? who + ": the destroy was accepted but not yet confirmed gone"
                                                : out.requests > 0 ? who + ": the destroy request may not have got through"
                                                                   : who + ": no destroy request was sent"));
    }
    if (!out.accepted) {
      if (out.requests > 0 || hooks.look_first) {
        // The last request failed in transit: it may have been carried out. Look before sending
        // another, so that a server is never destroyed twice.
        auto look = provider.get(id);
        if (!look) {
          if (!is_transient(look.error())) {
            return unconfirmed(out, look.error());
          }
          last = look.error().message;
          continue;
        }
        if (gone(*look)) {
          return confirmed(out);
        }
        if ((*look)->state == InstanceState::terminating) {
          out.accepted = true;
          if (hooks.on_accepted) {
            hooks.on_accepted();
          }
        } else if (out.requests >= k_max_destroy_requests) {
          return unconfirmed(out, Error{Errc::unavailable, who + ": the destroy request failed " +
                                                               std::to_string(out.requests) + " times (last: " + last +
                                                               "); the provider still reports it " + (*look)->raw_state});
        }
      }
      if (!out.accepted) {
        auto sent = provider.terminate(id);
        ++out.requests;
        if (sent || sent.error().code == Errc::not_found) {
          out.accepted = true;
          already_gone = !sent;
          last = sent ? std::string("accepted") : sent.error().message;
          if (hooks.on_accepted) {
            hooks.on_accepted();
          }
        } else if (is_transient(sent.error())) {
          last = sent.error().message;
          continue;
        } else {
          // Refused (401, 403, 400 …): final, unless the provider no longer has it anyway.
          auto look = provider.get(id);
          if (look && gone(*look)) {
            return confirmed(out);
          }
          return unconfirmed(out, sent.error());
        }
      }
    }
    auto got = provider.get(id);
    if (!got) {
      if (!is_transient(got.error())) {
        return unconfirmed(out, got.error());
      }
      last = got.error().message;
      continue;
    }
    if (gone(*got)) {
      return confirmed(out);
    }
    if (already_gone && (*got)->state != InstanceState::terminating) {
      out.accepted = false;
      return unconfirmed(out, Error{Errc::unavailable, who + ": the provider answered the destroy with \"no such server\" (" +
                                                           last + ") but still reports it " + (*got)->raw_state +
                                                           "; check its console"});
    }
    last = (*got)->raw_state;
  } while (pause_until(clock, deadline, options.poll));
  const std::string why = out.accepted ? "the destroy was accepted, but it was not confirmed gone within " +
                                             seconds_of(options.timeout) + " (last: " + last + ")"
                                       : "the destroy request did not get through within " + seconds_of(options.timeout) +
                                             " (last: " + last + ")";
  return unconfirmed(out, Error{Errc::timeout, who + ": " + why});
}

Result<std::optional<Instance>> find_named(Provider& provider, Clock& clock, std::string_view name,
                                           const WaitOptions& options)
{
  const auto deadline = clock.now() + options.timeout;
  Error last{Errc::timeout, std::string(provider.name()) + ": could not list servers"};
  do {
    if (stop_asked(options)) {
      return std::unexpected(interrupted_error("looking for " + std::string(name) + " in " +
                                               std::string(provider.name()) + "'s list"));
    }
    auto all = provider.list();
    if (all) {
      for (const auto& in : *all) {
        if (in.name == name && in.state != InstanceState::terminated) {
          return std::optional<Instance>{in};
        }
      }
      return std::optional<Instance>{};
    }
    if (!is_transient(all.error())) {
      return std::unexpected(all.error());
    }
    last = all.error();
  } while (pause_until(clock, deadline, options.poll));
  return std::unexpected(last);
}

}  // namespace gpurent
