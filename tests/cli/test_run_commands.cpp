// SPDX-License-Identifier: MIT
// push / run / logs / jobs on the command line: the mistakes caught before any connection is
// made (usage errors exit 2, a release step for a server gpurent did not rent exits 3), and
// repeatable flags that never swallow NAME or the command. Their work against a real sshd is
// in tests/e2e/test_run.sh and tests/sync/test_push.cpp.
#include <catch2/catch.hpp>

#include "cli/cli_harness.hpp"

namespace {
// SSH options need a state directory to name gpurent's known-hosts file (nothing is written).
gpurent::test::CliRun run_cli(const std::vector<std::string>& args)
{
  return gpurent::test::run_cli(args, {{"GPURENT_STATE_DIR", "/nonexistent/gpurent-test-state"}});
}
}  // namespace

TEST_CASE("run: the command, the steps and the environment are checked before connecting", "[cli][run]")
{
  auto r = run_cli({"run", "--host", "root@192.0.2.1:22"});
  CHECK(r.code == 2);
  CHECK(r.err.find("give the command after --") != std::string::npos);

  r = run_cli({"run", "--host", "root@192.0.2.1:22", "--then", "backup", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown step") != std::string::npos);

  r = run_cli({"run", "--host", "root@192.0.2.1:22", "--then", "backup:", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err.find("give the remote path") != std::string::npos);

  r = run_cli({"run", "--host", "root@192.0.2.1:22", "--then", "down:destroy", "--", "true"});
  CHECK(r.code == 3);  // a server gpurent did not rent is released in the provider's console
  CHECK(r.err.find("not rented with `gpurent up`") != std::string::npos);

  r = run_cli({"run", "--host", "root@192.0.2.1:22", "--env", "NOEQUALS", "--", "true"});
  CHECK(r.code == 2);
  CHECK(r.err.find("NAME=VALUE") != std::string::npos);

  // One value per --then / --env / --exclude: NAME is still NAME (then the state store is
  // asked for it, which this harness does not have).
  r = run_cli({"run", "--then", "backup:out", "--env", "A=1", "--exclude", "*.log", "box", "--", "python", "train.py"});
  CHECK(r.code == 1);
  CHECK(r.err.find("state store is not available") != std::string::npos);
  CHECK(r.err.find("which server?") == std::string::npos);
}

TEST_CASE("push, logs, jobs: positionals and job ids", "[cli][run]")
{
  auto r = run_cli({"push", "--host", "root@192.0.2.1:22", "a", "b"});
  CHECK(r.code == 2);
  CHECK(r.err.find("one local directory") != std::string::npos);
  r = run_cli({"logs", "--host", "root@192.0.2.1:22", "j1", "j2"});
  CHECK(r.code == 2);
  r = run_cli({"push"});
  CHECK(r.code == 2);
  CHECK(r.err.find("which server?") != std::string::npos);
  r = run_cli({"jobs"});
  CHECK(r.code == 2);
}
