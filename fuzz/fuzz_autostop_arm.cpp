// SPDX-License-Identifier: MIT
// Fuzz target for the reader of what arming the autostop watchdog prints on a server
// (sync/autostop_agent.hpp, parse_autostop_arm: "gpurent-autostop\0armed\0LAUNCHER\0PID\0CURL\0
// INSTANCE_KEY\0" or "gpurent-autostop\0error\0WHAT\0"; a server is not trusted). Invariants: no
// crash, escaping exception or sanitizer report; an answer is either armed with a launcher, or an
// error of a known kind with a message; an armed answer written back in the same shape reads the
// same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/autostop_agent.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view out(reinterpret_cast<const char*>(data), size);
  const auto armed = gpurent::parse_autostop_arm(out);
  if (!armed) {
    const auto code = armed.error().code;
    if (armed.error().message.empty() ||
        (code != gpurent::Errc::invalid_input && code != gpurent::Errc::refused && code != gpurent::Errc::unavailable)) {
      std::abort();
    }
    return 0;
  }
  if (armed->launcher.empty()) {
    std::abort();
  }
  using namespace std::string_literals;
  const std::string again = "gpurent-autostop\0armed\0"s + armed->launcher + '\0' +
                            (armed->pid ? std::to_string(*armed->pid) : std::string()) + '\0' +
                            (armed->has_curl ? "yes" : "no") + '\0' + (armed->instance_key ? "yes" : "no") + '\0';
  const auto back = gpurent::parse_autostop_arm(again);
  if (!back || back->launcher != armed->launcher || back->pid != armed->pid || back->has_curl != armed->has_curl ||
      back->instance_key != armed->instance_key) {
    std::abort();
  }
  return 0;
}
