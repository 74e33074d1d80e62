// SPDX-License-Identifier: MIT
#pragma once
// Following a job's log (`run` while attached, `logs -f`): the log from a byte offset, across
// dropped connections (reconnects with backoff for GPURENT_FOLLOW_RETRY_S, default 600 s, and
// resumes at the byte it had reached), until the job ends. A connection that says nothing for
// 20 s is taken as dead (the server's follower prints a heartbeat every 5 s), as after a laptop
// slept. Ctrl-C detaches: the job keeps running.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "common/result.hpp"
#include "providers/state_store.hpp"
#include "sync/transport.hpp"

namespace gpurent {
struct Services;
struct JobServer;

struct FollowOutcome {
  enum class How { ended, lost, detached };
  How how = How::ended;
  std::optional<int> exit_code;  // ended
  std::uint64_t offset = 0;      // bytes of the log shown, from the start of the log
};

// `session` may be null or dead; it is replaced when the connection drops.
[[nodiscard]] Result<FollowOutcome> follow_job(Services& s, const JobServer& server, std::unique_ptr<SshSession>& session,
                                               const std::string& job_id, std::uint64_t offset, std::ostream& out);

// After a followed job ended: prints `gpurent oom`'s diagnosis when it failed with an
// out-of-memory report in its log (stderr, for the server's card), brings the records in line
// and carries out the --then steps (settle_jobs), shows the job (`show_json` under --json, a
// line on stderr otherwise). Returns the exit code: 4 when a --then step failed, 1 when the job
// failed or was lost, else 0.
[[nodiscard]] Result<int> finish_followed_job(Services& s, const JobServer& server, std::unique_ptr<SshSession>& session,
                                              const std::string& job_id, const std::function<void(const JobRecord&)>& show_json);

}  // namespace gpurent
