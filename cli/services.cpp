// SPDX-License-Identifier: MIT
#include "cli/services.hpp"

#include <ostream>

namespace gpurent {

int report_error(Services& s, const Error& e)
{
  const bool color = s.color_err();
  s.err << (color ? "\x1b[1;31mgpurent: error:\x1b[0m " : "gpurent: error: ") << e.message << '\n';
  return exit_code_for(e.code);
}

void report_warning(Services& s, std::string_view message)
{
  const bool color = s.color_err();
  s.err << (color ? "\x1b[1;33mgpurent: warning:\x1b[0m " : "gpurent: warning: ") << message << '\n';
}

}  // namespace gpurent
