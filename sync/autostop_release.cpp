// SPDX-License-Identifier: MIT
#include "sync/autostop_release.hpp"

namespace gpurent {
namespace {

bool backup_failed_in_log(const AutostopReleaseInput& in)
{
  return in.backup && in.backup->at >= in.armed_at && !in.backup->ok;
}

}  // namespace

AutostopRelease autostop_release_decision(const AutostopReleaseInput& in)
{
  AutostopRelease r;
  if (in.release_after_s <= 0 || in.then != "stop") {
    r.why = "no release stage after a stop was armed";
    return r;
  }
  if (!in.can_stop_billing) {
    r.why = "the watchdog cannot call the provider here, so it never stops the server";
    return r;
  }
  if (!in.stopped) {
    r.why = "the server is not stopped";
    return r;
  }
  // The stop must be autostop's, of this arming, and the one the ledger holds (a later stop or
  // start by hand is the user's business: no release without their word).
  if (!in.autostop_stop_at || *in.autostop_stop_at < in.armed_at || *in.autostop_stop_at != in.stopped_at) {
    r.why = "stopped, but not by autostop as far as gpurent knows: no release";
    return r;
  }
  r.at = in.stopped_at + in.release_after_s;
  if (!in.no_backup) {
    const auto& b = in.backup;
    // Logged at its end, so after the stop's sample time: any verified one of this arming.
    const bool verified = b && b->ok && b->at >= in.armed_at && !autostop_backup_file(*b).empty();
    if (!verified) {
      r.kind = AutostopReleaseKind::refused;
      if (backup_failed_in_log(in)) {
        r.why = "the watchdog's backup before the stop failed (" + b->detail + "): not destroying";
      } else {
        r.why = "gpurent has not seen a verified backup from the watchdog before the stop (it reads the watchdog's log "
                "only while the server runs): not destroying";
      }
      return r;
    }
  }
  r.kind = in.now >= *r.at ? AutostopReleaseKind::release : AutostopReleaseKind::wait;
  return r;
}

bool autostop_release_wants_target_check(const AutostopReleaseInput& in)
{
  if (in.no_backup || in.backup_to.empty() || in.backup_stem.empty() || backup_failed_in_log(in)) {
    return false;
  }
  auto as_if_no_backup = in;
  as_if_no_backup.no_backup = true;
  return autostop_release_decision(as_if_no_backup).kind == AutostopReleaseKind::release;
}

AutostopRelease autostop_release_after_target_check(AutostopReleaseInput& in, const TargetBackupCheck& check)
{
  in.backup = check.verified;
  AutostopRelease d = autostop_release_decision(in);
  if (!check.verified) {
    d.kind = AutostopReleaseKind::refused;
    d.why = check.why + ": not destroying";
  }
  return d;
}

std::string autostop_backup_file(const AutostopEvent& backup)
{
  const std::string_view d = backup.detail;
  if (backup.kind != "backup" || !backup.ok || !d.starts_with("sha256=")) {
    return {};
  }
  const auto colon = d.find(':');
  const auto hex = d.substr(7, colon == std::string_view::npos ? std::string_view::npos : colon - 7);
  if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string_view::npos || colon == std::string_view::npos ||
      colon + 1 == d.size()) {
    return {};
  }
  return std::string(d);
}

}  // namespace gpurent
