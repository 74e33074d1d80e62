// SPDX-License-Identifier: MIT
#include "sync/captured_output.hpp"

namespace gpurent {

std::string limit_text(std::size_t bytes)
{
  constexpr std::size_t k_kib = 1024;
  if (bytes >= k_kib * k_kib * k_kib && bytes % (k_kib * k_kib * k_kib) == 0) {
    return std::to_string(bytes / (k_kib * k_kib * k_kib)) + " GiB";
  }
  if (bytes >= k_kib * k_kib && bytes % (k_kib * k_kib) == 0) {
    return std::to_string(bytes / (k_kib * k_kib)) + " MiB";
  }
  if (bytes >= k_kib && bytes % k_kib == 0) {
    return std::to_string(bytes / k_kib) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

Result<void> CapturedOutput::append(std::string_view data)
{
  if (data.size() > m_limit - m_text.size()) {  // m_text never exceeds m_limit
    return fail(Errc::invalid_input, "the command on " + m_who + " printed more than " + limit_text(m_limit) + " on its " + m_what +
                                         ", more than gpurent keeps of a command's output; stopped reading it. Something on the "
                                         "server prints without end (a login script such as ~/.bashrc, or a runaway tool): "
                                         "check it with `gpurent ssh`");
  }
  m_text.append(data);
  return {};
}

}  // namespace gpurent
