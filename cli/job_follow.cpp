// SPDX-License-Identifier: MIT
#include "cli/job_follow.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>

#include "cli/job_support.hpp"
#include "cli/services.hpp"
#include "sync/job_agent.hpp"

namespace gpurent {
namespace {

constexpr auto k_idle_limit = std::chrono::seconds(20);

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_sigint(int)
{
  g_interrupted = 1;
}

// Ctrl-C sets a flag while following (no SA_RESTART: a wait returns at once); restored after.
class InterruptGuard {
public:
  InterruptGuard()
  {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &m_old);
  }
  ~InterruptGuard() { ::sigaction(SIGINT, &m_old, nullptr); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  struct sigaction m_old {};
};

std::chrono::seconds retry_window(const Services& s)
{
  const auto v = s.getenv("GPURENT_FOLLOW_RETRY_S");
  const long n = v ? std::strtol(v->c_str(), nullptr, 10) : 600;
  return std::chrono::seconds(std::max(0L, n));
}

}  // namespace

Result<FollowOutcome> follow_job(Services& s, const JobServer& server, std::unique_ptr<SshSession>& session, const std::string& job_id,
                                 std::uint64_t offset, std::ostream& out)
{
  InterruptGuard guard;
  FollowOutcome outcome;
  outcome.offset = offset;
  std::optional<TimePoint> down_since;  // the connection is lost since then
  auto backoff = std::chrono::milliseconds(250);
  const auto window = retry_window(s);
  const auto lost_connection = [&](const std::string& why) -> Result<void> {
    session.reset();
    const auto now = s.clock.now();
    if (!down_since) {
      down_since = now;
      s.err << "gpurent: the connection to " << server.dest.name << " dropped (" << why
            << "); the job keeps running; reconnecting (Ctrl-C to stop following)\n";
    } else if (now - *down_since > window) {
      return fail(Errc::unavailable, "lost the connection to " + server.dest.name + " for over " + std::to_string(window.count()) +
                                         " s (" + why + "); the job keeps running: follow it again with `gpurent logs " +
                                         server.dest.name + " " + job_id + " -f`");
    }
    s.clock.sleep_for(backoff);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(10));
    return {};
  };
  while (true) {
    if (g_interrupted != 0) {
      outcome.how = FollowOutcome::How::detached;
      return outcome;
    }
    if (!session) {
      auto fresh = connect_job_server(s, server);
      if (!fresh) {
        if (fresh.error().code == Errc::refused || fresh.error().code == Errc::unauthorized) {
          return std::unexpected(fresh.error());  // a changed host key or a refused key is not a dropped connection
        }
        TRY(lost_connection(fresh.error().message));
        continue;
      }
      session = std::move(*fresh);
      if (down_since) {
        s.err << "gpurent: reconnected to " << server.dest.name << "; following from byte " << outcome.offset << "\n";
        down_since.reset();
        backoff = std::chrono::milliseconds(250);
      }
    }
    auto ch = session->open_exec(job_follow_command(job_id, outcome.offset));
    if (!ch) {
      TRY(lost_connection(ch.error().message));
      continue;
    }
    FollowControl control;
    auto last = std::chrono::steady_clock::now();
    bool idle = false;
    auto end = (*ch)->finish(
        {},
        [&](const char* p, std::size_t n) -> Result<void> {
          out.write(p, static_cast<std::streamsize>(n));
          out.flush();
          outcome.offset += n;
          last = std::chrono::steady_clock::now();
          return {};
        },
        [&](const char* p, std::size_t n) -> Result<void> {
          control.feed(std::string_view(p, n));
          last = std::chrono::steady_clock::now();
          return {};
        },
        [&] {
          idle = std::chrono::steady_clock::now() - last > k_idle_limit;
          return g_interrupted != 0 || idle;
        });
    if (!end) {
      TRY(lost_connection(end.error().message));
      continue;
    }
    if (g_interrupted != 0) {
      outcome.how = FollowOutcome::How::detached;
      return outcome;
    }
    if (control.missing()) {
      return fail(Errc::not_found, "the server no longer has job " + job_id + " (lost)");
    }
    if (end->stopped || !control.end()) {
      TRY(lost_connection(idle ? "no heartbeat for 20 s" : "the follower stopped"));
      continue;
    }
    if (*control.end() == "lost") {
      outcome.how = FollowOutcome::How::lost;
      return outcome;
    }
    if (const auto code = control.exit_code()) {
      outcome.how = FollowOutcome::How::ended;
      outcome.exit_code = code;
      return outcome;
    }
    s.clock.sleep_for(std::chrono::seconds(1));  // "end running": the follower ended early; look again
  }
}

Result<int> finish_followed_job(Services& s, const JobServer& server, std::unique_ptr<SshSession>& session,
                                const std::string& job_id, const std::function<void(const JobRecord&)>& show_json)
{
  // The connection that followed the job may have dropped right after its end (the follow loop
  // above reconnects; this step must too): a few fresh connections, a second apart.
  Result<std::vector<RemoteJob>> listed_now = fail(Errc::unavailable, "not connected");
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) {
      s.clock.sleep_for(std::chrono::seconds(1));
    }
    if (!session) {
      auto fresh = connect_job_server(s, server);
      if (!fresh) {
        listed_now = std::unexpected(fresh.error());
        if (fresh.error().code == Errc::refused || fresh.error().code == Errc::unauthorized) {
          break;
        }
        continue;
      }
      session = std::move(*fresh);
    }
    listed_now = list_server_jobs(*session);
    if (listed_now || (listed_now.error().code != Errc::unavailable && listed_now.error().code != Errc::timeout)) {
      break;
    }
    session.reset();
  }
  TRY_ASSIGN(const auto listed, std::move(listed_now));
  const auto mine = std::find_if(listed.begin(), listed.end(), [&](const RemoteJob& j) { return j.id == job_id; });
  if (mine != listed.end() && job_state(*mine) == JobState::failed && !s.global.json) {
    // Shown before the steps run: a --then down:destroy may take the server away.
    const std::string card = server.record ? server.record->card : std::string();
    auto tail = session->exec(job_log_tail_command(job_id, k_oom_log_tail), {});
    const auto text = tail ? oom_diagnosis(s, tail->out, card, false) : std::nullopt;
    if (text) {
      s.err << "\ngpurent: job " << job_id << " ran out of GPU memory (exit " << mine->exit_code.value_or(-1)
            << "). `gpurent oom`'s diagnosis" << (card.empty() ? std::string() : " for the " + card) << ":\n\n"
            << *text << "\n";
    }
  }
  TRY_ASSIGN(const auto settled, settle_jobs(s, server, *session, listed));
  const auto rec = std::find_if(settled.jobs.begin(), settled.jobs.end(), [&](const JobRecord& j) { return j.job_id == job_id; });
  if (rec == settled.jobs.end()) {
    return fail(Errc::internal, "job " + job_id + " is not recorded");
  }
  if (s.global.json) {
    show_json(*rec);
  } else {
    s.err << "gpurent: job " << job_id << " " << rec->state;
    if (rec->exit_code) {
      s.err << " (exit " << *rec->exit_code << ")";
    }
    for (const auto& st : rec->steps) {
      s.err << "; " << st.step << ": " << st.state;
    }
    s.err << "\n";
  }
  if (settled.steps_failed) {
    return report_error(s, Error{Errc::partial, "a --then step failed (see its detail); fix the cause and run the step by hand"});
  }
  return rec->state == "succeeded" ? 0 : 1;
}

}  // namespace gpurent
