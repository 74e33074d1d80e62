// SPDX-License-Identifier: MIT
#include "cli/services.hpp"

#include <ostream>

#include "cli/errors.hpp"
#include "common/terminal_text.hpp"
#include "common/text.hpp"

namespace gpurent {

bool Services::utf8() const
{
  const auto get = [&](const char* k) -> std::string_view {
    const auto it = env.find(k);
    return it == env.end() ? std::string_view() : std::string_view(it->second);
  };
  return locale_is_utf8(get("LC_ALL"), get("LC_CTYPE"), get("LANG"));
}

int report_error(Services& s, const Error& e)
{
  const ErrorText text = error_text(e, s.command);
  const int code = exit_code_for(e.code);
  const bool color = s.color_err();
  s.err << (color ? "\x1b[1;31mgpurent: error:\x1b[0m " : "gpurent: error: ") << text.message << "; " << text.hint << '\n';
  if (s.global.json) {
    s.json_output.error = error_json(text, e.code, code);
    finish_json_output(s);  // at once when no command holds stdout (e.g. main's catch)
  }
  return code;
}

void report_warning(Services& s, std::string_view message)
{
  const bool color = s.color_err();
  s.err << (color ? "\x1b[1;33mgpurent: warning:\x1b[0m " : "gpurent: warning: ") << escape_controls(message) << '\n';
}

}  // namespace gpurent
