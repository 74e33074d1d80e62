// SPDX-License-Identifier: MIT
#include "cli/interrupt.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "cli/services.hpp"

namespace gpurent {
namespace {

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGHUP};
constexpr std::size_t k_words_max = 1000;

volatile std::sig_atomic_t g_caught = 0;
char g_words[k_words_max + 1] = {};
volatile std::sig_atomic_t g_words_len = 0;

void write_all(const char* text, std::size_t n)
{
  while (n > 0) {
    const auto w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) {
      return;
    }
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Async-signal-safe: write(2) and _exit(2) only.
extern "C" void on_interrupt(int sig)
{
  if (g_caught != 0) {
    constexpr char k_now[] = "\ngpurent: second signal: exiting now\n";
    write_all(k_now, sizeof k_now - 1);
    write_all(g_words, static_cast<std::size_t>(g_words_len));
    ::_exit(4);
  }
  g_caught = sig;
  constexpr char k_first[] = "\ngpurent: interrupted: stopping at the next safe point (again to exit at once)\n";
  write_all(k_first, sizeof k_first - 1);
}

}  // namespace

std::string_view signal_name(int sig) noexcept
{
  switch (sig) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  default: return "a signal";
  }
}

std::string caught_signal_name(const Services& s)
{
  const int sig = s.signal_caught();
  return sig != 0 ? std::string(signal_name(sig)) : std::string("interrupted");
}

std::string interrupted_step(const Error& e)
{
  constexpr std::string_view k_prefix = "interrupted: ";
  return e.interrupted && e.message.starts_with(k_prefix) ? e.message.substr(k_prefix.size()) : e.message;
}

InterruptWatch::InterruptWatch(Services& s) : m_s(s)
{
  if (!s.handle_signals) {
    return;
  }
  g_caught = 0;
  g_words_len = 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a sleep or a read returns, and the command looks at the flag
  for (std::size_t i = 0; i < 3; ++i) {
    ::sigaction(k_signals[i], &sa, &m_old[i]);
  }
  m_installed = true;
  m_saved = std::move(s.caught_signal);
  s.caught_signal = [] { return static_cast<int>(g_caught); };
}

InterruptWatch::~InterruptWatch()
{
  if (!m_installed) {
    return;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    ::sigaction(k_signals[i], &m_old[i], nullptr);
  }
  m_s.caught_signal = std::move(m_saved);
}

void InterruptWatch::set_last_words(std::string_view text)
{
  if (!m_installed) {
    return;
  }
  sigset_t block;
  sigset_t old;
  sigemptyset(&block);
  for (const int sig : k_signals) {
    sigaddset(&block, sig);
  }
  ::sigprocmask(SIG_BLOCK, &block, &old);
  const std::size_t n = std::min(text.size(), k_words_max);
  std::memcpy(g_words, text.data(), n);
  g_words_len = static_cast<std::sig_atomic_t>(n);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace gpurent
