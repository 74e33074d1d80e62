// SPDX-License-Identifier: MIT
#pragma once
// PURE: what is at some remote paths, before a backup copies them (`down --destroy` names each
// path with its size before it asks): one shell command and the reader of its answer.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct RemotePathSize {
  bool exists = false;      // a file, directory or link is there
  std::uint64_t bytes = 0;  // regular files below it (or it), apparent sizes, as a backup copies them
  std::uint64_t files = 0;  // how many
};

// One line per path, in order: "<index> <exists 0|1> <bytes> <files>". Paths travel as indexes,
// so a name with a newline cannot confuse the reader. GNU find (the backup needs it anyway).
[[nodiscard]] std::string remote_sizes_command(const std::vector<std::string>& paths);
// The answer for `count` paths; invalid_input when a line is malformed, missing or repeated.
[[nodiscard]] Result<std::vector<RemotePathSize>> parse_remote_sizes(std::string_view out, std::size_t count);

}  // namespace gpurent
