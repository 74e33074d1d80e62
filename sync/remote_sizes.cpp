// SPDX-License-Identifier: MIT
#include "sync/remote_sizes.hpp"

#include "common/text.hpp"
#include "sync/remote_listing.hpp"

namespace gpurent {

std::string remote_sizes_command(const std::vector<std::string>& paths)
{
  std::string cmd;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string n = std::to_string(i);
    cmd += "r=" + remote_shell_path(paths[i]) + "\n";
    cmd += "if [ -e \"$r\" ] || [ -L \"$r\" ]; then LC_ALL=C find -H \"$r\" -type f -printf '%s\\n' 2>/dev/null | "
           "LC_ALL=C awk -v i=" + n + " '{b+=$1; n++} END {printf \"%d 1 %.0f %d\\n\", i, b, n}'\n"
           "else echo '" + n + " 0 0 0'; fi\n";
  }
  return cmd;
}

Result<std::vector<RemotePathSize>> parse_remote_sizes(std::string_view out, std::size_t count)
{
  std::vector<RemotePathSize> sizes(count);
  std::vector<bool> seen(count, false);
  const auto bad = [](std::string_view why) {
    return fail(Errc::invalid_input, "the server's answer about the paths to back up is unreadable (" + std::string(why) + ")");
  };
  while (!out.empty()) {
    const auto nl = out.find('\n');
    if (nl == std::string_view::npos) {
      return bad("an unterminated line");
    }
    const std::string_view line = out.substr(0, nl);
    out.remove_prefix(nl + 1);
    std::vector<std::string_view> words;
    std::size_t pos = 0;
    while (pos <= line.size()) {
      const auto sp = line.find(' ', pos);
      words.push_back(line.substr(pos, sp == std::string_view::npos ? std::string_view::npos : sp - pos));
      if (sp == std::string_view::npos) {
        break;
      }
      pos = sp + 1;
    }
    if (words.size() != 4) {
      return bad("a line without four fields");
    }
    const auto index = parse_u64(words[0]);
    const auto exists = parse_u64(words[1]);
    const auto bytes = parse_u64(words[2]);
    const auto files = parse_u64(words[3]);
    if (!index || !exists || !bytes || !files || *exists > 1) {
      return bad("a field that is not a number");
    }
    if (*index >= count || seen[*index]) {
      return bad("a path it was not asked about");
    }
    seen[*index] = true;
    sizes[*index] = RemotePathSize{*exists == 1, *bytes, *files};
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!seen[i]) {
      return bad("no answer for a path");
    }
  }
  return sizes;
}

}  // namespace gpurent
