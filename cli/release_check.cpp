// SPDX-License-Identifier: MIT
#include "cli/release_check.hpp"

#include <ostream>

#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "sync/transport.hpp"

namespace gpurent {
namespace {

SshProbe probe_host(Services& s, const ServerRecord& rec)
{
  const SshFlags none;
  auto options = make_ssh_options(s, none);
  if (!options) {
    return SshProbe::answered;  // no verdict without SSH settings
  }
  apply_remembered(s, *options, none, rec);
  options->connect_timeout = std::chrono::seconds{10};
  auto session = connect_ssh(s, SshTarget{rec.user, rec.host, rec.port}, *options);
  if (session) {
    return SshProbe::answered;
  }
  const Error& e = session.error();
  if (e.code == Errc::unavailable || e.code == Errc::timeout) {
    return SshProbe::unreachable;
  }
  // The transport refuses a key other than the recorded one with this wording (ssh_transport.cpp).
  if (e.code == Errc::refused && e.message.find("CHANGED") != std::string::npos) {
    return SshProbe::other_host_key;
  }
  return SshProbe::answered;  // it answered SSH (e.g. the key was refused): still there
}

}  // namespace

Result<ReleaseVerdict> check_release(Services& s, StateStore& store, ServerRecord& rec)
{
  const auto now = s.clock.now();
  ReleaseVerdict v = release_verdict(probe_host(s, rec), rec.unreachable_since, now);
  if (v.released) {
    TRY(store.record_state(rec.id, ServerStatus::destroyed, now, "release confirmed: " + v.why));
    rec.status = ServerStatus::destroyed;
    s.err << "gpurent: " << rec.name << ": released (" << v.why << "); the ledger is closed\n";
    return v;
  }
  if (v.unreachable_since != rec.unreachable_since) {
    TRY(store.set_unreachable_since(rec.id, v.unreachable_since));
    rec.unreachable_since = v.unreachable_since;
  }
  s.err << "gpurent: " << rec.name << ": release pending (" << v.why << ")\n";
  return v;
}

}  // namespace gpurent
