// SPDX-License-Identifier: MIT
#pragma once
// How an error reaches the user: one line on stderr in gpurent's words
// (`gpurent: error: <what failed>: <why>; <what to do>`), and under --json one document on
// stdout: {"error": {"code", "message", "exit", "hint"}} (docs/cli.md, "Errors under --json").
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "cli/services.hpp"
#include "common/result.hpp"

namespace gpurent {

// The JSON code of an error kind: usage, not_found, refused, network, auth, partial, internal.
[[nodiscard]] std::string_view error_code_name(Errc code) noexcept;

struct ErrorText {
  std::string message;  // what failed: why
  std::string hint;     // what to do next
};
// Splits a message at its first "; " outside `backticks`, "quotes", (parentheses) and [brackets]
// into what failed and what to do; a
// message without a next step gets the default one of its kind, pointing at `command`'s help.
[[nodiscard]] ErrorText error_text(const Error& e, std::string_view command);

// The error object, one line: {"code":…,"exit":…,"hint":…,"message":…} (the value of "error").
[[nodiscard]] std::string error_json(const ErrorText& text, Errc code, int exit);

// Under --json, from the constructor on, what the command writes on s.out passes through to
// stdout except its end: a closing '}' and the whitespace around it are held back, so that an
// error reported later can still join the document. The destructor restores s.out and leaves
// the held tail in s.json_output (also when an exception is on its way to main).
class JsonStdout {
public:
  explicit JsonStdout(Services& s);
  ~JsonStdout();
  JsonStdout(const JsonStdout&) = delete;
  JsonStdout& operator=(const JsonStdout&) = delete;

private:
  class TailBuf final : public std::streambuf {
  public:
    TailBuf(std::streambuf* target, Services::JsonOutput& state) : m_target(target), m_state(state) {}

  protected:
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int_type overflow(int_type c) override;
    int sync() override;

  private:
    void pass(const char* s, std::size_t n);
    std::streambuf* m_target;
    Services::JsonOutput& m_state;
  };

  Services& m_s;
  std::streambuf* m_saved = nullptr;  // s.out's own buffer while the TailBuf is in place
  std::unique_ptr<TailBuf> m_buf;
};

// Ends the one JSON document: the held tail, with the reported error joined as the document's
// "error" key when there is one (or the error document alone when the command printed
// nothing). Without --json it does nothing. Safe to call twice.
void finish_json_output(Services& s);

// Whether the command line asks for --json (before any "--"): known before parsing, so that
// errors of the parser itself come out as JSON too.
[[nodiscard]] bool wants_json(const std::vector<std::string>& args);

}  // namespace gpurent
