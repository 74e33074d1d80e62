// SPDX-License-Identifier: MIT
#pragma once
// How an error reaches the user: one line on stderr in gpurent's words
// (`gpurent: error: <what failed>: <why>; <what to do>`), and under --json one document on
// stdout: {"error": {"code", "message", "exit", "hint"}} (shared/spec/cli.md, "Errors under --json").
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {
struct Services;

// The JSON code of an error kind: usage, not_found, refused, network, auth, partial, internal.
[[nodiscard]] std::string_view error_code_name(Errc code) noexcept;

struct ErrorText {
  std::string message;  // what failed: why
  std::string hint;     // what to do next
};
// Splits a message at its first "; " outside `backticks` into what failed and what to do; a
// message without a next step gets the default one of its kind, pointing at `command`'s help.
[[nodiscard]] ErrorText error_text(const Error& e, std::string_view command);

// The error document, one line: {"error":{"code":…,"exit":…,"hint":…,"message":…}}.
[[nodiscard]] std::string error_json(const ErrorText& text, Errc code, int exit);

// Under --json, holds what the command writes on stdout until finish_json_output(): from the
// constructor on, s.out writes into a buffer. The destructor restores s.out (its text stays in
// s.json_pending for finish_json_output, also when an exception is on its way to main).
class JsonStdout {
public:
  explicit JsonStdout(Services& s);
  ~JsonStdout();
  JsonStdout(const JsonStdout&) = delete;
  JsonStdout& operator=(const JsonStdout&) = delete;

private:
  Services& m_s;
  std::stringbuf m_buffer;
  std::streambuf* m_saved = nullptr;  // s.out's own buffer while this one is in place
};

// Writes the one JSON document: what the command printed, with the reported error merged in as
// "error" when there is one (or the error document alone when the command printed nothing).
// Without --json it does nothing. Safe to call twice.
void finish_json_output(Services& s);

// Whether the command line asks for --json (before any "--"): known before parsing, so that
// errors of the parser itself come out as JSON too.
[[nodiscard]] bool wants_json(const std::vector<std::string>& args);

}  // namespace gpurent
