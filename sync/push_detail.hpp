// SPDX-License-Identifier: MIT
#pragma once
// Internal to sync/push*.cpp (not a public interface; sync/push.hpp is): the pusher that runs one push.
//   push.cpp       the run: walk, list, plan, share the work among the connections, retry, report
//   push_send.cpp  the sends: tar streams of small files, byte ranges of large ones, the work loop
//                  of each connection, and finishing the large files on the server
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sync/push.hpp"
#include "sync/push_plan.hpp"
#include "sync/range_plan.hpp"

namespace gpurent::push_detail {

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
  void work_loop(SshSession& s, std::size_t k);
  // Runs one send of connection k and counts it in m_stats[k] when it succeeds.
  Result<void> timed(std::size_t k, std::uint64_t bytes, const std::function<Result<void>()>& send);
  [[nodiscard]] std::uint64_t group_bytes(std::size_t g) const;
  void worker(std::size_t id);
  // The walk (the caller's or here) and the refusal of likely secrets, into m_report.tree.
  Result<void> take_walk();
  // A first push to this directory (no record of an earlier one) over a long round trip sends the
  // whole tree: the other connections it will want are opened at once, beside the listing, not
  // after it (issue #43: 0.2-0.5 s sooner at 50 ms). Needs the walk.
  void open_early_connections(const LinkTimes& link);
  Result<void> finish_big_files(std::set<std::size_t>& failed_big);
  std::map<std::size_t, std::vector<Span>> resumable_ranges(const std::vector<RemoteEntry>& remote);
  // --delete: removes `doomed` under the remote directory (sync/push_delete.hpp).
  Result<void> delete_extra(const std::vector<std::string>& doomed);
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
  std::vector<std::size_t> m_big;  // the large files to send (local entries)
  std::vector<ByteRange> m_ranges;  // what is left of them to send
  std::vector<std::string> m_range_sums;  // server-verified SHA-256 per range, empty until then
  std::vector<bool> m_range_ok;
  std::mutex m_mu;
  std::deque<Work> m_queue;
  std::map<std::string, std::string> m_failed;  // path -> why (this round)
  std::set<std::string> m_tools;                // "none" when a server had no hashing tool
  std::atomic<std::uint64_t> m_bytes_done{0};
  std::atomic<std::size_t> m_sessions{1};
  std::vector<StreamStat> m_stats;  // per connection: index 0 the main one, i the worker i
  std::map<std::size_t, Result<std::string>> m_whole;  // big file entry -> local SHA-256, hashed during the upload
  std::deque<std::future<Result<std::unique_ptr<SshSession>>>> m_early;  // taken by the workers first
  std::chrono::steady_clock::time_point m_early_started;
};

}  // namespace gpurent::push_detail
