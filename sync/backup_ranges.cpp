// SPDX-License-Identifier: MIT
// Large files of a backup as byte ranges over several SSH connections (sync/backup_detail.hpp,
// sync/range_plan.hpp): each range is written at its offset of FILE.gpurent-partial and checked
// against the SHA-256 the server computed of the bytes it sent; a verified range is recorded in
// FILE.gpurent-partial.ranges (the range ledger), so a killed run's successor fetches only the
// rest. The whole file's SHA-256 is computed on its own thread, in file order, as the ranges land.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

#include "sync/backup_detail.hpp"
#include "sync/range_agent.hpp"
#include "sync/range_plan.hpp"

namespace gpurent::backup_detail {
namespace {

constexpr int k_tries = 3;
constexpr std::size_t k_hash_chunk = 1024 * 1024;
constexpr std::size_t k_err_kept = 64 * 1024;
using Clock = std::chrono::steady_clock;

std::optional<RangeLedger> load_ledger(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto l = parse_range_ledger(text.str());
  return l ? std::optional<RangeLedger>(std::move(*l)) : std::nullopt;
}

// Temp file + rename: a reader sees the old ledger or the new one. No fsync: a killed process
// leaves the page cache behind, and after a power loss the whole file's SHA-256 catches a range
// that did not reach the disk.
bool save_ledger(const std::string& path, const RangeLedger& l)
{
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << render_range_ledger(l);
    if (!out.flush()) {
      return false;
    }
  }
  return ::rename(tmp.c_str(), path.c_str()) == 0;
}

bool covers(const std::vector<Span>& have, std::uint64_t at, std::uint64_t& end)
{
  end = at;
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& s : have) {
      if (s.offset <= end && s.offset + s.length > end) {
        end = s.offset + s.length;
        grew = true;
      }
    }
  }
  return end > at;
}

}  // namespace

class Runner::RangeCopier {
public:
  RangeCopier(Runner& r, std::size_t streams) : m_r(r), m_stats(streams) {}
  RangeCopier(const RangeCopier&) = delete;
  RangeCopier& operator=(const RangeCopier&) = delete;
  ~RangeCopier()
  {
    stop_all();
    for (auto& t : m_threads) {
      if (t.joinable()) {
        t.join();
      }
    }
    if (m_hasher.joinable()) {
      m_hasher.join();
    }
    for (auto& f : m_files) {
      if (f.fd >= 0) {
        ::close(f.fd);
      }
    }
  }

  // Opens the partial file (kept, with the ledger's ranges, when the ledger is of this very
  // remote file) and queues the pieces still to fetch.
  Result<void> add_file(const RemoteEntry& e, bool allow_resume, std::uint64_t piece)
  {
    if (!parents_are_dirs(m_r.m_req.dest, e.path)) {
      m_r.m_report.failed.push_back(FailedFile{e.path, "a parent is not a directory locally; not written"});
      return {};
    }
    File f;
    f.entry = &e;
    const auto& src = m_r.m_sources.at(e.path);
    f.remote = join_remote(src.root, src.rel);
    f.partial = (m_r.m_req.dest / e.path).string() + std::string(k_partial_suffix);
    f.ledger_path = ledger_path_of(f.partial);
    f.fd = ::open(f.partial.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f.fd < 0) {
      return std::unexpected(disk_error(f.partial, errno));
    }
    f.ledger = RangeLedger{e.size, e.mtime_ns, {}};
    struct stat st {};
    if (allow_resume && ::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) == e.size) {
      if (auto old = load_ledger(f.ledger_path); old && old->size == e.size && old->mtime_ns == e.mtime_ns) {
        f.ledger = std::move(*old);
      }
    }
    if (f.ledger.done.empty() && (::ftruncate(f.fd, 0) != 0 || ::ftruncate(f.fd, static_cast<off_t>(e.size)) != 0)) {
      const int err = errno;
      ::close(f.fd);
      if (is_disk_full(err)) {
        ::unlink(f.partial.c_str());
        ::unlink(f.ledger_path.c_str());
      }
      return std::unexpected(disk_error(f.partial, err));
    }
    f.have = done_spans(f.ledger);
    std::uint64_t resumed = 0;
    for (const auto& s : f.have) {
      resumed += s.length;
    }
    m_r.m_report.ranges_resumed += f.ledger.done.size();
    if (resumed > 0) {
      m_r.advance(resumed, 0, e.path);
    }
    const std::size_t index = m_files.size();
    for (const auto& s : spans_to_fetch(e.size, f.have, piece)) {
      m_queue.push_back(Piece{index, s, 0});
    }
    m_files.push_back(std::move(f));
    return {};
  }

  // Starts the whole-file hashing and the other connections (each opened on its own thread).
  void start(const SessionFactory& more)
  {
    m_hasher = std::thread([this] { hash_files(); });
    for (std::size_t k = 1; k < m_stats.size() && more; ++k) {
      m_threads.emplace_back([this, k, &more] {
        auto s = more();
        if (!s) {
          m_r.warn("could not open another connection for the large files (" + s.error().message + "); continuing with fewer");
          return;
        }
        {
          std::lock_guard lock(m_mu);
          ++m_opened;
        }
        work(**s, k);
      });
    }
  }

  // Fetches on the main session until nothing is left, waits for the others, and returns the
  // copies: whole files with their SHA-256, or files that shrank or vanished (a short copy, so
  // that the listing after the copy decides).
  Result<std::vector<Copied>> finish(SshSession& main)
  {
    work(main, 0);
    for (auto& t : m_threads) {
      t.join();
    }
    m_threads.clear();
    {
      std::lock_guard lock(m_mu);
      if (!m_error && !m_queue.empty()) {
        m_error = Error{Errc::unavailable, "backup: the connections to the server were lost with byte ranges left (" + m_last_trouble +
                                               "); re-run the backup: it fetches only the ranges not yet verified"};
      }
    }
    stop_all();
    m_hasher.join();
    for (auto& f : m_files) {
      ::close(f.fd);
      f.fd = -1;
    }
    if (m_error) {
      return std::unexpected(*m_error);
    }
    std::vector<Copied> out;
    for (auto& f : m_files) {
      if (f.failed && !f.short_copy) {
        m_r.m_report.failed.push_back(FailedFile{f.entry->path, f.why});
        continue;
      }
      out.push_back(Copied{*f.entry, f.failed ? std::string() : f.whole, f.failed ? 0 : f.entry->size});
      m_r.advance(0, 1, f.entry->path);
    }
    for (std::size_t k = 0; k < m_stats.size(); ++k) {
      m_r.m_report.bytes_copied += m_stats[k].bytes;
      if (m_stats[k].ranges > 0) {
        m_r.m_report.per_stream.push_back(m_stats[k]);
      }
    }
    m_r.m_report.streams = std::max(m_r.m_report.streams, m_opened);
    return out;
  }

private:
  struct File {
    const RemoteEntry* entry = nullptr;
    std::string remote;
    std::string partial;
    std::string ledger_path;
    int fd = -1;
    RangeLedger ledger;
    std::vector<Span> have;  // verified (or resumed) spans
    bool failed = false;
    bool short_copy = false;  // shrank or vanished on the server: the listing after the copy decides
    std::string why;
    std::string whole;        // SHA-256 of the whole local copy
  };
  struct Piece {
    std::size_t file = 0;
    Span span;
    int tries = 0;
  };

  void stop_all()
  {
    std::lock_guard lock(m_mu);
    m_stop = true;
    m_cv.notify_all();
  }
  [[nodiscard]] bool stopping()
  {
    std::lock_guard lock(m_mu);
    return m_stop;
  }

  void work(SshSession& s, std::size_t k)
  {
    while (true) {
      Piece p;
      {
        std::lock_guard lock(m_mu);
        if (m_stop || m_queue.empty()) {
          return;
        }
        p = m_queue.front();
        m_queue.pop_front();
      }
      auto r = fetch(s, k, p);
      if (!r) {
        std::lock_guard lock(m_mu);
        m_queue.push_front(p);
        if (r.error().interrupted || r.error().code == Errc::internal) {
          if (!m_error) {
            m_error = r.error();  // Ctrl-C or the local disk: every connection stops
          }
          m_stop = true;
          m_cv.notify_all();
        } else {
          m_last_trouble = r.error().message;
        }
        return;
      }
    }
  }

  // One piece through one channel. An error means this connection (or the whole copy) cannot
  // go on; a range that arrived wrong is queued again, or fails its file after k_tries.
  Result<void> fetch(SshSession& s, std::size_t k, Piece p)
  {
    File& f = m_files[p.file];
    const auto t0 = Clock::now();
    TRY_ASSIGN(auto ch, s.open_exec(range_read_command(f.remote, p.span.offset, p.span.length), range_window(m_stats.size())));
    Sha256 h;
    std::uint64_t got = 0;
    bool too_long = false;
    std::string err;
    auto end = ch->finish(
        {},
        [&](const char* data, std::size_t n) -> Result<void> {
          if (n > p.span.length - got) {
            too_long = true;
            n = static_cast<std::size_t>(p.span.length - got);
          }
          std::size_t done = 0;
          while (done < n) {
            const auto w = ::pwrite(f.fd, data + done, n - done, static_cast<off_t>(p.span.offset + got + done));
            if (w < 0 && errno == EINTR) {
              continue;
            }
            if (w < 0) {
              const int e = errno;
              if (is_disk_full(e)) {
                ::unlink(f.partial.c_str());
                ::unlink(f.ledger_path.c_str());
              }
              return std::unexpected(disk_error(f.partial, e));
            }
            done += static_cast<std::size_t>(w);
          }
          h.update(data, n);
          got += n;
          m_stats[k].bytes += n;
          m_r.advance(n, 0, f.entry->path);
          if (m_r.cancelled()) {
            return std::unexpected(interrupted_error("copying " + f.entry->path + " (its verified ranges are kept: a re-run fetches the rest)"));
          }
          return {};
        },
        [&](const char* data, std::size_t n) -> Result<void> {
          err.append(data, n);
          if (err.size() > 2 * k_err_kept) {
            err.erase(0, err.size() - k_err_kept);
          }
          return {};
        },
        [this] { return stopping(); });
    if (!end) {
      return std::unexpected(end.error());
    }
    if (end->stopped) {
      return fail(Errc::unavailable, "stopped");
    }
    const auto t1 = Clock::now();
    {
      std::lock_guard lock(m_mu);
      auto& st = m_stats[k];
      st.seconds += std::chrono::duration<double>(t1 - t0).count();
      ++st.ranges;
    }
    const auto report = parse_range_read_report(err);
    const std::string where = " (bytes " + std::to_string(p.span.offset) + "-" + std::to_string(p.span.offset + p.span.length) + ")";
    if (report && report->missing) {
      give_up(f, "removed or unreadable on the server during the backup", true);
      return {};
    }
    if (report && report->dd_status == 0 && got < p.span.length) {
      give_up(f, "shrank on the server during the backup", true);
      return {};
    }
    std::string trouble;
    if (!report) {
      trouble = report.error().message + where;
    } else if (report->dd_status != 0) {
      trouble = "the server's dd exited with " + std::to_string(report->dd_status) + where;
    } else if (too_long) {
      trouble = "the server sent more than asked" + where;
    } else if (!report->sha256.empty() && report->sha256 != h.finish_hex()) {
      trouble = "the SHA-256 the server computed differs" + where;
    }
    std::lock_guard lock(m_mu);
    if (!trouble.empty()) {
      m_last_trouble = trouble;
      if (++p.tries < k_tries) {
        m_queue.push_back(p);  // sent again, alone
      } else {
        f.failed = true;
        f.why = trouble + " after " + std::to_string(k_tries) + " tries";
        m_cv.notify_all();
      }
      return {};
    }
    if (!report->sha256.empty()) {
      auto at = std::upper_bound(f.ledger.done.begin(), f.ledger.done.end(), p.span.offset,
                                 [](std::uint64_t off, const LedgerRange& r) { return off < r.span.offset; });
      f.ledger.done.insert(at, LedgerRange{p.span, report->sha256});
      if (!save_ledger(f.ledger_path, f.ledger)) {
        m_last_trouble = "cannot write " + f.ledger_path;  // the copy goes on; a re-run would fetch this range again
      }
    }
    f.have.push_back(p.span);
    m_cv.notify_all();
    return {};
  }

  void give_up(File& f, std::string why, bool short_copy)
  {
    std::lock_guard lock(m_mu);
    f.failed = true;
    f.short_copy = short_copy;
    f.why = std::move(why);
    m_cv.notify_all();
  }

  // The whole files' SHA-256, each in file order as soon as its bytes are verified on disk.
  void hash_files()
  {
    std::vector<char> buf(k_hash_chunk);
    for (auto& f : m_files) {
      Sha256 h;
      std::uint64_t at = 0;
      bool complete = true;
      while (at < f.entry->size) {
        std::uint64_t end = 0;
        {
          std::unique_lock lock(m_mu);
          m_cv.wait(lock, [&] { return m_stop || f.failed || covers(f.have, at, end); });
          if (f.failed || !covers(f.have, at, end)) {
            complete = false;
            break;
          }
        }
        while (at < end) {
          const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), end - at));
          const auto n = ::pread(f.fd, buf.data(), want, static_cast<off_t>(at));
          if (n < 0 && errno == EINTR) {
            continue;
          }
          if (n <= 0) {
            give_up(f, "cannot read back " + f.partial, false);
            complete = false;
            break;
          }
          h.update(buf.data(), static_cast<std::size_t>(n));
          at += static_cast<std::uint64_t>(n);
        }
        if (!complete) {
          break;
        }
      }
      if (complete) {
        std::lock_guard lock(m_mu);
        f.whole = h.finish_hex();
      }
    }
  }

  Runner& m_r;
  std::vector<File> m_files;
  std::deque<Piece> m_queue;
  std::vector<StreamStat> m_stats;  // per connection; each written by its own thread
  std::size_t m_opened = 1;
  std::mutex m_mu;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::optional<Error> m_error;
  std::string m_last_trouble = "no reason given";
  std::vector<std::thread> m_threads;
  std::thread m_hasher;
};

Runner::Runner(SshSession& s, const BackupRequest& r, BackupObserver& o) : m_session(s), m_req(r), m_obs(o) {}
Runner::~Runner() = default;

void Runner::advance(std::uint64_t bytes, std::uint64_t files, std::string_view current)
{
  std::lock_guard lock(m_obs_mu);
  m_progress.bytes_done += bytes;
  m_progress.files_done += files;
  if (!current.empty()) {
    m_progress.current = current;
  }
  m_obs.on_progress(m_progress);
}

bool Runner::cancelled()
{
  std::lock_guard lock(m_obs_mu);
  return m_obs.cancelled();
}

void Runner::warn(std::string msg)
{
  std::lock_guard lock(m_obs_mu);
  m_obs.on_warning(msg);
  m_report.warnings.push_back(std::move(msg));
}

Result<void> Runner::start_ranges(const std::vector<RemoteEntry>& files, std::size_t streams, bool allow_resume)
{
  std::uint64_t bytes = 0;
  for (const auto& e : files) {
    bytes += e.size;
  }
  const std::uint64_t piece = piece_size(bytes, streams, m_req.range_size);
  m_ranges = std::make_unique<RangeCopier>(*this, streams);
  for (const auto& e : files) {
    TRY(m_ranges->add_file(e, allow_resume, piece));
  }
  m_ranges->start(m_req.more_sessions);
  m_recheck = true;  // nothing else tells whether a large file changed between two of its ranges
  return {};
}

Result<std::vector<Copied>> Runner::finish_ranges()
{
  if (!m_ranges) {
    return std::vector<Copied>{};
  }
  auto out = m_ranges->finish(m_session);
  m_ranges.reset();
  return out;
}

}  // namespace gpurent::backup_detail
