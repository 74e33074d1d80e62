// SPDX-License-Identifier: MIT
// The imperative shell of a push: walk, list, plan (pure), send over one or more connections,
// verify, finish the large files, report.
#include "sync/push.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "sync/backup_agent.hpp"
#include "sync/push_agent.hpp"
#include "sync/push_plan.hpp"
#include "sync/push_sources.hpp"

namespace gpurent {
namespace {

constexpr int k_rounds = 3;

// One unit of work: a tar stream of some entries, or one byte range of a large file.
struct Work {
  bool range = false;
  std::size_t index = 0;  // into the groups or the ranges
};

class Pusher {
public:
  Pusher(SshSession& s, const SessionFactory& more, const PushRequest& r, PushObserver& o)
      : m_main(s), m_more(more), m_req(r), m_obs(o)
  {
  }
  Result<PushReport> run();

private:
  Result<void> send_group(SshSession& s, std::size_t g, ExecStream* open_agent);
  Result<void> send_range(SshSession& s, std::size_t r);
  void work_loop(SshSession& s);
  void worker(std::size_t id);
  Result<void> finish_big_files(std::set<std::size_t>& failed_big);
  void fail_file(const std::string& path, std::string why)
  {
    std::lock_guard lock(m_mu);
    m_failed.emplace(path, std::move(why));
  }
  std::string last_warning()
  {
    std::lock_guard lock(m_mu);
    return m_report.warnings.empty() ? std::string("no reason given") : m_report.warnings.back();
  }
  void note_tool(const std::string& tool)
  {
    std::lock_guard lock(m_mu);
    m_tools.insert(tool);
  }

  SshSession& m_main;
  const SessionFactory& m_more;
  const PushRequest& m_req;
  PushObserver& m_obs;
  PushReport m_report;
  std::vector<LocalEntry> m_local;
  std::vector<std::vector<std::size_t>> m_groups;
  std::vector<ByteRange> m_ranges;
  std::vector<std::string> m_range_sums;  // server-verified SHA-256 per range, empty until then
  std::vector<bool> m_range_ok;
  std::mutex m_mu;
  std::deque<Work> m_queue;
  std::map<std::string, std::string> m_failed;  // path -> why (this round)
  std::set<std::string> m_tools;                // "none" when a server had no hashing tool
  std::atomic<std::uint64_t> m_bytes_done{0};
  std::atomic<std::size_t> m_sessions{1};
  std::map<std::size_t, Result<std::string>> m_whole;  // big file entry -> local SHA-256, hashed during the upload
};

Result<void> Pusher::send_group(SshSession& s, std::size_t g, ExecStream* open_agent)
{
  std::unique_ptr<ExecStream> own;
  ExecStream* ch = open_agent;
  if (ch == nullptr) {
    TRY_ASSIGN(own, s.open_exec(push_agent_command(m_req.remote_dir, false)));
    AgentListingReader header;
    TRY(own->read_until([&](const char* p, std::size_t n) { return header.feed(std::string_view(p, n)); },
                        [&] { return header.done(); }));
    TRY(header.result());
    ch = own.get();
  }
  TarSource src(m_req.local_root, m_local, m_groups[g], m_bytes_done);
  std::string out;
  TRY_ASSIGN(const auto end, ch->finish([&](char* b, std::size_t n) { return src.read(b, n); },
                                        [&](const char* p, std::size_t n) -> Result<void> {
                                          out.append(p, n);
                                          return {};
                                        },
                                        {}, {}));
  auto trailer = parse_push_trailer(out, src.files());
  if (!trailer) {
    const std::string why = end.err.empty() ? trailer.error().message : trailer.error().message + ": " + end.err.substr(0, 300);
    return fail(trailer.error().code == Errc::invalid_input ? Errc::unavailable : trailer.error().code, why);
  }
  note_tool(trailer->hashes.tool);
  for (const auto& path : src.files()) {
    const auto trouble = src.troubled().find(path);
    if (trouble != src.troubled().end()) {
      fail_file(path, trouble->second);
      continue;
    }
    if (trailer->hashes.tool == "none") {
      continue;  // checked by size only: nothing to compare
    }
    const auto mine = src.sent_hashes().find(path);
    const auto theirs = trailer->hashes.sums.find(path);
    if (theirs == trailer->hashes.sums.end() || mine == src.sent_hashes().end() || theirs->second != mine->second) {
      fail_file(path, theirs == trailer->hashes.sums.end()
                          ? "not written on the server" + (end.err.empty() ? std::string() : " (" + end.err.substr(0, 200) + ")")
                          : "the SHA-256 computed on the server differs");
    }
  }
  if (trailer->tar_status != 0) {
    std::lock_guard lock(m_mu);
    m_report.warnings.push_back("the server's tar reported: " + end.err.substr(0, 300));
  }
  return {};
}

Result<void> Pusher::send_range(SshSession& s, std::size_t r)
{
  const ByteRange& br = m_ranges[r];
  const LocalEntry& e = m_local[br.entry];
  TRY_ASSIGN(auto ch, s.open_exec(range_write_command(m_req.remote_dir, e.path, br.offset)));
  RangeSource src(m_req.local_root / e.path, br.offset, br.length, m_bytes_done);
  std::string out;
  TRY(ch->finish([&](char* b, std::size_t n) { return src.read(b, n); },
                 [&](const char* p, std::size_t n) -> Result<void> {
                   out.append(p, n);
                   return {};
                 },
                 {}, {}));
  TRY_ASSIGN(const auto res, parse_range_result(out));
  const std::string mine = src.sha256();
  std::lock_guard lock(m_mu);
  if (!src.trouble().empty()) {
    m_failed.emplace(e.path, src.trouble());
  } else if (res.dd_status != 0) {
    m_failed.emplace(e.path, "the server could not write it (dd exit " + std::to_string(res.dd_status) + "; is the disk full?)");
  } else if (!res.sha256.empty() && res.sha256 != mine) {
    m_failed.emplace(e.path, "the SHA-256 the server computed of bytes " + std::to_string(br.offset) + "-" +
                                 std::to_string(br.offset + br.length) + " differs");
  } else {
    m_range_ok[r] = true;
    m_tools.insert(res.sha256.empty() ? "none" : "range");
  }
  return {};
}

void Pusher::work_loop(SshSession& s)
{
  while (true) {
    Work w;
    {
      std::lock_guard lock(m_mu);
      if (m_queue.empty()) {
        return;
      }
      w = m_queue.front();
      m_queue.pop_front();
    }
    auto r = w.range ? send_range(s, w.index) : send_group(s, w.index, nullptr);
    if (!r) {
      // The connection is probably gone: give the work back for another one, and stop here.
      std::lock_guard lock(m_mu);
      m_queue.push_front(w);
      m_report.warnings.push_back("one connection stopped: " + r.error().message);
      return;
    }
  }
}

void Pusher::worker(std::size_t)
{
  auto s = m_more();
  if (!s) {
    std::lock_guard lock(m_mu);
    m_report.warnings.push_back("could not open another connection (" + s.error().message + "); continuing with fewer");
    return;
  }
  m_sessions.fetch_add(1);
  work_loop(**s);
}

Result<void> Pusher::finish_big_files(std::set<std::size_t>& failed_big)
{
  std::vector<BigFileFinal> finals;
  std::map<std::size_t, bool> ready;  // entry -> every range verified
  for (std::size_t r = 0; r < m_ranges.size(); ++r) {
    auto [it, fresh] = ready.emplace(m_ranges[r].entry, true);
    it->second = it->second && m_range_ok[r];
  }
  std::map<std::string, std::string> whole;  // path -> local SHA-256 of the whole file
  for (const auto& [entry, ok] : ready) {
    const LocalEntry& e = m_local[entry];
    if (!ok) {
      failed_big.insert(entry);
      continue;
    }
    const auto found = m_whole.find(entry);
    auto h = found != m_whole.end() ? found->second : hash_local_file(m_req.local_root / e.path);
    if (!h) {
      fail_file(e.path, h.error().message);
      continue;
    }
    whole[e.path] = *h;
    finals.push_back(BigFileFinal{e.path, e.size, *h, e.mode, e.mtime_ns / 1'000'000'000LL});
  }
  if (finals.empty()) {
    return {};
  }
  TRY_ASSIGN(const auto r, m_main.exec(finalize_command(m_req.remote_dir, finals), {}));
  TRY_ASSIGN(const auto results, parse_finalize_output(r.out));
  for (const auto& f : finals) {
    const auto it = results.find(f.rel);
    if (it == results.end() || !it->second.renamed) {
      fail_file(f.rel, it == results.end() ? "not finished on the server: " + r.err.substr(0, 200)
                                           : "the SHA-256 the server computed of the whole file differs");
    } else if (!it->second.sha256.empty() && it->second.sha256 != whole[f.rel]) {
      fail_file(f.rel, "the SHA-256 the server computed of the whole file differs");
    } else if (it->second.sha256.empty()) {
      note_tool("none");
    }
  }
  return {};
}

Result<PushReport> Pusher::run()
{
  const auto t0 = std::chrono::steady_clock::now();
  m_report.remote_dir = m_req.remote_dir;
  TRY_ASSIGN(m_report.tree, walk_local_tree(m_req.local_root, m_req.walk));
  m_local = m_report.tree.entries;
  for (const auto& w : m_report.tree.warnings) {
    m_obs.on_warning(w);
  }

  // The listing, through the channel that then carries the first stream.
  TRY_ASSIGN(auto agent, m_main.open_exec(push_agent_command(m_req.remote_dir, true)));
  AgentListingReader listing;
  TRY(agent->read_until([&](const char* p, std::size_t n) { return listing.feed(std::string_view(p, n)); },
                        [&] { return listing.done(); }));
  auto remote = listing.result();
  if (!remote) {
    return fail(remote.error().code, "push to " + m_req.remote_dir + ": " + remote.error().message +
                                         (remote.error().code == Errc::unsupported ? "; the server needs GNU tar and mktemp" : ""));
  }
  const PushPlan plan = plan_push(m_local, *remote, m_req.big_threshold);
  m_report.files_total = plan.files_total;
  m_report.bytes_total = plan.bytes_total;

  std::size_t sessions = 1;
  if (m_more && m_req.max_sessions > 1) {
    sessions = std::min<std::size_t>(m_req.max_sessions, 1 + plan.bytes_to_send / std::max<std::uint64_t>(m_req.bytes_per_session, 1));
  }
  m_groups = split_stream(plan.stream, m_local, sessions);
  // About two ranges per connection, so that they end together; never more than range_size.
  std::uint64_t big_bytes = 0;
  for (const auto i : plan.big) {
    big_bytes += m_local[i].size;
  }
  const std::uint64_t most = std::max<std::uint64_t>(m_req.range_size, 1);
  const std::uint64_t range =
      std::clamp<std::uint64_t>((big_bytes + 2 * sessions - 1) / (2 * sessions), std::min<std::uint64_t>(8 * k_push_mib, most), most);
  m_ranges = split_ranges(plan.big, m_local, range);
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
  std::atomic<bool> done{false};
  std::thread progress([&] {
    while (!done.load()) {
      m_obs.on_progress(m_bytes_done.load(), plan.bytes_to_send);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<std::thread> workers;
  for (std::size_t i = 1; i < sessions; ++i) {
    workers.emplace_back([this, i] { worker(i); });
  }
  Result<void> main_result;
  if (!m_groups.empty()) {
    main_result = send_group(m_main, 0, agent.get());
  } else {
    if (auto end = agent->finish({}, {}, {}, {}); !end) {
      main_result = std::unexpected(end.error());
    }
  }
  agent.reset();
  if (main_result) {
    work_loop(m_main);
  }
  for (auto& t : workers) {
    t.join();
  }
  done = true;
  progress.join();
  whole_hasher.join();
  m_obs.on_progress(m_bytes_done.load(), plan.bytes_to_send);
  TRY(main_result);
  if (!m_queue.empty()) {
    return fail(Errc::unavailable, "push: the connections to the server were lost with work left (" + last_warning() +
                                       "); re-run the push: it sends only what is missing");
  }
  m_report.sessions = m_sessions.load();

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
    work_loop(m_main);
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

}  // namespace

Result<PushReport> run_push(SshSession& session, const SessionFactory& more, const PushRequest& request, PushObserver& observer)
{
  Pusher p(session, more, request, observer);
  return p.run();
}

}  // namespace gpurent
