// SPDX-License-Identifier: MIT
#pragma once
// PURE: where the autostop watchdog sends its backups (`autostop --backup-to`), and the names
// of the files one arming writes there. sync/autostop_target.hpp checks them.
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sync/transport.hpp"

namespace gpurent {

// `USER@HOST:PATH` (scp form: port from the server's ssh config, 22 for gpurent) or
// `ssh://USER@HOST[:PORT]/PATH` (an absolute PATH; `/~/x` is x under the login directory).
struct BackupTarget {
  std::string user;
  std::string host;        // IPv6 without brackets
  std::uint16_t port = 0;  // 0: not given
  std::string path;        // absolute, or relative to the login directory
  // What `ssh` on the server is given: "user@host" or "ssh://user@host:port".
  [[nodiscard]] std::string ssh_destination() const;
  // Where gpurent connects to check it (port 22 when none was given).
  [[nodiscard]] SshTarget ssh_target() const;
};
[[nodiscard]] Result<BackupTarget> parse_backup_target(std::string_view text);

// The file names every backup of one arming starts with: "gpurent-autostop-<instance>-<armed_at>-"
// (the instance id with every byte outside [A-Za-z0-9_.-] as '_'), followed by the Unix time the
// backup started and ".tar".
[[nodiscard]] std::string autostop_backup_stem(std::string_view instance_id, std::int64_t armed_at);

}  // namespace gpurent
