// SPDX-License-Identifier: MIT
#pragma once
// Ctrl-C, SIGTERM and SIGHUP while a command holds something billable or a half-done transfer
// (`up`, `down`, `backup`). The first signal sets a flag that the command's waits and copies look
// at (Services::signal_caught): they stop at the next safe point, and the command brings its
// record up to date and says what still bills, at what rate, and the command that releases or
// resumes it. A second signal ends the process at once (exit 4) after printing the command's
// `last words`, which it keeps true as it goes; the records are written ahead of every step,
// so they never claim less than the truth.
#include <signal.h>

#include <functional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

struct Services;

class InterruptWatch {
public:
  // Installs the handlers when s.handle_signals (the binary); otherwise (tests) leaves
  // s.caught_signal as the test set it.
  explicit InterruptWatch(Services& s);
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // What a second signal prints on stderr before the process exits (cut at 1000 bytes).
  void set_last_words(std::string_view text);

private:
  Services& m_s;
  bool m_installed = false;
  std::function<int()> m_saved;
  struct sigaction m_old[3] {};
};

// "SIGINT", "SIGTERM", "SIGHUP" or "a signal".
[[nodiscard]] std::string_view signal_name(int sig) noexcept;
// The name of the signal the command caught, for its message ("interrupted" when none: a wait
// that stopped for another reason said it was interrupted).
[[nodiscard]] std::string caught_signal_name(const Services& s);
// What an interrupted step was doing: its message without the leading "interrupted: ".
[[nodiscard]] std::string interrupted_step(const Error& e);

}  // namespace gpurent
