// SPDX-License-Identifier: MIT
// The imperative shell of a push: walk, list, plan (pure), send over one or more connections
// (the sends: push_send.cpp), retry, verify, finish the large files, report.
#include "sync/push.hpp"

#include <algorithm>
#include <set>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "sync/backup_agent.hpp"
#include "sync/push_agent.hpp"
#include "sync/push_delete.hpp"
#include "sync/push_record.hpp"
#include "sync/push_detail.hpp"
#include "sync/push_sources.hpp"
#include "sync/range_plan.hpp"
#include "sync/backup.hpp"

namespace gpurent {
namespace push_detail {
namespace {

constexpr int k_rounds = 3;
// The round trip from which a first push opens its other connections beside the listing; and
// what a remote shell's start is taken to cost before the listing has measured it.
constexpr std::chrono::milliseconds k_early_round_trip{20};
constexpr std::chrono::duration<double> k_shell_start{0.1};
// One byte range per connection: each range is an exec with its shell and two or three round
// trips of its own (256 MiB at 50 ms over 4 connections: 4.2 s in 8 ranges, 3.7 s in 4).
constexpr std::size_t k_pieces_per_connection = 1;

}  // namespace

// The ranges a killed push left verified on the server: its range ledger's lines whose SHA-256
// equals that of the same bytes of the local file now (so a ledger of another version of the
// file, or a line a kill cut short, is never trusted), not overlapping.
std::map<std::size_t, std::vector<Span>> Pusher::resumable_ranges(const std::vector<RemoteEntry>& remote)
{
  std::set<std::string> names;
  for (const auto& e : remote) {
    names.insert(e.path);
  }
  std::vector<std::string> rels;
  std::map<std::string, std::size_t> by_rel;
  for (const auto i : m_big) {
    if (names.contains(m_local[i].path + std::string(k_partial_suffix) + std::string(k_range_ledger_suffix))) {
      rels.push_back(m_local[i].path);
      by_rel[m_local[i].path] = i;
    }
  }
  std::map<std::size_t, std::vector<Span>> out;
  if (rels.empty()) {
    return out;
  }
  auto r = m_main.exec(push_ledger_command(m_req.remote_dir, rels));
  auto ledgers = r ? parse_push_ledgers(r->out) : Result<std::map<std::string, std::vector<PushLedgerRange>>>(std::unexpected(r.error()));
  if (!ledgers) {
    return out;  // the ranges are all sent again
  }
  for (auto& [rel, lines] : *ledgers) {
    const auto it = by_rel.find(rel);
    if (it == by_rel.end()) {
      continue;
    }
    const LocalEntry& e = m_local[it->second];
    std::sort(lines.begin(), lines.end());
    std::uint64_t end = 0;
    for (const auto& l : lines) {
      if (l.offset < end || l.offset > e.size || l.length > e.size - l.offset || l.length == 0) {
        continue;
      }
      const auto mine = hash_local_range(m_req.local_root / e.path, l.offset, l.length);
      if (mine && *mine == l.sha256) {
        out[it->second].push_back(Span{l.offset, l.length});
        end = l.offset + l.length;
        ++m_report.ranges_resumed;
        m_bytes_done += l.length;
      }
    }
  }
  return out;
}

Result<void> Pusher::delete_extra(const std::vector<std::string>& doomed)
{
  TRY_ASSIGN(const std::string input, push_delete_input(doomed));
  TRY_ASSIGN(const auto r, m_main.exec(push_delete_command(m_req.remote_dir), input));
  TRY_ASSIGN(const int status, parse_push_delete(r.out));
  if (status != 0) {
    // rm -rf fails only on what it may not remove: counted as a failure (exit 4), nothing else.
    m_report.failed.push_back(PushFailure{"--delete", "rm on the server exited " + std::to_string(status) +
                                                          "; some paths may be left: run `gpurent push --delete` again to see them"});
    return {};
  }
  m_report.deleted = doomed;
  return {};
}

Result<void> Pusher::take_walk()
{
  if (m_req.walked) {
    TRY_ASSIGN(m_report.tree, m_req.walked());
  } else {
    TRY_ASSIGN(m_report.tree, walk_local_tree(m_req.local_root, m_req.walk));
  }
  if (!m_report.tree.secrets.empty()) {
    return fail(Errc::refused, "push: " + m_report.tree.secrets.front().path + " (" + m_report.tree.secrets.front().why +
                                   ") and " + std::to_string(m_report.tree.secrets.size() - 1) +
                                   " other file(s) look like credentials; nothing was sent; allow them with --allow-secret PATH");
  }
  return {};
}

void Pusher::open_early_connections(const LinkTimes& link)
{
  std::uint64_t bytes = 0;
  for (const auto& e : m_report.tree.entries) {
    bytes += e.kind == EntryKind::file ? e.size : 0;
  }
  std::size_t n = m_req.streams;
  if (n == 0) {
    // What the plan will take once the listing says what is missing (below): for a first push,
    // about everything. The listing's own time is not known yet: two round trips and the shell.
    const std::chrono::duration<double> rtt = *link.round_trip;
    n = choose_push_sessions(bytes, rtt, std::chrono::duration<double>(link.connect) + 4 * rtt + k_shell_start, m_req.max_sessions);
  }
  m_early_started = std::chrono::steady_clock::now();
  for (std::size_t i = 1; i < n; ++i) {
    m_early.push_back(std::async(std::launch::async, [this] { return m_more(); }));
  }
}

Result<PushReport> Pusher::run()
{
  const auto t0 = std::chrono::steady_clock::now();
  m_report.remote_dir = m_req.remote_dir;
  // The listing is asked for and read, through the channel that then carries the first stream,
  // while the caller's thread walks the local tree (m_req.walked); the agent creates the remote
  // directory only once it is sent something, so a refused push leaves nothing on the server,
  // and a refusal is the error even where the listing failed too.
  auto started = std::chrono::steady_clock::now();
  AgentListingReader listing;
  auto agent = m_main.open_exec(push_agent_command(m_req.remote_dir, true));
  std::chrono::duration<double> listing_time = std::chrono::steady_clock::now() - started;
  const LinkTimes link0 = m_main.link_times();  // the channel's opening measured the round trip
  bool walked = false;
  if (agent && m_more && !m_req.pushed_before && m_req.streams != 1 && (m_req.streams > 1 || m_req.max_sessions > 1) &&
      link0.round_trip && *link0.round_trip >= k_early_round_trip) {
    // At this distance the walk is done or nearly so by now.
    TRY(take_walk());
    walked = true;
    open_early_connections(link0);
  }
  started = std::chrono::steady_clock::now();
  Result<void> listed = agent ? (*agent)->read_until([&](const char* p, std::size_t n) { return listing.feed(std::string_view(p, n)); },
                                                     [&] { return listing.done(); })
                              : Result<void>(std::unexpected(agent.error()));
  listing_time += std::chrono::steady_clock::now() - started;
  if (!walked) {
    TRY(take_walk());
  }
  TRY(listed);
  m_local = m_report.tree.entries;
  for (const auto& w : m_report.tree.warnings) {
    m_obs.on_warning(w);
  }
  auto remote = listing.result();
  if (!remote) {
    return fail(remote.error().code, "push to " + m_req.remote_dir + ": " + remote.error().message +
                                         (remote.error().code == Errc::unsupported ? "; the server needs GNU tar and mktemp" : ""));
  }
  std::vector<std::string> doomed;
  if (m_req.delete_extra) {
    auto planned = plan_push_deletions(m_local, m_report.tree.skipped, *remote, m_req.pushed_before);
    doomed = std::move(planned.doomed);
    m_report.never_pushed = std::move(planned.never_pushed);
    m_report.delete_without_record = !planned.recorded;
    if (!doomed.empty() && m_req.confirm_delete) {
      TRY(m_req.confirm_delete(doomed));
    }
  }
  const PushPlan plan = plan_push(m_local, *remote, m_req.big_threshold);
  m_report.files_total = plan.files_total;
  m_report.bytes_total = plan.bytes_total;

  std::uint64_t big_bytes = 0;
  for (const auto i : plan.big) {
    big_bytes += m_local[i].size;
  }
  std::size_t sessions = 1;
  double first_share = 0;  // of the stream, for this connection: equal shares unless set below
  const LinkTimes link = m_main.link_times();
  if (plan.stream.empty() && plan.big.empty()) {
    // Nothing to send (a no-change re-push): no more connections, whatever --streams says.
  } else if (m_more && m_req.streams >= 1) {
    sessions = m_req.streams;
  } else if (m_more && m_req.max_sessions > 1 && link.round_trip) {
    // Another connection costs what the first did: its connect and key exchange, authentication
    // (about two round trips) and the shell starting its command (the listing's time, which holds it).
    // A session that measures no round trip keeps to one connection.
    const std::chrono::duration<double> rtt = *link.round_trip;
    const std::chrono::duration<double> setup = std::chrono::duration<double>(link.connect) + 2 * rtt + listing_time;
    // Connections opened beside the listing are that much nearer to ready: what is left of their
    // set-up is what the choice and the shares weigh, so that they are not opened for nothing.
    const auto left = m_early.empty() ? setup
                                      : std::max(setup - std::chrono::duration<double>(std::chrono::steady_clock::now() - m_early_started),
                                                 std::chrono::duration<double>(0));
    sessions = choose_push_sessions(plan.bytes_to_send, rtt, left, m_req.max_sessions);
    m_report.round_trip = rtt;
    m_report.connection_setup = setup;
    if (plan.big.empty() || plan.stream.empty()) {
      // This connection sends at once, the others only once connected: it carries more of the
      // stream, or the longer first range, so that they end together (the tree at 50 ms over 2:
      // 1.27 s and 1.48 s halved).
      const std::chrono::duration<double> windowed =
          rtt * (static_cast<double>(plan.bytes_to_send) / static_cast<double>(k_sshd_channel_window));
      first_share = first_stream_share(windowed, left, sessions);
    }
  }
  m_stats.assign(sessions, StreamStat{});
  m_groups = split_stream(plan.stream, m_local, sessions, first_share);
  m_big = plan.big;
  const auto resumed = resumable_ranges(*remote);
  std::uint64_t piece = piece_size(big_bytes, sessions, m_req.range_size, k_pieces_per_connection);
  std::uint64_t first_range = 0;
  if (first_share > 0 && sessions > 1 && plan.stream.empty() && resumed.empty()) {
    // Only large files: the first range, this connection's, is the longer one (at most two ranges'
    // worth), the other connections' ranges share the rest.
    first_range = std::min<std::uint64_t>(static_cast<std::uint64_t>(static_cast<double>(big_bytes) * first_share), 2 * m_req.range_size);
    piece = piece_size(big_bytes - first_range, sessions - 1, m_req.range_size, k_pieces_per_connection);
  }
  m_ranges = split_ranges(plan.big, m_local, piece, resumed, first_range);
  m_range_ok.assign(m_ranges.size(), false);
  for (std::size_t r = 0; r < m_ranges.size(); ++r) {
    m_queue.push_back(Work{true, r});  // large units first: they balance best
  }
  for (std::size_t g = 1; g < m_groups.size(); ++g) {
    m_queue.push_back(Work{false, g});
  }

  // The large files' whole SHA-256, computed while their ranges travel.
  std::thread whole_hasher([&] {
    for (const auto i : plan.big) {
      auto h = hash_local_file(m_req.local_root / m_local[i].path);
      std::lock_guard lock(m_mu);
      m_whole.emplace(i, std::move(h));
    }
  });
  // Progress every 100 ms; woken at once when the sends end (a sleep it had to finish cost a
  // no-change re-push up to 0.1 s of its 0.4 s: issue #43).
  bool done = false;
  std::mutex progress_mu;
  std::condition_variable progress_cv;
  std::thread progress([&] {
    std::unique_lock lock(progress_mu);
    while (!done) {
      lock.unlock();
      m_obs.on_progress(m_bytes_done.load(), plan.bytes_to_send);
      lock.lock();
      progress_cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; });
    }
  });
  std::vector<std::thread> workers;
  for (std::size_t i = 1; i < sessions; ++i) {
    workers.emplace_back([this, i] { worker(i); });
  }
  Result<void> main_result;
  if (!m_groups.empty()) {
    main_result = timed(0, group_bytes(0), [&] { return send_group(m_main, 0, agent->get()); });
  } else {
    if (plan.stream.empty() && plan.big.empty()) {
      (*agent)->end_unwaited();  // it has answered all it will; it ends on EOF (a round trip saved)
    } else if (auto end = (*agent)->finish({}, {}, {}, {}); !end) {
      main_result = std::unexpected(end.error());
    }
  }
  agent->reset();
  if (main_result) {
    work_loop(m_main, 0);
  }
  for (auto& t : workers) {
    t.join();
  }
  {
    std::lock_guard lock(progress_mu);
    done = true;
  }
  progress_cv.notify_all();
  progress.join();
  whole_hasher.join();
  m_obs.on_progress(m_bytes_done.load(), plan.bytes_to_send);
  TRY(main_result);
  if (!m_queue.empty()) {
    return fail(Errc::unavailable, "push: the connections to the server were lost with work left (" + last_warning() +
                                       "); re-run the push: it sends only what is missing");
  }
  m_report.sessions = m_sessions.load();
  for (const auto& st : m_stats) {
    if (st.ranges > 0) {
      m_report.per_stream.push_back(st);
    }
  }

  // Retries on the main connection: stream files that failed, then the large files' ranges.
  for (int round = 1; round < k_rounds; ++round) {
    std::vector<std::size_t> again;
    std::set<std::string> failed_paths;
    for (const auto& [path, why] : m_failed) {
      failed_paths.insert(path);
    }
    for (const auto& g : m_groups) {
      for (const auto i : g) {
        if (failed_paths.contains(m_local[i].path)) {
          again.push_back(i);
        }
      }
    }
    for (std::size_t r = 0; r < m_ranges.size(); ++r) {
      if (!m_range_ok[r]) {
        m_queue.push_back(Work{true, r});
      }
    }
    if (again.empty() && m_queue.empty()) {
      break;
    }
    for (const auto i : again) {
      m_failed.erase(m_local[i].path);
    }
    for (std::size_t r = 0; r < m_ranges.size(); ++r) {
      if (!m_range_ok[r]) {
        m_failed.erase(m_local[m_ranges[r].entry].path);
      }
    }
    m_groups = {again};
    if (!again.empty()) {
      TRY(send_group(m_main, 0, nullptr));
    }
    work_loop(m_main, 0);
    if (!m_queue.empty()) {
      return fail(Errc::unavailable, "push: the connection was lost (" + last_warning() + "); re-run the push");
    }
  }
  std::set<std::size_t> failed_big;
  TRY(finish_big_files(failed_big));
  for (const auto e : failed_big) {
    m_failed.emplace(m_local[e].path, "a byte range did not arrive intact after " + std::to_string(k_rounds) + " tries");
  }

  for (const auto i : plan.stream) {
    m_report.entries_sent += 1;
    if (m_local[i].kind == EntryKind::file && !m_failed.contains(m_local[i].path)) {
      ++m_report.files_sent;
      m_report.bytes_sent += m_local[i].size;
    }
  }
  for (const auto i : plan.big) {
    m_report.entries_sent += 1;
    if (!m_failed.contains(m_local[i].path)) {
      ++m_report.files_sent;
      m_report.bytes_sent += m_local[i].size;
    }
  }
  for (const auto& [path, why] : m_failed) {
    m_report.failed.push_back(PushFailure{path, why});
  }
  const bool all_arrived = m_report.failed.empty();
  if (!doomed.empty() && all_arrived) {
    TRY(delete_extra(doomed));
  } else if (!doomed.empty()) {
    m_report.warnings.push_back("--delete: nothing was deleted, because some files did not arrive intact; push again");
  }
  if (all_arrived) {  // rm's failure leaves `deleted` empty: what it was to delete stays recorded
    m_report.record = next_push_record(m_local, *remote, m_req.pushed_before, m_report.deleted);
  }
  const bool size_only = m_tools.contains("none");
  std::string method;
  for (const auto& t : m_tools) {
    if (t != "none" && t != "range") {
      method += (method.empty() ? "" : "+") + t;
    }
  }
  m_report.verify_method = plan.files_to_send == 0 ? "nothing sent" : size_only ? "size-only" : method.empty() ? "sha256" : method;
  m_report.verified = m_report.failed.empty() && !size_only;
  if (size_only) {
    m_report.warnings.push_back("no openssl, sha256sum or shasum on the server: files were checked by size only");
  }
  for (const auto& w : m_report.warnings) {
    m_obs.on_warning(w);
  }
  m_report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::move(m_report);
}

}  // namespace push_detail

Result<PushReport> run_push(SshSession& session, const SessionFactory& more, const PushRequest& request, PushObserver& observer)
{
  push_detail::Pusher p(session, more, request, observer);
  return p.run();
}

}  // namespace gpurent
