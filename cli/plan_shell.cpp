// SPDX-License-Identifier: MIT
#include "cli/plan_shell.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_python = "python -c '";

// Shell words of `command`: split at spaces outside quotes (quotes stay in the words).
std::vector<std::string> shell_words(std::string_view command)
{
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (const char c : command) {
    if (quote != 0) {
      word += c;
      quote = c == quote ? 0 : quote;
    } else if (c == ' ') {
      if (!word.empty()) {
        words.push_back(word);
        word.clear();
      }
    } else {
      word += c;
      quote = c == '\'' || c == '"' ? c : 0;
    }
  }
  if (!word.empty()) {
    words.push_back(word);
  }
  return words;
}

int paren_depth(std::string_view text)
{
  int depth = 0;
  for (const char c : text) {
    depth += c == '(' || c == '[' || c == '{' ? 1 : (c == ')' || c == ']' || c == '}' ? -1 : 0);
  }
  return depth;
}

// One Python statement, wrapped after ", " where the break falls inside brackets.
void python_statement(std::vector<std::string>& out, std::string_view stmt, std::size_t width)
{
  std::string line;
  std::size_t start = 0;
  int depth = 0;  // brackets open before this piece, over the whole statement
  while (start <= stmt.size()) {
    std::size_t comma = stmt.find(", ", start);
    const std::size_t end = comma == std::string_view::npos ? stmt.size() : comma + 1;
    const std::string_view piece = stmt.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + piece.size() > width && depth > 0) {
      out.push_back(line);
      line = "    ";
    } else if (!line.empty() && line != "    ") {
      line += " ";
    }
    line += std::string(piece);
    depth += paren_depth(piece);
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 2;
  }
  out.push_back(line);
}

}  // namespace

std::vector<std::string> shell_lines(std::string_view command, std::size_t width, std::string_view indent)
{
  std::vector<std::string> out;
  if (command.starts_with(k_python) && command.ends_with("'") && command.size() > k_python.size() + 1) {
    const std::string_view body = command.substr(k_python.size(), command.size() - k_python.size() - 1);
    if (body.find('\'') == std::string_view::npos) {
      out.push_back(std::string(indent) + "python - <<'EOF'");
      std::size_t start = 0;
      while (start <= body.size()) {
        const std::size_t sep = body.find("; ", start);
        python_statement(out, body.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start),
                         width);
        if (sep == std::string_view::npos) {
          break;
        }
        start = sep + 2;
      }
      out.emplace_back("EOF");
      return out;
    }
  }
  // `bash -c '…'` (a line each server of a group runs with its own environment): the words of the
  // quoted script wrap the same way; inside the single quotes a " \" line end reaches bash -c,
  // which joins the lines as the shell would.
  std::vector<std::string> words;
  constexpr std::string_view k_bash = "bash -c '";
  if (command.starts_with(k_bash) && command.ends_with("'") && command.size() > k_bash.size() + 1 &&
      command.substr(k_bash.size(), command.size() - k_bash.size() - 1).find('\'') == std::string_view::npos) {
    words = shell_words(command.substr(k_bash.size(), command.size() - k_bash.size() - 1));
    words.front() = std::string(k_bash) + words.front();
    words.back() += "'";
  } else {
    words = shell_words(command);
  }
  std::string line(indent);
  bool empty = true;
  const std::string rest = std::string(indent) + "  ";
  for (const auto& word : words) {
    if (!empty && line.size() + 1 + word.size() + 2 > width) {
      out.push_back(line + " \\");
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  out.push_back(line);
  return out;
}

}  // namespace gpurent
