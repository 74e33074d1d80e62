// SPDX-License-Identifier: MIT
#pragma once
// Reading a secret without it landing in the shell's history or `ps`: from standard input, or
// typed at a prompt with the terminal's echo off (termios).
#include <iosfwd>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

// The first line of `in`, its newline (and a CR before it) dropped; an error naming `what` when
// the stream holds nothing.
[[nodiscard]] Result<std::string> read_value_line(std::istream& in, std::string_view what);

// Prints `prompt` on `err`, turns the echo of the terminal on standard input off, reads one line
// from `in` and turns the echo back on (also when SIGINT, SIGTERM or SIGHUP ends the process
// meanwhile). The caller checks that standard input is a terminal.
[[nodiscard]] Result<std::string> read_hidden_line(std::istream& in, std::ostream& err, std::string_view prompt,
                                                   std::string_view what);

}  // namespace gpurent
