// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: what wraps a log line (ANSI colours, timestamps, rank and
// container prefixes), removed before the message is matched.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpurent::oom_detail {

// Appends `in` to `out` without ANSI escape sequences (ESC[...X, OSC, and the bare "[0m"/"^[[0m"
// residue of pasted logs). `state` carries a sequence split across calls; 0 at a line start.
void strip_ansi(std::string_view in, std::string& out, int& state);

// Length of the log prefixes at the start of `line`: ISO/syslog/time-only timestamps, log levels,
// `[rank3]:`, `[default0]:`, `[1,0]<stderr>:`, docker-compose `service  | `, Ray/vLLM
// `(Worker pid=12)`, vLLM `INFO 06-28 06:11:45 file.py:45]`, glog `E0628 06:11:45.1 12 f.cc:3]`,
// Kubernetes `stderr F`. Repeated prefixes are all counted.
[[nodiscard]] std::size_t line_prefix_length(std::string_view line) noexcept;

}  // namespace gpurent::oom_detail
