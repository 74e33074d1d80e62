// SPDX-License-Identifier: MIT
// The second autostop stage after a stop, which gpurent carries out (the stopped server runs no
// watchdog): when it is due, and that it never destroys without the verified backup of this
// arming unless --no-backup was given.
#include <catch2/catch.hpp>

#include "sync/autostop_log.hpp"
#include "sync/autostop_release.hpp"

using namespace gpurent;

namespace {

const std::string k_hash(64, 'a');

AutostopReleaseInput stopped_by_autostop()
{
  AutostopReleaseInput in;
  in.then = "stop";
  in.release_after_s = 3600;
  in.can_stop_billing = true;
  in.armed_at = 1000;
  in.stopped = true;
  in.stopped_at = 5000;
  in.autostop_stop_at = 5000;
  in.backup = AutostopEvent{"backup", 5003, 1, "", true, "sha256=" + k_hash + ":/srv/ckpt/gpurent-autostop-5000.tar"};
  in.now = 5000 + 60;
  return in;
}

}  // namespace

TEST_CASE("the release waits until stopped for --release-after, then destroys", "[autostop]")
{
  auto in = stopped_by_autostop();
  auto d = autostop_release_decision(in);
  CHECK(d.kind == AutostopReleaseKind::wait);
  REQUIRE(d.at);
  CHECK(*d.at == 8600);
  in.now = 8599;
  CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::wait);
  in.now = 8600;
  CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::release);
  in.now = 90000;
  CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::release);
}

TEST_CASE("no verified backup of this arming: no destroy, and why", "[autostop]")
{
  auto in = stopped_by_autostop();
  in.now = 99999;
  SECTION("never seen")
  {
    in.backup.reset();
    const auto d = autostop_release_decision(in);
    CHECK(d.kind == AutostopReleaseKind::refused);
    CHECK(d.why.find("has not seen a verified backup") != std::string::npos);
  }
  SECTION("failed")
  {
    in.backup->ok = false;
    in.backup->detail = "hash-mismatch-or-copy-failed";
    const auto d = autostop_release_decision(in);
    CHECK(d.kind == AutostopReleaseKind::refused);
    CHECK(d.why.find("failed (hash-mismatch-or-copy-failed)") != std::string::npos);
  }
  SECTION("of an earlier arming")
  {
    in.backup->at = 999;
    CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::refused);
  }
  SECTION("ok but without a hash and file")
  {
    in.backup->detail = "no-backup-given";
    CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::refused);
    in.backup->detail = "sha256=" + std::string(63, 'a') + ":/f.tar";
    CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::refused);
    in.backup->detail = "sha256=" + k_hash + ":";
    CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::refused);
  }
  SECTION("--no-backup given when arming")
  {
    in.backup.reset();
    in.no_backup = true;
    CHECK(autostop_release_decision(in).kind == AutostopReleaseKind::release);
  }
}

TEST_CASE("only autostop's own stop of this arming is released", "[autostop]")
{
  auto in = stopped_by_autostop();
  in.now = 99999;
  SECTION("stopped by someone else") { in.autostop_stop_at.reset(); }
  SECTION("a later stop than autostop's") { in.stopped_at = 7000; }
  SECTION("a stop before this arming") { in.armed_at = 6000; }
  SECTION("not stopped (running again, or already destroyed)") { in.stopped = false; }
  SECTION("no second stage") { in.release_after_s = 0; }
  SECTION("first stage hibernate or destroy") { in.then = "hibernate"; }
  SECTION("the watchdog could not call the provider") { in.can_stop_billing = false; }
  const auto d = autostop_release_decision(in);
  CHECK(d.kind == AutostopReleaseKind::none);
  CHECK_FALSE(d.why.empty());
}

TEST_CASE("a backup before the first-stage stop is logged with stage=1", "[autostop]")
{
  const auto log = parse_autostop_log("start t=10 pid=1 launcher=setsid interval=1 idle=5 then=stop release=60 util=5 api=runpod\n"
                                      "backup t=20 stage=1 result=ok detail=sha256=" + k_hash + ":/b/gpurent-autostop-20.tar\n"
                                      "action t=19 stage=1 do=stop result=ok detail=http-200\n"
                                      "exit t=21 why=stop\n");
  const auto b = autostop_latest_backup(log);
  REQUIRE(b);
  CHECK(b->stage == 1);
  CHECK(b->ok);
  CHECK(autostop_backup_file(*b) == "sha256=" + k_hash + ":/b/gpurent-autostop-20.tar");
  const auto earlier = parse_autostop_log("backup t=5 stage=1 result=ok detail=sha256=" + k_hash + ":/x\nstart t=10\n");
  CHECK_FALSE(autostop_latest_backup(earlier));
}

TEST_CASE("the backup is checked at the target only when it is all the release waits on", "[autostop]")
{
  auto in = stopped_by_autostop();
  in.backup.reset();
  in.backup_to = "me@203.0.113.9:ckpt";
  in.backup_stem = "gpurent-autostop-pod1-1000-";
  in.now = 8600;
  CHECK(autostop_release_wants_target_check(in));
  in.backup = stopped_by_autostop().backup;  // seen in the log: checked at the target all the same
  CHECK(autostop_release_wants_target_check(in));
  SECTION("not due yet") { in.now = 8599; }
  SECTION("--no-backup") { in.no_backup = true; }
  SECTION("no target, or armed before the checksum files") { in.backup_to.clear(); }
  SECTION("no stem") { in.backup_stem.clear(); }
  SECTION("the log shows the watchdog's backup failed") { in.backup->ok = false; }
  SECTION("not autostop's stop") { in.autostop_stop_at.reset(); }
  CHECK_FALSE(autostop_release_wants_target_check(in));
}

TEST_CASE("after the target check: its verified backup releases, anything else refuses with its reason", "[autostop]")
{
  auto in = stopped_by_autostop();
  in.now = 8600;
  const AutostopEvent at_target{"backup", 5001, 1, "", true, "sha256=" + k_hash + ":ckpt/gpurent-autostop-pod1-1000-5001.tar"};
  auto d = autostop_release_after_target_check(in, TargetBackupCheck{at_target, ""});
  CHECK(d.kind == AutostopReleaseKind::release);
  REQUIRE(in.backup);
  CHECK(in.backup->detail == at_target.detail);

  in = stopped_by_autostop();  // the log saw a verified backup; the target no longer has it
  in.now = 8600;
  d = autostop_release_after_target_check(in, TargetBackupCheck{std::nullopt, "the newest backup of this arming, x.tar, is gone"});
  CHECK(d.kind == AutostopReleaseKind::refused);
  CHECK(d.why == "the newest backup of this arming, x.tar, is gone: not destroying");
  CHECK_FALSE(in.backup);
  REQUIRE(d.at);
  CHECK(*d.at == 8600);
}
