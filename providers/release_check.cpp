// SPDX-License-Identifier: MIT
#include "providers/release_check.hpp"

#include "common/clock.hpp"

namespace gpurent {

ReleaseVerdict release_verdict(SshProbe probe, std::optional<std::chrono::system_clock::time_point> unreachable_since,
                               std::chrono::system_clock::time_point now, std::chrono::seconds gap)
{
  ReleaseVerdict v;
  switch (probe) {
  case SshProbe::answered:
    v.why = "the host still answers SSH";
    return v;
  case SshProbe::other_host_key:
    v.released = true;
    v.why = "its address now presents another host key";
    return v;
  case SshProbe::unreachable: break;
  }
  if (!unreachable_since || *unreachable_since > now) {
    v.unreachable_since = now;
    v.why = "SSH unreachable once (" + utc_iso8601(now) + "); a second failed check " +
            std::to_string(gap.count()) + " s or more later confirms the release";
    return v;
  }
  v.unreachable_since = unreachable_since;
  if (now - *unreachable_since < gap) {
    v.why = "SSH unreachable since " + utc_iso8601(*unreachable_since) + ", less than " + std::to_string(gap.count()) +
            " s ago; check again later";
    return v;
  }
  v.released = true;
  v.why = "SSH unreachable at " + utc_iso8601(*unreachable_since) + " and at " + utc_iso8601(now);
  return v;
}

}  // namespace gpurent
