// SPDX-License-Identifier: MIT
// Server groups: which servers a group NAME means, the environment each node's job gets, a
// command run on every member (one JSON document, the exit code that says whether all, some or
// none of them worked), and the group flags' usage errors. Against real servers:
// tests/e2e/test_group.sh (two sshd nodes, torchrun) and tests/e2e/test_group_up_e2e.py (up, down).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_harness.hpp"
#include "cli/group_support.hpp"
#include "cli/services.hpp"

using namespace gpurent;

namespace {

ServerRecord member(std::string name, std::string group, std::uint32_t rank, ServerStatus status = ServerStatus::running)
{
  ServerRecord r;
  r.name = std::move(name);
  r.group = std::move(group);
  r.group_rank = rank;
  r.status = status;
  return r;
}

}  // namespace

TEST_CASE("group_of: the open members of a group, in rank order", "[cli][group]")
{
  const std::vector<ServerRecord> servers{member("b", "pair", 1), member("solo", "", 0), member("a", "pair", 0),
                                          member("old", "pair", 2, ServerStatus::destroyed), member("x", "other", 0)};
  const auto g = group_of(servers, "pair");
  REQUIRE(g);
  REQUIRE(g->members.size() == 2);
  CHECK(g->members[0].name == "a");
  CHECK(g->members[1].name == "b");
  CHECK_FALSE(group_of(servers, "solo"));  // a server's name is not a group
  CHECK_FALSE(group_of(servers, ""));      // servers outside a group are no group
  CHECK_FALSE(group_of(servers, "none"));
  CHECK(next_group_rank(servers, "pair") == 2);  // one past the highest open member's
  CHECK(next_group_rank(servers, "new") == 0);
  CHECK(check_group_name(servers, "new"));
  CHECK(check_group_name(servers, "solo").error().code == Errc::refused);  // a server has that name
  CHECK(member_at(*g, 1).value()->name == "b");
  const auto missing = member_at(*g, 2);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::usage);
  CHECK(missing.error().message == "--node 2: group pair has no node 2 (its nodes: 0, 1)");
}

TEST_CASE("node_environment: rank, size, addresses and the names torchrun and DeepSpeed read", "[cli][group]")
{
  const auto env = node_environment({"10.0.0.5", "10.0.0.6", "10.0.0.7"}, 2, "10.0.0.5", 29500);
  const std::map<std::string, std::string> got(env.begin(), env.end());
  CHECK(got.size() == env.size());  // each name once
  CHECK(got.at("GPURENT_NODE_RANK") == "2");
  CHECK(got.at("GPURENT_NUM_NODES") == "3");
  CHECK(got.at("GPURENT_NODE_IPS") == "10.0.0.5\n10.0.0.6\n10.0.0.7");
  CHECK(got.at("MASTER_ADDR") == "10.0.0.5");
  CHECK(got.at("MASTER_PORT") == "29500");
  CHECK(got.at("NODE_RANK") == "2");
  CHECK(got.at("NNODES") == "3");
  // torchrun's own defaults for --node-rank, --nnodes, --master-addr, --master-port (PET_<dest>).
  CHECK(got.at("PET_NODE_RANK") == "2");
  CHECK(got.at("PET_NNODES") == "3");
  CHECK(got.at("PET_MASTER_ADDR") == "10.0.0.5");
  CHECK(got.at("PET_MASTER_PORT") == "29500");
}

TEST_CASE("for_each_member: one document, and an exit code for all, some or none", "[cli][group]")
{
  ServerGroup g{"pair", {member("a", "pair", 0), member("b", "pair", 1)}};
  test::FakeClock clock;
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  Services s{out, err, in, {}, clock};
  s.global.json = true;
  std::vector<std::string> seen;

  SECTION("every member worked: 0, each member's own document under result")
  {
    const int code = for_each_member(s, g, std::nullopt, [&](Services& ms, const ServerRecord& m) {
      seen.push_back(m.name);
      ms.out << nlohmann::json{{"name", m.name}}.dump() << '\n';
      return 0;
    });
    CHECK(code == 0);
    CHECK(seen == std::vector<std::string>{"a", "b"});
    const auto doc = nlohmann::json::parse(out.str());
    CHECK(doc["group"] == "pair");
    CHECK(doc["members"][1]["node"] == 1);
    CHECK(doc["members"][1]["result"]["name"] == "b");
    CHECK_FALSE(doc.contains("error"));
  }
  SECTION("one failed: 4 (partial), an error naming it; its own error is in its result")
  {
    const int code = for_each_member(s, g, std::nullopt, [&](Services& ms, const ServerRecord& m) {
      return m.name == "b" ? report_error(ms, Error{Errc::refused, "no"}) : 0;
    });
    CHECK(code == 4);
    const auto doc = nlohmann::json::parse(out.str());
    CHECK(doc["error"]["code"] == "partial");
    CHECK(doc["error"]["message"] == "group pair: b (exit 3)");
    CHECK(doc["members"][1]["exit_code"] == 3);
    CHECK(doc["members"][1]["result"]["error"]["message"] == "no");
  }
  SECTION("all failed alike: that code")
  {
    CHECK(for_each_member(s, g, std::nullopt, [](Services&, const ServerRecord&) { return 3; }) == 3);
  }
  SECTION("only one node")
  {
    CHECK(for_each_member(s, g, 1u, [&](Services&, const ServerRecord& m) {
            seen.push_back(m.name);
            return 0;
          }) == 0);
    CHECK(seen == std::vector<std::string>{"b"});
  }
  SECTION("after a signal the rest is not reached, and said so")
  {
    s.caught_signal = [] { return 2; };
    CHECK(for_each_member(s, g, std::nullopt, [&](Services&, const ServerRecord&) { return 0; }) == 4);
    CHECK(err.str().find("not reached after the signal: a, b") != std::string::npos);
  }
}

TEST_CASE("group flags: usage errors before anything is asked of a provider or a server", "[cli][group]")
{
  const std::map<std::string, std::string> env{{"GPURENT_STATE_DIR", "/nonexistent/gpurent-test-state"}};
  auto r = test::run_cli({"up", "--provider", "runpod", "--card", "rtx-4090", "--nodes", "2"}, env);
  CHECK(r.code == 2);
  CHECK(r.err.find("needs --group NAME") != std::string::npos);
  r = test::run_cli({"up", "--provider", "runpod", "--card", "rtx-4090", "--nodes", "65", "--group", "g"}, env);
  CHECK(r.code == 2);
  r = test::run_cli({"up", "--provider", "runpod", "--card", "rtx-4090", "--group", "g", "--name", "x"}, env);
  CHECK(r.code == 2);
  CHECK(r.err.find("give only --group") != std::string::npos);
  r = test::run_cli({"logs", "--host", "root@192.0.2.1:22", "--node", "1"}, env);
  CHECK(r.code == 2);
  CHECK(r.err.find("--node is for a server group") != std::string::npos);
  r = test::run_cli({"--json", "backup", "--host", "root@192.0.2.1:22", "--node", "0", "/x"}, env);
  CHECK(r.code == 2);
  CHECK(nlohmann::json::parse(r.out)["error"]["code"] == "usage");
  r = test::run_cli({"run", "--host", "root@192.0.2.1:22", "--master-port", "0", "--", "true"}, env);
  CHECK(r.code == 2);
}
