// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: what wraps a log line (string escapes of JSON or Python reprs,
// ANSI colours, timestamps, rank and container prefixes), removed before the message is matched.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpurent::oom_detail {

// Appends `in` to `out` with the string escapes of a JSON log line or a Python repr resolved:
// \n and \r become a line break, \t a space, \" \' \\ \/ the character, \u001b and \x1b an ESC
// (removed later with the colour codes), other \uXXXX below 0x80 the character. `pending`
// carries an escape cut at the end of `in` (at most 5 bytes); `flush` ends the line.
void unescape(std::string_view in, std::string& out, std::string& pending, bool flush);

// Appends `in` to `out` without ANSI escape sequences (ESC[...X, OSC, and the bare "[0m"/"^[[0m"
// residue of pasted logs). `state` carries a sequence split across calls; 0 at a line start.
void strip_ansi(std::string_view in, std::string& out, int& state);

// What the stripped prefixes said about the program that wrote the log.
struct PrefixInfo {
  bool vllm = false;    // vLLM's "INFO 06-28 06:11:45 [file.py:45]"
  bool sglang = false;  // SGLang's "[2025-07-02 07:41:58 DP0 TP0]"
};

// Length of the log prefixes at the start of `line`: ISO/syslog/time-only timestamps, log levels,
// `[rank3]:`, `[default0]:`, `[1,0]<stderr>:`, docker-compose `service  | `, Ray/vLLM
// `(Worker pid=12)`, vLLM `INFO 06-28 06:11:45 file.py:45]`, glog `E0628 06:11:45.1 12 f.cc:3]`,
// SGLang `[2025-07-02 07:41:58 TP0]`, llama.cpp `1.06.520.077 E`, Kubernetes `stderr F`.
// Repeated prefixes are all counted.
[[nodiscard]] std::size_t line_prefix_length(std::string_view line, PrefixInfo* info = nullptr) noexcept;

}  // namespace gpurent::oom_detail
