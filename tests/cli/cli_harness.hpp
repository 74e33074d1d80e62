// SPDX-License-Identifier: MIT
#pragma once
// Runs the whole command line (run_app) in-process with captured stdout/stderr, a fake
// environment (no $HOME, no config file unless a test writes one) and a fixed clock.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/services.hpp"
#include "fakes/fake_clock.hpp"

namespace gpurent::test {

struct CliRun {
  int code = 0;
  std::string out;
  std::string err;
};

class CliHarness {
public:
  // No HOME and an XDG config dir that does not exist: no user's config is ever read. A UTF-8
  // locale, as on most terminals (bar charts in block characters).
  std::map<std::string, std::string> env{{"XDG_CONFIG_HOME", "/nonexistent/gpurent-test-config"},
                                         {"XDG_CACHE_HOME", "/nonexistent/gpurent-test-cache"},
                                         {"XDG_STATE_HOME", "/nonexistent/gpurent-test-state"},
                                         {"LANG", "C.UTF-8"}};
  FakeClock clock;
  bool stdout_tty = false;
  bool stderr_tty = false;
  bool stdin_tty = false;
  std::string stdin_text;
  // Called on the Services before the run: installs fake ports (s.state, s.http, s.ssh_connect).
  std::function<void(Services&)> setup;

  CliRun run(const std::vector<std::string>& args)
  {
    std::ostringstream out;
    std::ostringstream err;
    std::istringstream in(stdin_text);
    Services s{out, err, in, env, clock};
    s.stdout_tty = stdout_tty;
    s.stderr_tty = stderr_tty;
    s.stdin_tty = stdin_tty;
    if (setup) {
      setup(s);
    }
    CliRun r;
    r.code = run_app(args, s);
    r.out = out.str();
    r.err = err.str();
    return r;
  }
};

// One run with exactly this environment (empty: no HOME, no XDG dirs) and no terminal.
inline CliRun run_cli(const std::vector<std::string>& args, std::map<std::string, std::string> env = {})
{
  CliHarness h;
  h.env = std::move(env);
  return h.run(args);
}

// `gpurent plan ARGS` twice, as text and with --json: the exit codes must agree.
struct PlanRun {
  int code = 0;
  nlohmann::json j;  // the --json document
  std::string text;  // the text view's stdout
  std::string err;   // the text view's stderr
};

inline PlanRun run_plan(std::vector<std::string> args, const std::map<std::string, std::string>& extra_env = {})
{
  CliHarness h;
  for (const auto& [k, v] : extra_env) {
    h.env[k] = v;
  }
  args.insert(args.begin(), "plan");
  const auto text = h.run(args);
  args.push_back("--json");
  const auto json = h.run(args);
  REQUIRE(text.code == json.code);
  return PlanRun{json.code, nlohmann::json::parse(json.out), text.out, text.err};
}

// `gpurent plan ARGS` on a fixed market: RunPod's former built-in prices as the whole market of one
// provider with no prices of its own (tests/data/markets/fixed_2026-03-10.toml, --provider
// cloudgpu). For tests of a ranking rule, which the market snapshot's prices must not decide.
inline PlanRun run_plan_fixed(std::vector<std::string> args, std::map<std::string, std::string> extra_env = {})
{
  args.insert(args.end(), {"--provider", "cloudgpu"});
  extra_env["GPURENT_CONFIG"] = std::string(GPURENT_TEST_DATA) + "/markets/fixed_2026-03-10.toml";
  return run_plan(std::move(args), extra_env);
}

// Compares `actual` with tests/data/golden/<name>; GPURENT_UPDATE_GOLDEN=1 rewrites the file
// instead (and the check then passes). A missing file fails.
inline void check_golden(const std::string& name, const std::string& actual)
{
  const std::string path = std::string(GPURENT_TEST_DATA) + "/golden/" + name;
  const char* update = std::getenv("GPURENT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << actual;
    REQUIRE(f.good());
    WARN("rewrote golden file " << path);
    return;
  }
  std::ifstream f(path, std::ios::binary);
  INFO("golden file " << path << " (rerun with GPURENT_UPDATE_GOLDEN=1 to rewrite it)");
  REQUIRE(f.good());
  std::ostringstream expected;
  expected << f.rdbuf();
  CHECK(actual == expected.str());
}

// Whitespace (the text view's line wrapping) does not count.
inline std::string squeezed(const std::string& s)
{
  std::string out;
  for (const char c : s) {
    if (c == ' ' || c == '\n') {
      if (!out.empty() && out.back() != ' ') {
        out += ' ';
      }
    } else {
      out += c;
    }
  }
  return out;
}

// `needle` appears in `hay` however the text view wrapped it.
inline bool has(const std::string& hay, const std::string& needle) { return squeezed(hay).find(needle) != std::string::npos; }

}  // namespace gpurent::test
