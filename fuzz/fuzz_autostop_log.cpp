// SPDX-License-Identifier: MIT
// Fuzz target for the readers of what the autostop watchdog leaves on a server (a server is not
// trusted): its log, its config and the state listing. The first byte picks the reader; the rest
// is the input. Invariants: no crash or sanitizer report; the log reader never fails and yields
// the same result whatever follows a line's end (line by line); a sample the rule calls idle is
// readable, has GPUs and no session or job; the view's next action is one the watchdog can take;
// a logged backup lets the release after a stop destroy only when it is a verified one; what a
// backup target prints for gpurent's check proves a backup only with a 64-hex SHA-256 the tar
// still has and a file of this arming; `--backup-to` yields only a user and host ssh reads as
// names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sync/autostop_log.hpp"
#include "sync/autostop_release.hpp"
#include "sync/autostop_target.hpp"
#include "sync/backup_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const unsigned pick = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (pick % 5) {
  case 0: {
    const auto log = gpurent::parse_autostop_log(text);
    for (const auto& s : log.samples) {
      if (gpurent::autostop_sample_idle(s, pick % 101) &&
          (!s.readable || s.gpus.empty() || !s.sessions || *s.sessions != 0 || s.jobs != 0)) {
        std::abort();
      }
    }
    // Line by line gives the same samples as the whole.
    std::size_t n = 0;
    std::string_view rest = text;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      n += gpurent::parse_autostop_log(rest.substr(0, nl)).samples.size();
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    }
    if (n != log.samples.size()) {
      std::abort();
    }
    (void)gpurent::autostop_billing_action(log);
    // A backup (also one logged before a first-stage stop, stage=1) releases a stopped server
    // only when it is verified: ok, with a 64-hex SHA-256 and a file.
    if (const auto b = gpurent::autostop_latest_backup(log)) {
      gpurent::AutostopReleaseInput in;
      in.then = "stop";
      in.release_after_s = 1;
      in.can_stop_billing = true;
      in.stopped = true;
      in.autostop_stop_at = 0;
      in.backup = *b;
      in.now = 1;
      const auto d = gpurent::autostop_release_decision(in);
      if (d.kind == gpurent::AutostopReleaseKind::release && (!b->ok || gpurent::autostop_backup_file(*b).empty())) {
        std::abort();
      }
    }
    break;
  }
  case 1:
    (void)gpurent::parse_autostop_config(text);
    break;
  case 3: {
    const gpurent::BackupTarget target{"me", "h", 0, "b"};
    const std::string stem = "gpurent-autostop-pod-1-";
    const auto c = gpurent::parse_autostop_target_check(text, target, stem);
    if (c.verified && (gpurent::autostop_backup_file(*c.verified).empty() ||
                       c.verified->detail.find(":b/" + stem) == std::string::npos || !c.why.empty())) {
      std::abort();
    }
    break;
  }
  case 4:
    if (const auto t = gpurent::parse_backup_target(text)) {
      if (t->user.empty() || t->host.empty() || t->user.front() == '-' || t->host.front() == '-' || t->path.empty() ||
          t->user.find_first_of(" ;'\"$`@/") != std::string::npos || t->host.find_first_of(" ;'\"$`@/") != std::string::npos) {
        std::abort();
      }
    }
    break;
  default:
    if (const auto r = gpurent::parse_autostop_state(text)) {
      const auto v = gpurent::autostop_view(*r);
      if (v.next_action != "none" && v.next_action != "stop" && v.next_action != "hibernate" && v.next_action != "destroy" &&
          v.next_action != "mark-idle") {
        std::abort();
      }
    }
    break;
  }
  return 0;
}
