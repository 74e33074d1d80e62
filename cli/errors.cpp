// SPDX-License-Identifier: MIT
#include "cli/errors.hpp"

#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/services.hpp"

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
  const std::string& m = e.message;
  bool quoted = false;
  for (std::size_t i = 0; i + 1 < m.size(); ++i) {
    if (m[i] == '`') {
      quoted = !quoted;
    } else if (!quoted && m[i] == ';' && m[i + 1] == ' ' && i > 0 && i + 2 < m.size()) {
      return ErrorText{m.substr(0, i), m.substr(i + 2)};
    }
  }
  return ErrorText{m, default_hint(e.code, command)};
}

std::string error_json(const ErrorText& text, Errc code, int exit)
{
  const nlohmann::json j = {{"error",
                             {{"code", error_code_name(code)}, {"message", text.message}, {"exit", exit}, {"hint", text.hint}}}};
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
  if (s.global.json && !s.json_capturing) {
    m_saved = s.out.rdbuf(&m_buffer);
    s.json_capturing = true;
  }
}

JsonStdout::~JsonStdout()
{
  if (m_saved != nullptr) {
    m_s.out.rdbuf(m_saved);
    m_s.json_capturing = false;
    m_s.json_pending += m_buffer.str();
  }
}

void finish_json_output(Services& s)
{
  if (s.json_capturing) {
    return;  // the JsonStdout in place hands its text over when it ends
  }
  std::string text = std::move(s.json_pending);
  s.json_pending.clear();
  if (!s.json_error) {
    s.out << text;
    return;
  }
  const auto error = nlohmann::json::parse(*s.json_error);
  s.json_error.reset();
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) {
    // Nothing printed (or, against the rule, not one JSON object): the error is the document.
    s.out << dump(error, -1) << '\n';
    return;
  }
  doc["error"] = error["error"];
  s.out << dump(doc, text.find("\n  ") != std::string::npos ? 2 : -1) << '\n';
}

}  // namespace gpurent
