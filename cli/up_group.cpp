// SPDX-License-Identifier: MIT
// A group of servers rented as one, all or none (cli/up_group.hpp).
#include "cli/up_group.hpp"

#include <algorithm>
#include <string>

#include "cli/config.hpp"
#include "cli/group_support.hpp"
#include "cli/lifecycle_destroy.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"

namespace gpurent {
namespace {

std::string member_name(const std::string& group, std::uint32_t rank) { return group + "-" + std::to_string(rank); }

// `up`'s options for the member with rank `k`.
UpOptions member_options(const UpOptions& o, std::uint32_t k)
{
  UpOptions member = o;
  member.name = member_name(o.group, k);
  member.group_rank = k;
  return member;
}

// Destroys every open member of the group after `why`; the error names what each one billed.
Error destroy_group(Services& s, StateStore& store, const UpOptions& o, const Error& why)
{
  auto cfg = load_config(s);
  auto servers = store.list_servers(false);
  const auto group = servers ? group_of(*servers, o.group) : std::nullopt;
  if (!cfg || !group) {
    return why;  // nothing of the group is open (the failing member's own cleanup closed it)
  }
  std::string said;
  bool all_confirmed = true;
  for (const auto& m : group->members) {
    std::string outcome;
    if (m.provider_id.empty()) {
      // The create call's answer was lost: whether the provider has it is not known yet.
      all_confirmed = false;
      said += (said.empty() ? "" : "; ") + m.name + ": whether " + m.provider + " created it is not known (tracked as " +
              std::string(to_string(m.status)) + "; `gpurent status --refresh` settles it)";
      continue;
    }
    auto h = open_provider(s, *cfg, m.provider);
    if (!h) {
      all_confirmed = false;
      outcome = m.name + ": NOT destroyed (" + h.error().message + ")";
    } else {
      s.err << "gpurent: destroying " << m.name << " (" << m.provider_id << "): the group " << o.group
            << " is all or none\n";
      auto d = destroy_tracked(s, *h->provider, store, m, "group up failed: " + why.message, false);
      if (!d) {
        all_confirmed = false;
        outcome = m.name + ": destroy not recorded (" + d.error().message + ")";
      } else if (d->outcome.confirmed) {
        outcome = m.name + " destroyed, " + d->billed;
      } else {
        all_confirmed = false;
        outcome = m.name + ": destroy NOT confirmed (" + d->outcome.error.message + "), tracked as " +
                  std::string(to_string(d->status)) + " and may still bill";
      }
    }
    said += (said.empty() ? "" : "; ") + outcome;
  }
  if (all_confirmed) {
    return Error{why.code, why.message + "; group " + o.group + " is all or none, so what it had was destroyed (confirmed): " + said};
  }
  return Error{Errc::unavailable, why.message + "; destroying the rest of group " + o.group + " was not confirmed: " + said +
                                      "; retry with `gpurent down " + o.group + " --destroy --no-backup` or `gpurent status --refresh`"};
}

// A member failed after `rented` members were created. Interrupted: nothing more is destroyed
// (what bills is said); refused before anything was rented: just that; else the group goes.
Error group_failed(Services& s, StateStore& store, const UpOptions& o, const std::string& member, const Error& why,
                   std::uint32_t rented, bool confirmed)
{
  if (why.interrupted || s.signal_caught() != 0 || (why.code == Errc::refused && rented == 0 && !confirmed)) {
    Error e = why;
    if (rented > 0) {
      e.message += "; group " + o.group + " has " + std::to_string(rented) + " of its " + std::to_string(o.nodes) +
                   " servers; release them with `gpurent down " + o.group + " --destroy --no-backup`, or resume with " +
                   "the same `gpurent up --nodes " + std::to_string(o.nodes) + " --group " + o.group + "`";
    }
    return e;
  }
  return destroy_group(s, store, o, Error{why.code, member + ": " + why.message});
}

}  // namespace

Result<std::vector<ServerRecord>> rent_group(Services& s, const UpOptions& given, const RentMember& rent_one,
                                             const PlanNodes& plan_nodes)
{
  UpOptions o = given;
  if (o.nodes == 0 && !o.group.empty() && !o.from_plan.empty()) {
    TRY_ASSIGN(o.nodes, plan_nodes());  // plan said what it chose; the members need not say it again
    o.quiet_plan = true;
    s.err << "gpurent: group " << o.group << ": " << o.nodes << " server" << (o.nodes > 1 ? "s" : "") << ", as plan chose\n";
  }
  o.nodes = std::max<std::uint32_t>(o.nodes, 1);
  if (o.group.empty()) {
    return fail(Errc::usage, "--nodes " + std::to_string(o.nodes) + " needs --group NAME (the servers are NAME-0, NAME-1, …)");
  }
  if (!o.name.empty()) {
    return fail(Errc::usage, "--name and --group: a group's servers are named GROUP-0, GROUP-1, …; give only --group");
  }
  TRY_ASSIGN(StateStore * store, s.state());
  TRY_ASSIGN(const auto servers, store->list_servers(false));
  TRY(check_group_name(servers, o.group));
  if (const auto existing = group_of(servers, o.group)) {
    for (const auto& m : existing->members) {
      if (m.group_rank >= o.nodes || m.name != member_name(o.group, m.group_rank)) {
        return fail(Errc::refused, "group " + o.group + " already has " + m.name + " (node " + std::to_string(m.group_rank) +
                                       "), which `up --nodes " + std::to_string(o.nodes) + "` would not rent; "
                                       "pick another --group, or see `gpurent status " + o.group + "`");
      }
    }
  }
  // First every member is created (so the provider starts them all at once), then each is
  // brought up in turn; a failure in either pass destroys the whole group.
  bool confirmed = false;  // by a member this run rented (a resumed one was confirmed before)
  for (std::uint32_t k = 0; k < o.nodes; ++k) {
    UpOptions member = member_options(o, k);
    member.confirmed = confirmed;
    member.create_only = true;
    member.quiet_plan = o.quiet_plan || k > 0;
    TRY_ASSIGN(const auto before, store->find_server(member.name));
    const bool existed = before && !is_closed(before->status);
    auto rec = rent_one(member);
    if (!rec) {
      return std::unexpected(group_failed(s, *store, o, member.name, rec.error(), k, confirmed));
    }
    confirmed = confirmed || !existed;
  }
  std::vector<ServerRecord> out;
  for (std::uint32_t k = 0; k < o.nodes; ++k) {
    UpOptions member = member_options(o, k);
    member.confirmed = true;
    member.second_pass = true;
    member.quiet_plan = true;
    auto rec = rent_one(member);
    if (!rec) {
      return std::unexpected(group_failed(s, *store, o, member.name, rec.error(), o.nodes, true));
    }
    out.push_back(*rec);
  }
  return out;
}

}  // namespace gpurent
