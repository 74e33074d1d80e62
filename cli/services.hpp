// SPDX-License-Identifier: MIT
#pragma once
// What a command may touch. Only cli/main.cpp builds the real ones; tests build fakes.
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/clock.hpp"
#include "common/http_client.hpp"
#include "common/result.hpp"

namespace gpurent {

class StateStore;  // providers/state_store.hpp
struct SshTarget;  // sync/transport.hpp
struct SshOptions;
class SshSession;

struct GlobalOptions {
  bool json = false;
  bool no_color = false;
  bool yes = false;
  bool verbose = false;
  bool insecure_http = false;  // --insecure-http: credentials may go over plain HTTP to another machine
};

struct Services {
  Services(std::ostream& out_, std::ostream& err_, std::istream& in_, std::map<std::string, std::string> env_, Clock& clock_)
      : out(out_), err(err_), in(in_), env(std::move(env_)), clock(clock_)
  {
  }

  std::ostream& out;  // results only (text view or exactly one JSON document)
  std::ostream& err;  // logs, warnings, progress, errors
  std::istream& in;
  std::map<std::string, std::string> env;  // the process environment, passed in (no getenv below cli/)
  Clock& clock;
  bool stdout_tty = false;
  bool stderr_tty = false;
  bool stdin_tty = false;
  GlobalOptions global;
  int exit_code = 0;
  // The command being run ("plan", "config set"): error hints point to its --help.
  std::string command;
  // Under --json (cli/errors.cpp): the end of the command's document ("}\n") is held back until
  // the command ends, so that an error reported meanwhile joins that document as its "error"
  // key (or is the document when nothing was printed): exactly one document comes out.
  struct JsonOutput {
    bool capturing = false;
    bool wrote = false;     // something other than whitespace went to stdout
    char last = 0;          // the last character written before the held tail
    std::string tail;       // held back: whitespace, '}', whitespace
    std::optional<std::string> error;  // the error object, {"code",…}, as JSON text
  };
  JsonOutput json_output;

  // Ports created on first use. In the binary they come from the IO module (libgpurent_io.so),
  // which is loaded only by commands that need the network, SSH or the state database.
  std::function<Result<HttpClient*>()> http;
  // The state database ($GPURENT_STATE_DIR/state.db …), opened on first use.
  std::function<Result<StateStore*>()> state;
  // Opens an SSH session (sync/ssh_transport.cpp in the IO module); one per call.
  std::function<Result<std::unique_ptr<SshSession>>(const SshTarget&, const SshOptions&)> ssh_connect;
  // Signals (cli/interrupt.hpp). The binary sets handle_signals: an InterruptWatch then installs
  // handlers for SIGINT, SIGTERM and SIGHUP and points caught_signal at what they caught. Tests
  // leave handle_signals off and set caught_signal to make a signal "arrive".
  bool handle_signals = false;
  std::function<int()> caught_signal;
  // The signal caught since the command began watching (0: none).
  [[nodiscard]] int signal_caught() const { return caught_signal ? caught_signal() : 0; }

  [[nodiscard]] std::optional<std::string> getenv(const std::string& key) const
  {
    const auto it = env.find(key);
    if (it == env.end() || it->second.empty()) {
      return std::nullopt;
    }
    return it->second;
  }
  // Colour only on a TTY, without NO_COLOR, without --no-color, not with TERM=dumb, never under --json.
  [[nodiscard]] bool color_out() const { return stdout_tty && !global.json && colour_allowed(); }
  [[nodiscard]] bool color_err() const { return stderr_tty && colour_allowed(); }
  [[nodiscard]] bool colour_allowed() const
  {
    const auto term = env.find("TERM");
    return !global.no_color && !env.contains("NO_COLOR") && (term == env.end() || term->second != "dumb");
  }
  // Whether the locale (LC_ALL, else LC_CTYPE, else LANG) is UTF-8: otherwise text is plain ASCII.
  [[nodiscard]] bool utf8() const;
};

// Prints `gpurent: error: <what failed>: <why>; <what to do>` on stderr (under --json also the
// error document on stdout, cli/errors.cpp) and returns the exit code for the error kind.
int report_error(Services& s, const Error& e);
// Prints `gpurent: warning: <message>` on stderr.
void report_warning(Services& s, std::string_view message);

}  // namespace gpurent
