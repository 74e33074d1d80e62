// SPDX-License-Identifier: MIT
#include "cli/errors.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/services.hpp"
#include "common/terminal_text.hpp"

namespace gpurent {
namespace {

std::string help_pointer(std::string_view command)
{
  return command.empty() ? std::string("see `gpurent --help`") : "see `gpurent " + std::string(command) + " --help`";
}

std::string default_hint(Errc code, std::string_view command)
{
  switch (code) {
  case Errc::usage:
  case Errc::invalid_input:
  case Errc::unsupported:
  case Errc::refused: return help_pointer(command);
  case Errc::not_found: return "check the name or path; " + help_pointer(command);
  case Errc::unauthorized: return "check the API key (`gpurent config show` says where each key comes from)";
  case Errc::quota: return "wait a minute and retry";
  case Errc::unavailable:
  case Errc::timeout: return "check the network connection and retry";
  case Errc::partial: return "re-run the command to retry what failed";
  case Errc::internal: break;
  }
  return "this is a bug in gpurent; please report it with the command you ran";
}

// Replaces what is not UTF-8 so that the document is valid JSON whatever a message quotes.
std::string dump(const nlohmann::json& j, int indent)
{
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string_view error_code_name(Errc code) noexcept
{
  switch (code) {
  case Errc::usage:
  case Errc::invalid_input: return "usage";
  case Errc::not_found: return "not_found";
  case Errc::unauthorized: return "auth";
  case Errc::quota:
  case Errc::unavailable:
  case Errc::timeout: return "network";
  case Errc::unsupported:
  case Errc::refused: return "refused";
  case Errc::partial: return "partial";
  case Errc::internal: break;
  }
  return "internal";
}

ErrorText error_text(const Error& e, std::string_view command)
{
  // A "; " inside (parentheses), [brackets], `backticks` or "double quotes" belongs to what
  // they enclose (a quoted command, a cause given in parentheses), not to the sentence.
  // Messages quote what providers, the Hub and servers answered: never their control characters.
  const std::string m = escape_controls(e.message);
  bool backticked = false;
  bool quoted = false;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < m.size(); ++i) {
    const char c = m[i];
    if (c == '`' && !quoted) {
      backticked = !backticked;
    } else if (c == '"' && !backticked) {
      quoted = !quoted;
    } else if (backticked || quoted) {
      continue;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (depth == 0 && c == ';' && m[i + 1] == ' ' && i > 0 && i + 2 < m.size()) {
      return ErrorText{m.substr(0, i), m.substr(i + 2)};
    }
  }
  return ErrorText{m, default_hint(e.code, command)};
}

std::string error_json(const ErrorText& text, Errc code, int exit)
{
  const nlohmann::json j = {{"code", error_code_name(code)}, {"message", text.message}, {"exit", exit}, {"hint", text.hint}};
  return dump(j, -1);
}

bool wants_json(const std::vector<std::string>& args)
{
  for (const auto& a : args) {
    if (a == "--") {
      return false;
    }
    if (a == "--json") {
      return true;
    }
  }
  return false;
}

JsonStdout::JsonStdout(Services& s) : m_s(s)
{
  if (s.global.json && !s.json_output.capturing) {
    m_buf = std::make_unique<TailBuf>(s.out.rdbuf(), s.json_output);
    m_saved = s.out.rdbuf(m_buf.get());
    s.json_output.capturing = true;
  }
}

JsonStdout::~JsonStdout()
{
  if (m_saved != nullptr) {
    m_s.out.rdbuf(m_saved);
    m_s.json_output.capturing = false;
  }
}

namespace {
bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
}  // namespace

void JsonStdout::TailBuf::pass(const char* s, std::size_t n)
{
  if (n == 0) {
    return;
  }
  m_target->sputn(s, static_cast<std::streamsize>(n));
  for (std::size_t i = n; i > 0; --i) {
    if (!is_space(s[i - 1])) {
      m_state.last = s[i - 1];
      m_state.wrote = true;
      break;
    }
  }
}

std::streamsize JsonStdout::TailBuf::xsputn(const char* s, std::streamsize count)
{
  const auto n = static_cast<std::size_t>(count);
  std::size_t end = n;
  while (end > 0 && is_space(s[end - 1])) {
    --end;
  }
  if (end == 0) {  // only whitespace: it may precede or follow the closing brace
    m_state.tail.append(s, n);
    return count;
  }
  // Something other than whitespace: what was held is not the end of the document.
  pass(m_state.tail.data(), m_state.tail.size());
  m_state.tail.clear();
  if (s[end - 1] != '}') {
    pass(s, n);
    return count;
  }
  std::size_t cut = end - 1;  // hold the '}' and the whitespace before it
  while (cut > 0 && is_space(s[cut - 1])) {
    --cut;
  }
  pass(s, cut);
  m_state.tail.assign(s + cut, n - cut);
  return count;
}

JsonStdout::TailBuf::int_type JsonStdout::TailBuf::overflow(int_type c)
{
  if (traits_type::eq_int_type(c, traits_type::eof())) {
    return traits_type::not_eof(c);
  }
  const char ch = traits_type::to_char_type(c);
  xsputn(&ch, 1);
  return c;
}

int JsonStdout::TailBuf::sync() { return m_target->pubsync(); }

void finish_json_output(Services& s)
{
  auto& o = s.json_output;
  if (o.capturing) {
    return;  // the JsonStdout in place hands over when it ends
  }
  const std::string tail = std::move(o.tail);
  o.tail.clear();
  const bool wrote = o.wrote || tail.find('}') != std::string::npos;
  if (!o.error) {
    s.out << tail;
    return;
  }
  const std::string error = std::move(*o.error);
  o.error.reset();
  if (!wrote) {
    s.out << "{\"error\":" << error << "}\n";
    return;
  }
  const auto brace = tail.find('}');
  if (brace == std::string::npos || o.last == 0) {
    s.out << tail;  // not a JSON object (against the rule): the error stays on stderr
    return;
  }
  // Join the document as its last key: `, "error": {…}` before the held '}'.
  const bool pretty = tail.find('\n') < brace;
  s.out << (o.last == '{' ? "" : ",") << (pretty ? "\n  \"error\": " : "\"error\":") << error << tail;
  o.wrote = true;
}

}  // namespace gpurent
