// SPDX-License-Identifier: MIT
#include "sync/git_output.hpp"

#include <algorithm>

namespace gpurent {
namespace {

// Splits NUL-terminated records; a trailing record without its NUL is reported as `broken`.
std::vector<std::string_view> split_nul(std::string_view text, bool& broken)
{
  std::vector<std::string_view> out;
  broken = false;
  while (!text.empty()) {
    const auto nul = text.find('\0');
    if (nul == std::string_view::npos) {
      broken = true;
      break;
    }
    out.push_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  return out;
}

bool hex_id(std::string_view s)
{
  return (s.size() == 40 || s.size() == 64) &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

bool safe_relative_path(std::string_view path)
{
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = path.find('/', start);
    const auto part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
    if (slash == std::string_view::npos) {
      break;
    }
    start = slash + 1;
  }
  return true;
}

Result<GitListing> parse_ls_files(std::string_view z_output)
{
  bool broken = false;
  const auto records = split_nul(z_output, broken);
  if (broken) {
    return fail(Errc::invalid_input, "git ls-files: the answer ends inside a path");
  }
  GitListing out;
  for (auto r : records) {
    const bool dir = !r.empty() && r.back() == '/';
    if (dir) {
      r.remove_suffix(1);
    }
    if (!safe_relative_path(r)) {
      return fail(Errc::invalid_input, "git ls-files: a path gpurent cannot place under the pushed directory");
    }
    (dir ? out.nested : out.files).emplace_back(r);
  }
  for (auto* v : {&out.files, &out.nested}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

Result<std::map<std::string, std::string>> parse_check_ignore(std::string_view z_output)
{
  bool broken = false;
  const auto fields = split_nul(z_output, broken);
  if (broken || fields.size() % 4 != 0) {
    return fail(Errc::invalid_input, "git check-ignore: an incomplete record");
  }
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < fields.size(); i += 4) {
    const auto source = fields[i];
    const auto line = fields[i + 1];
    const auto pattern = fields[i + 2];
    const auto path = fields[i + 3];
    if (source.empty()) {
      if (!line.empty() || !pattern.empty()) {
        return fail(Errc::invalid_input, "git check-ignore: a pattern without its source");
      }
      continue;  // not ignored
    }
    if (line.empty() || !std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return fail(Errc::invalid_input, "git check-ignore: a line number that is not a number");
    }
    out[std::string(path)] = std::string(source) + ":" + std::string(line) + ": " + std::string(pattern);
  }
  return out;
}

std::optional<std::string> parse_commit_id(std::string_view output)
{
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) {
    output.remove_suffix(1);
  }
  if (!hex_id(output)) {
    return std::nullopt;
  }
  return std::string(output);
}

}  // namespace gpurent
