// SPDX-License-Identifier: MIT
#pragma once
// Launch lines as the text view prints them: pasteable into a shell at any width. A long command
// wraps between shell words (never inside a quoted string) with " \" continuations; a
// `python -c '…'` snippet becomes a here-document with one statement per line (long calls wrap
// after a comma inside their parentheses, which Python joins).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

[[nodiscard]] std::vector<std::string> shell_lines(std::string_view command, std::size_t width, std::string_view indent);

}  // namespace gpurent
