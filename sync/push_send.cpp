// SPDX-License-Identifier: MIT
// The sends of a push (sync/push_detail.hpp): small files as tar streams through the push agent,
// large files as byte ranges, each verified against the SHA-256 the server computed; the work loop
// of each connection; and the large files finished (hashed whole, renamed) on the server.
#include <chrono>

#include "sync/backup_agent.hpp"
#include "sync/push_agent.hpp"
#include "sync/push_detail.hpp"
#include "sync/push_sources.hpp"

namespace gpurent::push_detail {

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
  if (!trailer && trailer.error().code == Errc::refused) {
    return fail(Errc::refused, "push to " + m_req.remote_dir + ": " + trailer.error().message);
  }
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
  TRY_ASSIGN(auto ch, s.open_exec(range_write_command(m_req.remote_dir, e.path, br.offset, br.length)));
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

std::uint64_t Pusher::group_bytes(std::size_t g) const
{
  std::uint64_t bytes = 0;
  for (const auto i : m_groups[g]) {
    bytes += m_local[i].size;
  }
  return bytes;
}

Result<void> Pusher::timed(std::size_t k, std::uint64_t bytes, const std::function<Result<void>()>& send)
{
  const auto t0 = std::chrono::steady_clock::now();
  auto r = send();
  if (r && k < m_stats.size()) {
    auto& st = m_stats[k];  // each connection writes its own
    st.bytes += bytes;
    st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++st.ranges;
  }
  return r;
}

void Pusher::work_loop(SshSession& s, std::size_t k)
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
    auto r = w.range ? timed(k, m_ranges[w.index].length, [&] { return send_range(s, w.index); })
                     : timed(k, group_bytes(w.index), [&] { return send_group(s, w.index, nullptr); });
    if (!r) {
      // The connection is probably gone: give the work back for another one, and stop here.
      std::lock_guard lock(m_mu);
      m_queue.push_front(w);
      m_report.warnings.push_back("one connection stopped: " + r.error().message);
      return;
    }
  }
}

void Pusher::worker(std::size_t id)
{
  std::optional<std::future<Result<std::unique_ptr<SshSession>>>> early;
  {
    std::lock_guard lock(m_mu);
    if (!m_early.empty()) {
      early = std::move(m_early.front());
      m_early.pop_front();
    }
  }
  auto s = early ? early->get() : m_more();
  if (!s) {
    std::lock_guard lock(m_mu);
    m_report.warnings.push_back("could not open another connection (" + s.error().message + "); continuing with fewer");
    return;
  }
  m_sessions.fetch_add(1);
  work_loop(**s, id);
}

Result<void> Pusher::finish_big_files(std::set<std::size_t>& failed_big)
{
  std::vector<BigFileFinal> finals;
  std::map<std::size_t, bool> ready;  // entry -> every range verified (or resumed)
  for (const auto i : m_big) {
    ready.emplace(i, true);
  }
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
}  // namespace gpurent::push_detail
