// SPDX-License-Identifier: MIT
// Job ids as the user gives them (cli/job_ids.hpp): whole, a prefix, a suffix, a number.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "cli/job_ids.hpp"

using gpurent::Errc;
using gpurent::number_jobs;
using gpurent::resolve_job_ref;
using gpurent::node_job_id;
using gpurent::group_job_id;
using gpurent::other_nodes_job;

namespace {
const std::vector<std::string> k_jobs = {"20261130-101500-3fa9", "20261130-111500-358a", "20261201-090000-c0de"};
}

TEST_CASE("number_jobs: start order, ties by id, each id once", "[cli][job-ids]")
{
  CHECK(number_jobs({{"b", 20}, {"a", 30}, {"c", 10}}) == std::vector<std::string>{"c", "b", "a"});
  CHECK(number_jobs({{"y", 5}, {"x", 5}}) == std::vector<std::string>{"x", "y"});
  CHECK(number_jobs({{"x", 5}, {"x", 5}, {"z", 1}}) == std::vector<std::string>{"z", "x"});
  CHECK(number_jobs({}).empty());
  CHECK(gpurent::job_number_of(k_jobs, "20261130-111500-358a") == 2);
  CHECK_FALSE(gpurent::job_number_of(k_jobs, "nope"));
}

TEST_CASE("resolve_job_ref: the whole id, a unique prefix or suffix", "[cli][job-ids]")
{
  CHECK(resolve_job_ref("20261130-111500-358a", k_jobs, "box") == "20261130-111500-358a");
  CHECK(resolve_job_ref("358a", k_jobs, "box") == "20261130-111500-358a");  // #45: `logs train1 358a`
  CHECK(resolve_job_ref("c0de", k_jobs, "box") == "20261201-090000-c0de");
  CHECK(resolve_job_ref("20261201", k_jobs, "box") == "20261201-090000-c0de");
  CHECK(resolve_job_ref("20261130-10", k_jobs, "box") == "20261130-101500-3fa9");
  CHECK(resolve_job_ref("a", k_jobs, "box") == "20261130-111500-358a");  // ends only that one
}

TEST_CASE("resolve_job_ref: #N and plain N within the count are numbers", "[cli][job-ids]")
{
  CHECK(resolve_job_ref("#1", k_jobs, "box") == "20261130-101500-3fa9");
  CHECK(resolve_job_ref("#3", k_jobs, "box") == "20261201-090000-c0de");
  CHECK(resolve_job_ref("2", k_jobs, "box") == "20261130-111500-358a");
  // Digits past the count are a part of an id: "2026" starts all three (ambiguous), "9" ends one.
  CHECK(resolve_job_ref("9", k_jobs, "box") == "20261130-101500-3fa9");
  const auto four = resolve_job_ref("#4", k_jobs, "box");
  REQUIRE_FALSE(four);
  CHECK(four.error().code == Errc::not_found);
  CHECK(four.error().message.find("has 3 on record") != std::string::npos);
  CHECK(resolve_job_ref("#0", k_jobs, "box").error().code == Errc::not_found);
  CHECK(resolve_job_ref("#x", k_jobs, "box").error().code == Errc::usage);
  CHECK(resolve_job_ref("#", k_jobs, "box").error().code == Errc::usage);
}

TEST_CASE("resolve_job_ref: an ambiguous part lists the candidates, none is not found", "[cli][job-ids]")
{
  const auto amb = resolve_job_ref("20261130", k_jobs, "box");
  REQUIRE_FALSE(amb);
  CHECK(amb.error().code == Errc::usage);
  CHECK(amb.error().message ==
        "'20261130' matches 2 jobs on box (#1 20261130-101500-3fa9, #2 20261130-111500-358a); give more of the id, or its number");
  const auto none = resolve_job_ref("beef", k_jobs, "box");
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::not_found);
  CHECK(none.error().message == "box has no job beef; see `gpurent jobs box`");
  CHECK(resolve_job_ref("", k_jobs, "box").error().code == Errc::usage);
  CHECK(resolve_job_ref("a/b", k_jobs, "box").error().code == Errc::usage);
  CHECK(resolve_job_ref("1", {}, "box").error().code == Errc::not_found);
}

TEST_CASE("resolve_job_ref: any input either names one of the jobs or is a usage/not-found error", "[cli][job-ids][property]")
{
  // Property: over random refs (job-id characters, '#', digits, bytes that are not), an answer
  // is always one of the ids, and it starts or ends with the ref, is the ref, or is the job of
  // the number the ref writes.
  std::mt19937 rng(45);
  const std::string alphabet = "0123456789abcdef-#_.x/ \n";
  for (int round = 0; round < 5000; ++round) {
    std::string ref;
    const auto len = rng() % 8;
    for (std::uint32_t i = 0; i < len; ++i) {
      ref.push_back(alphabet[rng() % alphabet.size()]);
    }
    const auto r = resolve_job_ref(ref, k_jobs, "box");
    if (!r) {
      CHECK((r.error().code == Errc::usage || r.error().code == Errc::not_found));
      continue;
    }
    INFO("ref '" << ref << "' -> " << *r);
    REQUIRE(std::find(k_jobs.begin(), k_jobs.end(), *r) != k_jobs.end());
    const std::string digits = ref.starts_with('#') ? ref.substr(1) : ref;
    const bool by_number = !digits.empty() && digits.size() < 4 &&
                           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                           std::stoul(digits) >= 1 && std::stoul(digits) <= k_jobs.size() && k_jobs[std::stoul(digits) - 1] == *r;
    CHECK((r->starts_with(ref) || r->ends_with(ref) || by_number));
  }
}

TEST_CASE("group job ids: each node's is the group's id and its rank", "[cli][job-ids]")
{
  CHECK(node_job_id("20261205-101500-ab12", 0) == "20261205-101500-ab12-r0");
  CHECK(node_job_id("20261205-101500-ab12", 11) == "20261205-101500-ab12-r11");
  CHECK(group_job_id("20261205-101500-ab12-r11") == "20261205-101500-ab12");
  CHECK(group_job_id("20261205-101500-ab12") == "20261205-101500-ab12");  // a one-server job
  CHECK(group_job_id("a-r") == "a-r");
  CHECK(group_job_id("a-rx1") == "a-rx1");
  // A shared home holds every node's part: node 1 leaves out node 0's, keeps its own and the rest.
  CHECK(other_nodes_job("20261205-101500-ab12-r0", 1));
  CHECK_FALSE(other_nodes_job("20261205-101500-ab12-r1", 1));
  CHECK_FALSE(other_nodes_job("20261205-101500-ab12", 1));
  for (std::uint32_t rank = 0; rank < 64; ++rank) {
    const std::string id = node_job_id("20261205-101500-ab12", rank);
    CHECK(group_job_id(id) == "20261205-101500-ab12");
    CHECK_FALSE(other_nodes_job(id, rank));
    CHECK(other_nodes_job(id, rank + 1));
  }
}
