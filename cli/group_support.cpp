// SPDX-License-Identifier: MIT
// Server groups: members, names, ranks, and one command run on every member (cli/group_support.hpp).
#include "cli/group_support.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/errors.hpp"
#include "cli/services.hpp"
#include "sync/transport.hpp"

namespace gpurent {

std::optional<ServerGroup> group_of(const std::vector<ServerRecord>& servers, std::string_view name)
{
  ServerGroup g{std::string(name), {}};
  for (const auto& r : servers) {
    if (!name.empty() && r.group == name && !is_closed(r.status)) {
      g.members.push_back(r);
    }
  }
  if (g.members.empty()) {
    return std::nullopt;
  }
  std::stable_sort(g.members.begin(), g.members.end(),
                   [](const ServerRecord& a, const ServerRecord& b) { return a.group_rank < b.group_rank; });
  return g;
}

std::optional<ServerGroup> find_group(Services& s, std::string_view name)
{
  if (name.empty() || !s.state) {
    return std::nullopt;
  }
  auto store = s.state();
  if (!store) {
    return std::nullopt;
  }
  auto servers = (*store)->list_servers(false);
  if (!servers) {
    return std::nullopt;
  }
  for (const auto& r : *servers) {
    if (r.name == name) {
      return std::nullopt;
    }
  }
  return group_of(*servers, name);
}

Result<void> check_group_name(const std::vector<ServerRecord>& servers, std::string_view group)
{
  for (const auto& r : servers) {
    if (r.name == group && !is_closed(r.status)) {
      return fail(Errc::refused, "a server named '" + std::string(group) +
                                     "' is already tracked: a group cannot have its name; pick another --group");
    }
  }
  return {};
}

namespace {

// The jobs gpurent recorded for member `m` (its own server record: members that share an address
// keep their jobs apart).
std::vector<JobRecord> member_jobs(Services& s, const ServerRecord& m)
{
  auto store = s.state ? s.state() : Result<StateStore*>(std::unexpected(Error{Errc::internal, ""}));
  if (!store) {
    return {};
  }
  auto jobs = (*store)->jobs(to_string(SshTarget{m.user.empty() ? "root" : m.user, m.host, m.port}));
  if (!jobs) {
    return {};
  }
  std::erase_if(*jobs, [&](const JobRecord& j) { return j.server_id && *j.server_id != m.id; });
  return std::move(*jobs);
}

bool recorded(const std::vector<JobRecord>& jobs, const std::string& id)
{
  return std::any_of(jobs.begin(), jobs.end(), [&](const JobRecord& j) { return j.job_id == id; });
}

}  // namespace

std::string member_job_ref(Services& s, const ServerGroup& group, const ServerRecord& m, std::string_view job)
{
  const auto mine = member_jobs(s, m);
  if (!job.empty()) {
    const std::string own = node_job_id(job, m.group_rank);
    return recorded(mine, own) ? own : std::string(job);
  }
  // The latest group job: a job some member recorded as its own part of one.
  std::optional<JobRecord> latest;
  for (const auto& member : group.members) {
    for (const auto& j : member_jobs(s, member)) {
      const std::string base = group_job_id(j.job_id);
      if (base != j.job_id && j.job_id == node_job_id(base, member.group_rank) && (!latest || j.started > latest->started)) {
        latest = j;
      }
    }
  }
  if (!latest) {
    return "";
  }
  const std::string own = node_job_id(group_job_id(latest->job_id), m.group_rank);
  return recorded(mine, own) ? own : "";
}

std::uint32_t next_group_rank(const std::vector<ServerRecord>& servers, std::string_view group)
{
  std::optional<std::uint32_t> top;
  for (const auto& r : servers) {
    if (r.group == group && !is_closed(r.status)) {
      top = std::max(top.value_or(0), r.group_rank);
    }
  }
  return top ? *top + 1 : 0;
}

std::vector<std::pair<std::string, std::string>> node_environment(const std::vector<std::string>& node_addresses,
                                                                 std::uint32_t rank, const std::string& master_addr,
                                                                 std::uint16_t master_port)
{
  std::string ips;
  for (const auto& a : node_addresses) {
    ips += (ips.empty() ? "" : "\n") + a;
  }
  const std::string r = std::to_string(rank);
  const std::string n = std::to_string(node_addresses.size());
  const std::string port = std::to_string(master_port);
  return {{"GPURENT_NODE_RANK", r}, {"GPURENT_NUM_NODES", n},    {"GPURENT_NODE_IPS", ips},
          {"MASTER_ADDR", master_addr}, {"MASTER_PORT", port},   {"NODE_RANK", r},
          {"NNODES", n},                {"PET_NODE_RANK", r},    {"PET_NNODES", n},
          {"PET_MASTER_ADDR", master_addr}, {"PET_MASTER_PORT", port}};
}

void add_group_keys(nlohmann::json& view, const ServerRecord& r)
{
  view["group"] = r.group.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.group);
  view["node"] = r.group.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.group_rank);
}

Result<const ServerRecord*> member_at(const ServerGroup& group, std::uint32_t rank)
{
  std::string ranks;
  for (const auto& m : group.members) {
    if (m.group_rank == rank) {
      return &m;
    }
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(m.group_rank);
  }
  return fail(Errc::usage, "--node " + std::to_string(rank) + ": group " + group.name + " has no node " +
                               std::to_string(rank) + " (its nodes: " + ranks + ")");
}

Services member_services(Services& s, std::ostream& out)
{
  Services c(out, s.err, s.in, s.env, s.clock);
  c.stderr_tty = s.stderr_tty;
  c.stdin_tty = s.stdin_tty;
  c.global = s.global;
  c.command = s.command;
  c.http = s.http;
  c.state = s.state;
  c.ssh_connect = s.ssh_connect;
  c.handle_signals = false;
  c.caught_signal = [&s] { return s.signal_caught(); };
  return c;
}

int for_each_member(Services& s, const ServerGroup& group, std::optional<std::uint32_t> only, const MemberCommand& one)
{
  nlohmann::json members = nlohmann::json::array();
  std::vector<std::string> failed;
  std::vector<int> codes;
  std::vector<std::string> not_reached;
  const std::size_t n = group.members.size();
  for (const auto& m : group.members) {
    if (only && m.group_rank != *only) {
      continue;
    }
    if (s.signal_caught() != 0) {
      not_reached.push_back(m.name);
      continue;
    }
    std::ostringstream out;
    int code = 0;
    {
      Services c = member_services(s, out);
      code = one(c, m);
      finish_json_output(c);
    }
    codes.push_back(code);
    if (code != 0) {
      failed.push_back(m.name + " (exit " + std::to_string(code) + ")");
    }
    const std::string text = out.str();
    if (s.global.json) {
      auto doc = nlohmann::json::parse(text, nullptr, false);
      members.push_back({{"name", m.name},
                         {"node", m.group_rank},
                         {"exit_code", code},
                         {"result", doc.is_discarded() ? nlohmann::json(text) : doc}});
    } else if (!text.empty() || n > 1) {
      s.out << "== " << m.name << " (node " << m.group_rank << " of group " << group.name << ") ==\n" << text;
      if (!text.empty() && text.back() != '\n') {
        s.out << '\n';
      }
    }
  }
  int code = 0;
  if (!codes.empty() && std::all_of(codes.begin(), codes.end(), [&](int c) { return c == codes.front(); })) {
    code = codes.front();
  } else if (!failed.empty()) {
    code = 4;
  }
  if (!not_reached.empty()) {
    code = 4;
    std::string names;
    for (const auto& nm : not_reached) {
      names += (names.empty() ? "" : ", ") + nm;
    }
    failed.push_back("not reached after the signal: " + names);
  }
  std::string why;
  for (const auto& f : failed) {
    why += (why.empty() ? "" : "; ") + f;
  }
  if (s.global.json) {
    nlohmann::json doc{{"group", group.name}, {"members", members}};
    if (code != 0) {
      doc["error"] = {{"code", code == 4 ? "partial" : "failed"},
                      {"message", "group " + group.name + ": " + why}};
    }
    s.out << doc.dump(2) << '\n';
  }
  if (code != 0) {
    s.err << "gpurent: error: group " << group.name << ": " << why << "\n";
  }
  return code;
}

}  // namespace gpurent
