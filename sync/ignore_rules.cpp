// SPDX-License-Identifier: MIT
#include "sync/ignore_rules.hpp"

namespace gpurent {
namespace {

enum class Wm { match, nomatch, abort_all, abort_to_starstar };

bool in_class(std::string_view name, unsigned char c, bool& known)
{
  known = true;
  const bool upper = c >= 'A' && c <= 'Z';
  const bool lower = c >= 'a' && c <= 'z';
  const bool digit = c >= '0' && c <= '9';
  const bool print = c >= 0x20 && c <= 0x7e;
  if (name == "alnum") {
    return upper || lower || digit;
  }
  if (name == "alpha") {
    return upper || lower;
  }
  if (name == "blank") {
    return c == ' ' || c == '\t';
  }
  if (name == "cntrl") {
    return c < 0x20 || c == 0x7f;
  }
  if (name == "digit") {
    return digit;
  }
  if (name == "graph") {
    return print && c != ' ';
  }
  if (name == "lower") {
    return lower;
  }
  if (name == "print") {
    return print;
  }
  if (name == "punct") {
    return print && c != ' ' && !upper && !lower && !digit;
  }
  if (name == "space") {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
  if (name == "upper") {
    return upper;
  }
  if (name == "xdigit") {
    return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  known = false;
  return false;
}

// A bracket expression starting at pat[p] == '['. On a match, `p` is left on its closing ']'.
Wm match_set(std::string_view pat, std::size_t& p, unsigned char tc, bool pathname)
{
  std::size_t q = p + 1;
  if (q >= pat.size()) {
    return Wm::abort_all;
  }
  bool negated = false;
  if (pat[q] == '!' || pat[q] == '^') {
    negated = true;
    ++q;
  }
  unsigned char prev = 0;
  bool matched = false;
  bool first = true;
  while (true) {
    if (q >= pat.size()) {
      return Wm::abort_all;
    }
    auto c = static_cast<unsigned char>(pat[q]);
    if (c == ']' && !first) {
      break;
    }
    first = false;
    if (c == '\\') {
      if (++q >= pat.size()) {
        return Wm::abort_all;
      }
      c = static_cast<unsigned char>(pat[q]);
      matched = matched || tc == c;
    } else if (c == '-' && prev != 0 && q + 1 < pat.size() && pat[q + 1] != ']') {
      c = static_cast<unsigned char>(pat[++q]);
      if (c == '\\') {
        if (++q >= pat.size()) {
          return Wm::abort_all;
        }
        c = static_cast<unsigned char>(pat[q]);
      }
      matched = matched || (tc <= c && tc >= prev);
      c = 0;
    } else if (c == '[' && q + 1 < pat.size() && pat[q + 1] == ':') {
      const std::size_t s = q + 2;
      std::size_t e = s;
      while (e < pat.size() && pat[e] != ']') {
        ++e;
      }
      if (e >= pat.size()) {
        return Wm::abort_all;
      }
      if (e == s || pat[e - 1] != ':') {
        // No ":]": the '[' is an ordinary member.
        matched = matched || tc == '[';
        prev = '[';
        ++q;
        continue;
      }
      bool known = true;
      matched = in_class(pat.substr(s, e - 1 - s), tc, known) || matched;
      if (!known) {
        return Wm::abort_all;
      }
      q = e;
      c = 0;
    } else {
      matched = matched || tc == c;
    }
    prev = c;
    ++q;
  }
  if (matched == negated || (pathname && tc == '/')) {
    return Wm::nomatch;
  }
  p = q;
  return Wm::match;
}

Wm dowild(std::string_view pat, std::size_t p, std::string_view text, std::size_t t, bool pathname)
{
  for (; p < pat.size(); ++p, ++t) {
    const char pc = pat[p];
    if (t >= text.size() && pc != '*') {
      return Wm::abort_all;
    }
    const auto tc = t < text.size() ? static_cast<unsigned char>(text[t]) : static_cast<unsigned char>(0);
    switch (pc) {
    case '\\':
      if (++p >= pat.size() || tc != static_cast<unsigned char>(pat[p])) {
        return Wm::nomatch;
      }
      continue;
    case '?':
      if (pathname && tc == '/') {
        return Wm::nomatch;
      }
      continue;
    case '[': {
      const Wm r = match_set(pat, p, tc, pathname);
      if (r != Wm::match) {
        return r;
      }
      continue;
    }
    case '*': {
      const std::size_t star = p;
      bool match_slash = !pathname;
      std::size_t next = p + 1;
      if (next < pat.size() && pat[next] == '*') {
        while (next < pat.size() && pat[next] == '*') {
          ++next;
        }
        const bool before = star == 0 || pat[star - 1] == '/';
        const bool after = next == pat.size() || pat[next] == '/' ||
                           (pat[next] == '\\' && next + 1 < pat.size() && pat[next + 1] == '/');
        match_slash = before && after;
        // "/**/" also matches no directory at all.
        if (match_slash && next < pat.size() && pat[next] == '/' && dowild(pat, next + 1, text, t, pathname) == Wm::match) {
          return Wm::match;
        }
      }
      if (next == pat.size()) {
        return (!match_slash && text.find('/', t) != std::string_view::npos) ? Wm::nomatch : Wm::match;
      }
      if (!match_slash && pat[next] == '/') {
        // A single '*' followed by '/' matches up to the next slash.
        const auto slash = text.find('/', t);
        if (slash == std::string_view::npos) {
          return Wm::nomatch;
        }
        p = next;
        t = slash;
        continue;
      }
      for (; t < text.size(); ++t) {
        const Wm m = dowild(pat, next, text, t, pathname);
        if (m != Wm::nomatch) {
          if (!match_slash || m != Wm::abort_to_starstar) {
            return m;
          }
        } else if (!match_slash && text[t] == '/') {
          return Wm::abort_to_starstar;
        }
      }
      return Wm::abort_all;
    }
    default:
      if (tc != static_cast<unsigned char>(pc)) {
        return Wm::nomatch;
      }
      continue;
    }
  }
  return t >= text.size() ? Wm::match : Wm::nomatch;
}

// git's trailing-space rule: unescaped trailing spaces go; "\ " keeps its space.
std::string_view trim_trailing_spaces(std::string_view line)
{
  std::size_t last_space = std::string_view::npos;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == ' ') {
      if (last_space == std::string_view::npos) {
        last_space = i;
      }
    } else if (line[i] == '\\') {
      if (++i >= line.size()) {
        return line;
      }
      last_space = std::string_view::npos;
    } else {
      last_space = std::string_view::npos;
    }
  }
  return last_space == std::string_view::npos ? line : line.substr(0, last_space);
}

IgnorePattern make_pattern(std::string_view line, std::string_view base, std::string origin)
{
  IgnorePattern p;
  p.base = std::string(base);
  p.origin = std::move(origin);
  if (!line.empty() && line.front() == '!') {
    p.negated = true;
    line.remove_prefix(1);
  }
  if (!line.empty() && line.back() == '/') {
    p.dir_only = true;
    line.remove_suffix(1);
  }
  p.basename_only = line.find('/') == std::string_view::npos;
  p.pattern = std::string(line);
  return p;
}

template <class List>
const IgnorePattern* last_match(const List& list, std::string_view path, bool is_dir)
{
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if (pattern_matches(*it, path, is_dir)) {
      return &*it;
    }
  }
  return nullptr;
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view text, bool pathname)
{
  return dowild(pattern, 0, text, 0, pathname) == Wm::match;
}

std::vector<IgnorePattern> parse_ignore_file(std::string_view text, std::string_view base, std::string_view origin)
{
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);
  }
  std::vector<IgnorePattern> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    if (line.back() == '\r') {
      line.remove_suffix(1);
    }
    line = trim_trailing_spaces(line);
    if (line.empty()) {
      continue;
    }
    out.push_back(make_pattern(line, base, std::string(origin) + ":" + std::to_string(line_no)));
  }
  return out;
}

IgnorePattern exclude_pattern(std::string_view glob)
{
  return make_pattern(glob, "", "--exclude " + std::string(glob));
}

bool pattern_matches(const IgnorePattern& p, std::string_view path, bool is_dir)
{
  if (p.dir_only && !is_dir) {
    return false;
  }
  // Only paths below the directory of the pattern's file.
  std::string_view name = path;
  if (!p.base.empty()) {
    if (path.size() <= p.base.size() || !path.starts_with(p.base) || path[p.base.size()] != '/') {
      return false;
    }
    name.remove_prefix(p.base.size() + 1);
  }
  if (p.basename_only) {
    const auto slash = name.rfind('/');
    return wildmatch(p.pattern, slash == std::string_view::npos ? name : name.substr(slash + 1), false);
  }
  std::string_view pat = p.pattern;
  if (pat.starts_with('/')) {
    pat.remove_prefix(1);
  }
  return wildmatch(pat, name, true);
}

void IgnoreMatcher::push_dir(std::vector<IgnorePattern> gitignore, std::vector<IgnorePattern> gpurentignore)
{
  m_git.push_back(std::move(gitignore));
  m_gpurent.push_back(std::move(gpurentignore));
}

void IgnoreMatcher::pop_dir()
{
  if (!m_git.empty()) {
    m_git.pop_back();
    m_gpurent.pop_back();
  }
}

const IgnorePattern* IgnoreMatcher::decide(std::string_view path, bool is_dir, bool gitignore) const
{
  if (const auto* p = last_match(m_excludes, path, is_dir)) {
    return p;
  }
  for (auto level = m_gpurent.rbegin(); level != m_gpurent.rend(); ++level) {
    if (const auto* p = last_match(*level, path, is_dir)) {
      return p;
    }
  }
  if (!gitignore) {
    return nullptr;
  }
  for (auto level = m_git.rbegin(); level != m_git.rend(); ++level) {
    if (const auto* p = last_match(*level, path, is_dir)) {
      return p;
    }
  }
  return nullptr;
}

}  // namespace gpurent
