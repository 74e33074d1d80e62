// SPDX-License-Identifier: MIT
// Property tests for the provider answers this change reads (RunPod pods and lastStatusChange,
// Lambda instances, Vast instance pages and SSH keys): mutated and truncated answers never crash,
// and what comes out stays within bounds (a known trouble word, non-negative money, an exit code
// only when the text names one).
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>

#include "fakes/fake_http_client.hpp"
#include "providers/lambda/lambda_api.hpp"
#include "providers/runpod/runpod_api.hpp"
#include "providers/vast/vast_api.hpp"

using namespace gpurent;
using gpurent::test::read_fixture;

namespace {

std::string mutate(std::string s, std::mt19937& rng)
{
  static const std::string k_bytes = "{}[]\":,0123456789.-e nulltruefalse\\\x01\xff";
  std::uniform_int_distribution<int> op(0, 3);
  const int edits = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    const std::size_t at = rng() % s.size();
    switch (op(rng)) {
    case 0: s[at] = k_bytes[rng() % k_bytes.size()]; break;
    case 1: s.erase(at, 1 + rng() % 8); break;
    case 2: s.insert(at, 1, k_bytes[rng() % k_bytes.size()]); break;
    default: s.resize(at); break;
    }
  }
  return s;
}

const std::set<std::string> k_troubles{"", "unhealthy", "preempted", "crashed", "offline", "frozen", "unknown"};

void check_instance(const Instance& in)
{
  CHECK(k_troubles.contains(in.trouble));
  CHECK(in.price_per_hour.n >= 0);
  CHECK(in.storage_per_hour.n >= 0);
  CHECK(in.trouble.empty() == in.trouble_detail.empty());
}

}  // namespace

TEST_CASE("Provider parsers: mutated answers never crash and stay in bounds", "[providers][property]")
{
  std::mt19937 rng(20261201);
  const std::string pods = read_fixture("runpod/pods.json");
  const std::string lambda_list = read_fixture("lambda/instances.json");
  const std::string vast_page = read_fixture("vast/instances_v1_page1.json");
  const std::string vast_keys = read_fixture("vast/ssh_keys.json");
  for (int i = 0; i < 3000; ++i) {
    if (auto r = runpod::parse_pods(mutate(pods, rng))) {
      for (const auto& in : *r) {
        check_instance(in);
      }
    }
    if (auto r = lambda::parse_instances(mutate(lambda_list, rng))) {
      for (const auto& in : *r) {
        check_instance(in);
      }
    }
    if (auto r = vast::parse_instance_page(mutate(vast_page, rng))) {
      for (const auto& in : r->instances) {
        check_instance(in);
      }
    }
    (void)vast::parse_ssh_keys(mutate(vast_keys, rng));
  }
}

TEST_CASE("exit_code_in: a code only after an 'exit' word, within the digits given", "[providers][property]")
{
  std::mt19937 rng(7);
  const std::string texts[] = {"Exited: container exit code 1", "exited with code: 137", "Rented by User: Fri Jul 12 2024"};
  for (int i = 0; i < 5000; ++i) {
    const std::string t = mutate(texts[rng() % 3], rng);
    const auto code = runpod::exit_code_in(t);
    if (code) {
      const std::string lower = [&] {
        std::string l = t;
        for (auto& c : l) {
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        return l;
      }();
      CHECK(lower.find("exit") != std::string::npos);
      CHECK(lower.find("code") != std::string::npos);
      CHECK(*code > -1'000'000);
      CHECK(*code < 1'000'000);
    }
  }
}
