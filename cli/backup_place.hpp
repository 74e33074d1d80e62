// SPDX-License-Identifier: MIT
#pragma once
// Where a backup goes when no --to (or LOCAL) is given: `backup_dir` from the config file
// (GPURENT_BACKUP_DIR), else a directory per server under the user's data directory,
// $XDG_DATA_HOME/gpurent/backups/NAME (~/.local/share/gpurent/backups/NAME): never inside a
// project that `push` or `run` uploads. Both end in the server's name, made a safe file name.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

struct Services;

[[nodiscard]] Result<std::filesystem::path> default_backup_dir(const Services& s, const std::optional<std::string>& backup_dir,
                                                              std::string_view server_name);

// The server's name as one path component: letters, digits, '.', '-', '_' kept, others '_'.
[[nodiscard]] std::string backup_dir_name(std::string_view server_name);

}  // namespace gpurent
