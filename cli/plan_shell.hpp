// SPDX-License-Identifier: MIT
#pragma once
// Launch lines as the text view prints them: pasteable into a shell at any width. A long command
// wraps between shell words (never inside a quoted string) with " \" continuations; a
// `python -c '…'` snippet becomes a here-document with one statement per line (long calls wrap
// after a comma inside their parentheses, which Python joins). A `bash -c '…'` line wraps the
// words of its script the same way (bash -c joins " \" line ends inside the quotes too).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

[[nodiscard]] std::vector<std::string> shell_lines(std::string_view command, std::size_t width, std::string_view indent);

}  // namespace gpurent
