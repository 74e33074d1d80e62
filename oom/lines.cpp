// SPDX-License-Identifier: MIT
#include "oom/lines.hpp"

#include <array>

namespace gpurent::oom_detail {
namespace {

bool digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
bool lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool alnum(char c) noexcept { return digit(c) || upper(c) || lower(c); }
bool space(char c) noexcept { return c == ' ' || c == '\t'; }

// A tiny cursor: every method consumes on success only.
struct Cur {
  std::string_view s;
  std::size_t i = 0;

  [[nodiscard]] bool end() const noexcept { return i >= s.size(); }
  [[nodiscard]] char peek() const noexcept { return end() ? '\0' : s[i]; }
  bool ch(char c) noexcept
  {
    if (peek() != c || end()) {
      return false;
    }
    ++i;
    return true;
  }
  bool lit(std::string_view w) noexcept
  {
    if (s.substr(i).starts_with(w)) {
      i += w.size();
      return true;
    }
    return false;
  }
  bool digits(std::size_t min, std::size_t max) noexcept
  {
    std::size_t n = 0;
    while (n < max && i + n < s.size() && digit(s[i + n])) {
      ++n;
    }
    if (n < min) {
      return false;
    }
    i += n;
    return true;
  }
  std::size_t spaces() noexcept
  {
    std::size_t n = 0;
    while (!end() && space(s[i])) {
      ++i;
      ++n;
    }
    return n;
  }
  // A run of characters allowed by `ok`, at least 1, at most max.
  template <class Pred>
  bool run(Pred ok, std::size_t max) noexcept
  {
    std::size_t n = 0;
    while (n < max && i + n < s.size() && ok(s[i + n])) {
      ++n;
    }
    if (n == 0) {
      return false;
    }
    i += n;
    return true;
  }
};

bool file_char(char c) noexcept { return alnum(c) || c == '_' || c == '.' || c == '/' || c == '-'; }

// HH:MM(:SS(.frac)?)?
bool clock_time(Cur& c) noexcept
{
  Cur t = c;
  if (!(t.digits(1, 2) && t.ch(':') && t.digits(2, 2))) {
    return false;
  }
  if (t.ch(':')) {
    if (!t.digits(2, 2)) {
      return false;
    }
    if (t.ch('.') || t.ch(',')) {
      t.digits(1, 9);
    }
  }
  c = t;
  return true;
}

// [2024-06-28T06:11:45.123Z], 2024-06-28 06:11:45,123, 2024/06/28 06:11:45 +02:00, with " UTC";
// SGLang's "[2025-07-02 07:41:58 DP0 TP0]" sets `sglang`.
bool iso_stamp(Cur& c, bool& sglang) noexcept
{
  Cur t = c;
  const bool bracket = t.ch('[');
  if (!(t.digits(4, 4) && (t.ch('-') || t.ch('/')) && t.digits(2, 2) && (t.ch('-') || t.ch('/')) && t.digits(2, 2))) {
    return false;
  }
  if (t.ch('T') || t.ch(' ')) {
    if (!clock_time(t)) {
      return false;
    }
    if (!t.ch('Z')) {
      Cur z = t;
      z.spaces();
      const bool hours = (z.ch('+') || z.ch('-')) && z.digits(2, 2);
      if (hours) {
        z.ch(':');
      }
      if (hours && z.digits(2, 2)) {
        t = z;
      } else {
        Cur u = t;
        if (u.ch(' ') && u.lit("UTC")) {
          t = u;
        }
      }
    }
  }
  if (bracket) {
    bool tagged = false;
    for (int tags = 0; tags < 4; ++tags) {  // " DP0 TP0 EP0 PP0"
      Cur g = t;
      if (!(g.spaces() > 0 && g.run(upper, 3) && g.digits(1, 4))) {
        break;
      }
      t = g;
      tagged = true;
    }
    if (!t.ch(']')) {
      return false;
    }
    sglang = sglang || tagged;
  }
  c = t;
  return true;
}

// llama.cpp's own log format: "1.06.520.077 E " (elapsed time and a level letter).
bool llama_stamp(Cur& c) noexcept
{
  Cur t = c;
  if (!(t.digits(1, 4) && t.ch('.') && t.digits(2, 2) && t.ch('.') && t.digits(3, 3) && t.ch('.') && t.digits(3, 3))) {
    return false;
  }
  if (t.spaces() == 0 || !(t.ch('I') || t.ch('W') || t.ch('E') || t.ch('D') || t.ch('T') || t.ch('N')) || !(t.end() || space(t.peek()))) {
    return false;
  }
  c = t;
  return true;
}

// vLLM: "INFO 06-28 06:11:45 file.py:45] " or "ERROR 03-10 08:07:20 [core.py:302] " (sets `vllm`).
// glog: "E0628 06:11:45.123456 12345 file.cc:12] ".
bool level_date(Cur& c, bool& vllm) noexcept
{
  Cur t = c;
  bool glog = false;
  if (!(t.lit("DEBUG") || t.lit("INFO") || t.lit("WARNING") || t.lit("ERROR") || t.lit("CRITICAL"))) {
    if (!(t.ch('I') || t.ch('W') || t.ch('E') || t.ch('F')) || !t.digits(4, 4)) {
      return false;
    }
    glog = true;
  } else {
    if (t.spaces() == 0 || !(t.digits(2, 2) && t.ch('-') && t.digits(2, 2))) {
      return false;
    }
  }
  if (t.spaces() == 0 || !clock_time(t) || t.spaces() == 0) {
    return false;
  }
  if (glog && !(t.digits(1, 10) && t.spaces() > 0)) {
    return false;
  }
  t.ch('[');
  if (!(t.run(file_char, 128) && t.ch(':') && t.digits(1, 7) && t.ch(']'))) {
    return false;
  }
  vllm = vllm || !glog;
  c = t;
  return true;
}

// syslog / journald: "Apr 17 01:25:10 ai-pc ollama[56169]: "
bool syslog_stamp(Cur& c) noexcept
{
  static constexpr std::array<std::string_view, 12> k_months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  Cur t = c;
  bool month = false;
  for (const auto m : k_months) {
    if (t.lit(m)) {
      month = true;
      break;
    }
  }
  if (!month || t.spaces() == 0 || !t.digits(1, 2) || t.spaces() == 0 || !clock_time(t) || t.spaces() == 0) {
    return false;
  }
  if (!t.run([](char x) { return x != ' ' && x != '\t'; }, 128) || t.spaces() == 0) {
    return false;
  }
  if (!t.run([](char x) { return alnum(x) || x == '_' || x == '-' || x == '.' || x == '/' || x == '@'; }, 128)) {
    return false;
  }
  if (t.ch('[') && !(t.digits(1, 10) && t.ch(']'))) {
    return false;
  }
  if (!t.ch(':')) {
    return false;
  }
  c = t;
  return true;
}

// [rank3]:  [default0]:  [1,0]<stderr>:
bool rank_tag(Cur& c) noexcept
{
  Cur t = c;
  if (!t.ch('[')) {
    return false;
  }
  t.run(lower, 16);
  if (!t.digits(1, 6)) {
    return false;
  }
  if (t.ch(',') && !t.digits(1, 6)) {
    return false;
  }
  if (!t.ch(']')) {
    return false;
  }
  if (t.ch('<')) {
    if (!((t.lit("stderr") || t.lit("stdout")) && t.ch('>'))) {
      return false;
    }
  }
  if (!t.ch(':')) {
    return false;
  }
  c = t;
  return true;
}

// Ray / vLLM workers: "(RayWorkerWrapper pid=123, ip=10.0.0.1) ", "(EngineCore_DP0 pid=10311) "
bool actor_tag(Cur& c) noexcept
{
  if (c.peek() != '(') {
    return false;
  }
  const std::string_view rest = c.s.substr(c.i, 160);
  const std::size_t close = rest.find(')');
  if (close == std::string_view::npos || rest.substr(0, close).find("pid=") == std::string_view::npos) {
    return false;
  }
  c.i += close + 1;
  return true;
}

// docker compose: "vllm-1  | ", "ollama  | "
bool compose_tag(Cur& c) noexcept
{
  Cur t = c;
  if (!alnum(t.peek()) || !t.run([](char x) { return alnum(x) || x == '_' || x == '.' || x == '-'; }, 64)) {
    return false;
  }
  if (t.spaces() == 0 || !t.ch('|')) {
    return false;
  }
  c = t;
  return true;
}

// A level word or stream name standing alone: "ERROR", "[INFO]", "stderr F", "|", " - ".
bool level_word(Cur& c) noexcept
{
  static constexpr std::array<std::string_view, 11> k_words{"DEBUG", "INFO",  "WARNING", "WARN",   "ERROR", "CRITICAL",
                                                            "FATAL", "stderr", "stdout", "Error:", "Warning:"};
  Cur t = c;
  const bool bracket = t.ch('[');
  bool found = false;
  for (const auto w : k_words) {
    if (t.lit(w)) {
      found = true;
      break;
    }
  }
  if (!found || (bracket && !t.ch(']'))) {
    return false;
  }
  // The word must stand alone: followed by a space, a separator or the end of the line.
  const char next = t.peek();
  if (!(t.end() || space(next) || next == '|' || next == ':' || next == ']')) {
    return false;
  }
  Cur k = t;
  if (k.spaces() > 0 && (k.ch('F') || k.ch('P')) && (k.end() || space(k.peek()))) {
    t = k;  // Kubernetes CRI "stderr F "
  }
  c = t;
  return true;
}

bool separator(Cur& c) noexcept
{
  Cur t = c;
  if (t.ch('|') || (t.ch('-') && !t.end() && space(t.peek()))) {  // a lone "-" ending a line is text
    c = t;
    return true;
  }
  return false;
}

}  // namespace

std::size_t line_prefix_length(std::string_view line, PrefixInfo* info) noexcept
{
  PrefixInfo scratch;
  PrefixInfo& seen = info != nullptr ? *info : scratch;
  Cur c{line, 0};
  for (int round = 0; round < 12; ++round) {
    c.spaces();
    if (c.end()) {
      break;
    }
    const char first = c.peek();
    bool stripped = false;
    if (digit(first) || first == '[') {
      stripped = iso_stamp(c, seen.sglang) || rank_tag(c) || llama_stamp(c) || clock_time(c);
    }
    if (!stripped && upper(first)) {
      stripped = level_date(c, seen.vllm) || syslog_stamp(c);
    }
    if (!stripped && first == '(') {
      stripped = actor_tag(c);
    }
    if (!stripped && round > 0) {
      stripped = level_word(c) || separator(c);
    } else if (!stripped) {
      stripped = level_word(c);
    }
    if (!stripped && alnum(first)) {
      stripped = compose_tag(c);
    }
    if (!stripped) {
      break;
    }
  }
  return c.i;
}

}  // namespace gpurent::oom_detail
