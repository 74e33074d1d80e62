// SPDX-License-Identifier: MIT
#pragma once
// PURE: a remote command's output kept in memory (ExecResult::out and ::err), with a limit, so a
// server that prints without end (a looping login script, a runaway tool) costs an error, not
// all of the machine's memory. Streams that are meant to be large (tar streams, byte ranges, a
// job's log) go to a DataSink as they arrive and are never captured, so never limited.
#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

// The most a command's stdout, or its stderr, may hold: every command gpurent runs for its own
// answers (doctor, jobs, autostop, the job start, push's ledgers) prints a few KiB to a few MiB.
inline constexpr std::size_t k_captured_output_limit = std::size_t{64} << 20U;
// Listings and hashes of a remote tree (`find -printf`, sha256sum), whose size grows with the
// number of files (about 100 bytes a file) and which are read whole anyway: room for ten million.
inline constexpr std::size_t k_tree_output_limit = std::size_t{1} << 30U;

class CapturedOutput {
public:
  // `what`: "stdout" or "stderr"; `who`: the server, for the message.
  CapturedOutput(std::string what, std::string who, std::size_t limit = k_captured_output_limit)
      : m_what(std::move(what)), m_who(std::move(who)), m_limit(limit)
  {
  }
  // Appends, or fails with Errc::invalid_input (and keeps nothing more) past the limit.
  [[nodiscard]] Result<void> append(std::string_view data);
  void set_limit(std::size_t limit) noexcept { m_limit = limit; }
  [[nodiscard]] std::size_t limit() const noexcept { return m_limit; }
  [[nodiscard]] const std::string& text() const noexcept { return m_text; }
  [[nodiscard]] std::string take() noexcept { return std::move(m_text); }

private:
  std::string m_what;
  std::string m_who;
  std::size_t m_limit;
  std::string m_text;
};

// "64 MiB", "1 GiB", "512 KiB", "100 bytes": the limit as the message says it.
[[nodiscard]] std::string limit_text(std::size_t bytes);

}  // namespace gpurent
