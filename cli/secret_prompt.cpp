// SPDX-License-Identifier: MIT
#include "cli/secret_prompt.hpp"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <istream>
#include <ostream>

namespace gpurent {
namespace {

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGHUP};

// What the handlers restore: the terminal as it was before the prompt, and the signals' actions.
struct termios g_saved_termios {};
struct sigaction g_old_actions[3] {};
volatile sig_atomic_t g_echo_off = 0;

extern "C" void restore_echo_and_reraise(int sig)
{
  if (g_echo_off != 0) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved_termios);
  }
  for (std::size_t i = 0; i < 3; ++i) {
    if (k_signals[i] == sig) {
      ::sigaction(sig, &g_old_actions[i], nullptr);  // what it did before (by default: end the process)
    }
  }
  ::raise(sig);
}

// Echo off for its lifetime, with handlers that turn it back on if a signal ends the process.
class EchoOff {
public:
  EchoOff()
  {
    if (::tcgetattr(STDIN_FILENO, &g_saved_termios) != 0) {
      return;
    }
    struct sigaction sa {};
    sa.sa_handler = restore_echo_and_reraise;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < 3; ++i) {
      ::sigaction(k_signals[i], &sa, &g_old_actions[i]);
    }
    m_handlers = true;
    struct termios quiet = g_saved_termios;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= static_cast<tcflag_t>(ECHONL);
    g_echo_off = 1;
    m_active = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
    if (!m_active) {
      g_echo_off = 0;
    }
  }
  ~EchoOff()
  {
    if (m_active) {
      ::tcsetattr(STDIN_FILENO, TCSANOW, &g_saved_termios);
      g_echo_off = 0;
    }
    if (m_handlers) {
      for (std::size_t i = 0; i < 3; ++i) {
        ::sigaction(k_signals[i], &g_old_actions[i], nullptr);
      }
    }
  }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;
  [[nodiscard]] bool active() const { return m_active; }

private:
  bool m_active = false;
  bool m_handlers = false;
};

}  // namespace

Result<std::string> read_value_line(std::istream& in, std::string_view what)
{
  std::string line;
  if (!std::getline(in, line) && line.empty()) {
    return fail(Errc::usage, std::string(what) + ": nothing on standard input; pipe the value in, e.g. `… < FILE`");
  }
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  return line;
}

Result<std::string> read_hidden_line(std::istream& in, std::ostream& err, std::string_view prompt, std::string_view what)
{
  EchoOff quiet;  // before the prompt: once it shows, nothing typed is echoed
  if (!quiet.active()) {
    return fail(Errc::usage, std::string(what) + ": cannot turn the terminal's echo off to ask; give the value on "
                                                 "standard input with `-`");
  }
  err << prompt << std::flush;
  return read_value_line(in, what);
}

}  // namespace gpurent
