// SPDX-License-Identifier: MIT
// `gpurent run GROUP -- CMD` (cli/run_group.hpp): every node is connected and pushed to before any
// job starts; the jobs share one group id, each node's job being <id>-r<rank> (group_support.hpp); their logs are polled, prefixed with the member's name; the
// first node whose job fails (or is lost, or stays unreachable) stops the others.
#include "cli/run_group.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/interrupt.hpp"
#include "cli/job_support.hpp"
#include "cli/push_support.hpp"
#include "cli/services.hpp"
#include "sync/job_agent.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {


struct Node {
  const ServerRecord* member = nullptr;
  JobServer server;
  std::unique_ptr<SshSession> session;
  JobRecord job;
  std::uint64_t offset = 0;  // log bytes shown so far
  std::string partial;       // the start of a line not yet ended
  std::optional<JobState> state;
  std::optional<int> exit_code;
  std::optional<std::chrono::steady_clock::time_point> unreachable_since;
  std::string why;           // why it ended (failed, lost, unreachable)
  nlohmann::json push = nullptr;
};

std::string node_label(const Node& n)
{
  return "node " + std::to_string(n.member->group_rank) + " (" + n.member->name + ")";
}

// Prints the log bytes with the member's prefix, one whole line at a time.
void show_output(Node& n, std::string_view bytes, std::ostream& out)
{
  n.partial.append(bytes);
  std::size_t start = 0;
  for (std::size_t nl = n.partial.find('\n'); nl != std::string::npos; nl = n.partial.find('\n', start)) {
    out << "[" << n.member->name << "] " << std::string_view(n.partial).substr(start, nl - start + 1);
    start = nl + 1;
  }
  n.partial.erase(0, start);
  out.flush();
}

void flush_output(Node& n, std::ostream& out)
{
  if (!n.partial.empty()) {
    out << "[" << n.member->name << "] " << n.partial << "\n";
    n.partial.clear();
  }
}

// One look at a node: its new log bytes, then its job's state. A connection problem leaves the
// state as it was and is retried at the next look (reconnecting).
void poll_node(Services& s, Node& n, std::ostream& out)
{
  if (!n.session) {
    auto fresh = connect_job_server(s, n.server);
    if (!fresh) {
      return;
    }
    n.session = std::move(*fresh);
  }
  auto log = n.session->exec(job_log_from_command(n.job.job_id, n.offset), {});
  if (!log) {
    n.session.reset();
    return;
  }
  auto listed = list_server_jobs(*n.session, n.job.job_id);
  if (!listed) {
    n.session.reset();
    return;
  }
  n.unreachable_since.reset();
  const std::uint64_t size = parse_log_size(log->err).value_or(0);
  if (size >= n.offset) {
    show_output(n, log->out, out);
    n.offset = size;
  }
  if (listed->empty()) {
    n.state = JobState::lost;
    n.why = "its job directory is gone from the server";
    return;
  }
  n.state = job_state(listed->front());
  n.exit_code = listed->front().exit_code;
  if (n.state == JobState::failed) {
    n.why = "its job failed (exit " + std::to_string(n.exit_code.value_or(-1)) + ")";
  } else if (n.state == JobState::lost) {
    n.why = "its job was lost (the runner is gone without an exit status: a reboot, or it was killed)";
  }
}

// A whole number from the environment, or `fallback` when unset or not a number.
long long env_number(const Services& s, const std::string& key, long long fallback)
{
  const std::string text = s.getenv(key).value_or("");
  long long n = fallback;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  return ec == std::errc{} && end == text.data() + text.size() ? n : fallback;
}

// GPURENT_LOG_POLL_MS: how often every node is read (default 1000 ms, at least 50).
std::chrono::milliseconds log_poll_interval(const Services& s)
{
  return std::chrono::milliseconds(std::max(env_number(s, "GPURENT_LOG_POLL_MS", 1000), 50LL));
}

// GPURENT_NODE_UNREACHABLE_S: how long a node may stay unreachable over SSH while the others run
// before the group gives it up (default 120 s, at least 1).
std::chrono::seconds unreachable_limit(const Services& s)
{
  return std::chrono::seconds(std::max(env_number(s, "GPURENT_NODE_UNREACHABLE_S", 120), 1LL));
}

bool running(const Node& n) { return !n.state || *n.state == JobState::running; }

// Connects to every member and pushes the tree to each; nothing starts unless all of it worked.
Result<std::vector<Node>> reach_nodes(Services& s, const ServerGroup& group, const RunSettings& r,
                                      const PushSettings& push)
{
  std::optional<LocalTree> tree;
  if (!r.no_push) {
    TRY_ASSIGN(tree, walk_for_push(s, push));  // likely secrets are refused before connecting
  }
  std::vector<Node> nodes(group.members.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    n.member = &group.members[i];
    auto server = open_job_server(s, n.member->name, r.ssh);
    auto session = server ? connect_job_server(s, *server) : Result<std::unique_ptr<SshSession>>(std::unexpected(server.error()));
    if (!session) {
      Error e = session.error();
      e.message = "not starting on group " + group.name + ": " + node_label(n) + " cannot be reached: " + e.message;
      return std::unexpected(e);
    }
    n.server = std::move(*server);
    n.session = std::move(*session);
  }
  if (tree) {
    for (auto& n : nodes) {
      TRY_ASSIGN(const PushReport report, push_to_server(s, n.server, *n.session, push, *tree));
      n.push = push_report_json(report);
      s.err << "gpurent: " << n.member->name << ": pushed " << report.files_sent << " of " << report.files_total
            << " file(s) to " << report.remote_dir << (report.verified ? " (verified)" : "") << "\n";
      if (!report.failed.empty()) {
        return fail(Errc::partial, "not starting on group " + group.name + ": " + std::to_string(report.failed.size()) +
                                       " file(s) were not pushed intact to " + node_label(n) + "; run again");
      }
      if (n.server.dest.server_id != 0 && report.files_sent > 0) {
        if (auto store = s.state()) {
          (void)(*store)->mark_changed(n.server.dest.server_id, s.clock.now());
        }
      }
    }
  }
  return nodes;
}

// Starts the job on every node, in rank order; a node that does not start stops those started.
Result<void> start_nodes(Services& s, StateStore& store, std::vector<Node>& nodes, const RunSettings& r,
                         const std::string& remote_dir, const std::string& master_addr)
{
  TRY_ASSIGN(const auto user_env, parse_env(r.env));
  std::vector<std::string> addresses;
  for (const auto& n : nodes) {
    addresses.push_back(n.member->host);
  }
  const std::string group_id = new_job_id(s);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Node& n = nodes[i];
    auto env = node_environment(addresses, n.member->group_rank, master_addr, r.master_port);
    env.insert(env.end(), user_env.begin(), user_env.end());  // --env comes last: the user's word wins
    // Each node's job directory is its own, also where the nodes share a home (NFS).
    const std::string id = node_job_id(group_id, n.member->group_rank);
    n.job.job_id = id;
    n.job.server_id = n.server.dest.server_id != 0 ? std::optional<std::int64_t>(n.server.dest.server_id) : std::nullopt;
    n.job.target = n.server.target;
    n.job.command = command_line_text(r.command);
    n.job.workdir = remote_dir;
    n.job.started = s.clock.now();
    n.job.log = job_log_path(id);
    TRY_ASSIGN(n.job, store.add_job(n.job));  // recorded before it is started
    TRY_ASSIGN(const JobStartScript start, job_start_command(JobLaunch{id, remote_dir, n.job.command, env}));
    auto started = n.session->exec(start.command, start.input);  // the environment on stdin, out of `ps`
    auto parsed = started ? parse_job_start(started->out) : Result<JobStart>(std::unexpected(started.error()));
    if (!parsed) {
      n.job.state = "failed";
      n.job.ended = s.clock.now();
      (void)store.update_job(n.job);
      for (std::size_t k = 0; k < i; ++k) {
        (void)stop_job(s, nodes[k].server, *nodes[k].session, nodes[k].job.job_id, r.grace);
      }
      return fail(parsed.error().code, "the job did not start on " + node_label(n) + ": " + parsed.error().message +
                                           (i > 0 ? "; the nodes before it were stopped" : ""));
    }
    n.job.state = "running";
    TRY(store.update_job(n.job));
  }
  return {};
}

// Brings the local records in line with each node (states, exit codes, OOM reports) and returns
// each node's record.
std::vector<JobRecord> settle_nodes(Services& s, std::vector<Node>& nodes)
{
  std::vector<JobRecord> out;
  for (auto& n : nodes) {
    JobRecord rec = n.job;
    if (!n.session) {
      if (auto fresh = connect_job_server(s, n.server)) {
        n.session = std::move(*fresh);
      }
    }
    if (n.session) {
      auto listed = list_server_jobs(*n.session);
      auto settled = listed ? settle_jobs(s, n.server, *n.session, *listed) : Result<SettledJobs>(std::unexpected(listed.error()));
      if (settled) {
        for (const auto& j : settled->jobs) {
          if (j.job_id == n.job.job_id) {
            rec = j;
          }
        }
      }
    }
    out.push_back(rec);
  }
  return out;
}

// The out-of-memory diagnosis of a failed node's log, on stderr (as `run` does for one server).
void explain_failure(Services& s, Node& n)
{
  if (!n.session || n.state != JobState::failed || s.global.json) {
    return;
  }
  auto tail = n.session->exec(job_log_tail_command(n.job.job_id, k_oom_log_tail), {});
  const auto text = tail ? oom_diagnosis(s, tail->out, n.member->card, false) : std::nullopt;
  if (text) {
    s.err << "\ngpurent: " << node_label(n) << " ran out of GPU memory (exit " << n.exit_code.value_or(-1)
          << "). `gpurent oom`'s diagnosis for the " << n.member->card << ":\n\n" << *text << "\n";
  }
}

Result<int> run_group(Services& s, const ServerGroup& group, const RunSettings& r)
{
  if (r.command.empty()) {
    return fail(Errc::usage, "run: give the command after --, e.g. `gpurent run " + group.name +
                                 " -- torchrun --nproc-per-node 8 train.py`");
  }
  TRY(parse_env(r.env));
  const std::string remote_dir = r.to.empty() ? default_push_dir(r.workdir) : r.to;
  TRY_ASSIGN(StateStore * store, s.state());
  for (const auto& m : group.members) {
    if (m.host.empty()) {
      return fail(Errc::refused, "group " + group.name + ": " + m.name + " has no address yet (" +
                                     std::string(to_string(m.status)) + "); see `gpurent status " + group.name + "`");
    }
  }
  PushSettings push{r.workdir, remote_dir, r.excludes, r.with_git, r.allow_secrets};
  push.delete_extra = r.delete_extra;
  TRY_ASSIGN(std::vector<Node> nodes, reach_nodes(s, group, r, push));
  const std::string master_addr = r.master_addr.empty() ? group.members.front().host : r.master_addr;
  TRY(start_nodes(s, *store, nodes, r, remote_dir, master_addr));
  const std::string id = group_job_id(nodes.front().job.job_id);  // the group's: each node's is <id>-r<rank>
  s.err << "gpurent: job " << id << " started on the " << nodes.size() << " node(s) of " << group.name << " in "
        << remote_dir << " (MASTER_ADDR=" << master_addr << " MASTER_PORT=" << r.master_port << ")\n";
  const auto show_json = [&](const std::vector<JobRecord>& records, const Node* failed) {
    nlohmann::json list = nlohmann::json::array();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      list.push_back({{"name", nodes[i].member->name},
                      {"node", nodes[i].member->group_rank},
                      {"job", job_json(records[i], recorded_job_number(s, records[i].target, records[i].job_id))},
                      {"push", nodes[i].push}});
    }
    nlohmann::json doc{{"group", group.name}, {"job_id", id},         {"master_addr", master_addr},
                       {"master_port", r.master_port}, {"nodes", list}};
    doc["failed_node"] = failed ? nlohmann::json(failed->member->group_rank) : nlohmann::json(nullptr);
    if (failed) {
      doc["error"] = {{"code", "failed"}, {"message", node_label(*failed) + ": " + failed->why}};
    }
    s.out << doc.dump() << '\n';
  };
  std::vector<JobRecord> started;
  for (const auto& n : nodes) {
    started.push_back(n.job);
  }
  if (r.detach) {
    s.err << "gpurent: follow it with `gpurent logs " << group.name << " " << id << " --node K -f`\n";
    if (s.global.json) {
      show_json(started, nullptr);
    } else {
      s.out << id << '\n';
    }
    return 0;
  }

  InterruptWatch watch(s);
  watch.set_last_words("gpurent: job " + id + " keeps running on every node of " + group.name + "; stop it with `gpurent jobs " +
                       group.name + " --kill " + id + "`\n");
  s.err << "gpurent: following every node's output; Ctrl-C detaches (the jobs keep running)\n";
  std::ostream& out = s.global.json ? s.err : s.out;
  const auto poll_ms = log_poll_interval(s);
  const auto give_up_after = unreachable_limit(s);
  Node* failed = nullptr;
  while (true) {
    for (auto& n : nodes) {
      if (running(n)) {
        poll_node(s, n, out);
        if (!n.session && !n.unreachable_since) {
          n.unreachable_since = std::chrono::steady_clock::now();
        }
        if (n.unreachable_since && std::chrono::steady_clock::now() - *n.unreachable_since > give_up_after) {
          n.state = JobState::lost;
          n.why = "unreachable over SSH for " + std::to_string(give_up_after.count()) + " s (the server is down, or "
                  "its network)";
        }
      }
      if (!failed && n.state && (*n.state == JobState::failed || *n.state == JobState::lost)) {
        failed = &n;
      }
    }
    if (failed || std::none_of(nodes.begin(), nodes.end(), running)) {
      break;
    }
    if (s.signal_caught() != 0) {
      for (auto& n : nodes) {
        flush_output(n, out);
      }
      s.err << "\ngpurent: detached; job " << id << " keeps running on the " << nodes.size() << " node(s) of " << group.name
            << ". Follow one with `gpurent logs " << group.name << " " << id << " --node K -f`\n";
      if (s.global.json) {
        show_json(started, nullptr);
      }
      return 0;
    }
    s.clock.sleep_for(poll_ms);
  }
  if (failed) {
    s.err << "gpurent: " << node_label(*failed) << ": " << failed->why << "; stopping the group\n";
    for (auto& n : nodes) {
      if (&n == failed || !running(n)) {
        continue;
      }
      if (n.session) {
        (void)stop_job(s, n.server, *n.session, n.job.job_id, r.grace);
      } else {
        s.err << "gpurent: " << node_label(n) << " cannot be reached to stop its job, which may still run: `gpurent jobs "
              << n.member->name << " --kill " << n.job.job_id << "` once it answers\n";
      }
    }
  }
  for (auto& n : nodes) {  // what the logs said last
    if (n.session) {
      poll_node(s, n, out);
    }
    flush_output(n, out);
  }
  if (failed) {
    explain_failure(s, *failed);
  }
  const auto records = settle_nodes(s, nodes);
  if (s.global.json) {
    show_json(records, failed);
  } else {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      s.err << "gpurent: " << node_label(nodes[i]) << ": job " << nodes[i].job.job_id << " " << records[i].state
            << (records[i].exit_code ? " (exit " + std::to_string(*records[i].exit_code) + ")" : std::string()) << "\n";
    }
  }
  if (failed) {
    if (!s.global.json) {
      s.err << "gpurent: error: group " << group.name << " stopped: " << node_label(*failed) << ": " << failed->why << "\n";
    }
    return 1;
  }
  return 0;
}

}  // namespace

int run_group_job(Services& s, const ServerGroup& group, const RunSettings& r)
{
  auto code = run_group(s, group, r);
  return code ? *code : report_error(s, code.error());
}

}  // namespace gpurent
