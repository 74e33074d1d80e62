// SPDX-License-Identifier: MIT
#pragma once
// Server groups (`up --nodes N --group NAME`, `attach --group NAME`): finding a group's members,
// and running a per-server command on each of them (`status`, `down`, `backup`, `autostop`,
// `push`, `logs` with a group NAME), with one result: under --json one document
// {"group", "members": [{"name", "node", "exit_code", "result"}]}, in text each member's output
// under its name.
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/job_ids.hpp"
#include "cli/services.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"

namespace gpurent {

struct ServerGroup {
  std::string name;
  std::vector<ServerRecord> members;  // open members, rank order
};

// The open members of group `name`, rank order (PURE over `servers`); nullopt when none.
[[nodiscard]] std::optional<ServerGroup> group_of(const std::vector<ServerRecord>& servers, std::string_view name);
// The group named `name` in the state database; nullopt when `name` is an open server (a server
// name wins), no group, or the database cannot be read (the per-server path then says why).
[[nodiscard]] std::optional<ServerGroup> find_group(Services& s, std::string_view name);
// PURE over the open servers: refused when an open server is named `group` (a group and a
// server never share a name).
[[nodiscard]] Result<void> check_group_name(const std::vector<ServerRecord>& servers, std::string_view group);
// PURE: the rank the next member of `group` gets: one past the highest open member's (0 for a new group).
[[nodiscard]] std::uint32_t next_group_rank(const std::vector<ServerRecord>& servers, std::string_view group);
// The `group` and `node` keys of a server's JSON view (null outside a group).
void add_group_keys(nlohmann::json& view, const ServerRecord& r);

// A Services like `s` whose stdout is `out` (not a TTY) and whose signals are `s`'s.
[[nodiscard]] Services member_services(Services& s, std::ostream& out);

// Runs `one` for every member in rank order (or only `only`, a rank), each with its own stdout.
// Stops early after a signal. Exit code: 0 when every member's was 0, that code when all failed
// alike, else 4 (partial) with an error that names the members that failed.
using MemberCommand = std::function<int(Services& member_services, const ServerRecord& member)>;
[[nodiscard]] int for_each_member(Services& s, const ServerGroup& group, std::optional<std::uint32_t> only,
                                  const MemberCommand& one);

// What every node's job gets (PURE): GPURENT_NODE_RANK, GPURENT_NUM_NODES, GPURENT_NODE_IPS (one
// address per line, rank order), MASTER_ADDR, MASTER_PORT, and the names launchers read:
// NODE_RANK and NNODES (DeepSpeed, accelerate configs), PET_NODE_RANK, PET_NNODES,
// PET_MASTER_ADDR and PET_MASTER_PORT (torchrun's defaults for --node-rank, --nnodes,
// --master-addr and --master-port: a bare `torchrun --nproc-per-node 8 train.py` joins the group).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> node_environment(const std::vector<std::string>& node_addresses,
                                                                                std::uint32_t rank,
                                                                                const std::string& master_addr,
                                                                                std::uint16_t master_port);

// For a command whose options name the server in `o.*name`: when that is a group (and --host is
// not given), runs `run(member_services, options naming the member)` -> Result<int> on every
// member and sets s.exit_code (for_each_member). Returns whether it did.
template <class Options, class Run>
bool for_group_named(Services& s, const Options& o, std::string Options::*name, Run run)
{
  if (!o.ssh.host.empty()) {
    return false;
  }
  const auto group = find_group(s, o.*name);
  if (!group) {
    return false;
  }
  s.exit_code = for_each_member(s, *group, std::nullopt, [&](Services& ms, const ServerRecord& m) {
    Options one = o;
    one.*name = m.name;
    auto r = run(ms, one);
    return r ? *r : report_error(ms, r.error());
  });
  return true;
}

// JOB as given to `logs GROUP JOB` / `jobs GROUP --kill JOB`, for member `m`: the member's own job
// of that group job (JOB-r<rank>) when gpurent recorded one, else JOB as it is. With JOB empty: the
// member's job of the latest group job any member recorded, else empty (the member's latest job).
[[nodiscard]] std::string member_job_ref(Services& s, const ServerGroup& group, const ServerRecord& m,
                                         std::string_view job);

// --node K: the member with rank K, or a usage error naming the ranks there are.
[[nodiscard]] Result<const ServerRecord*> member_at(const ServerGroup& group, std::uint32_t rank);

}  // namespace gpurent
