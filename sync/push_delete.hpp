// SPDX-License-Identifier: MIT
#pragma once
// PURE: `push --delete`, what the server holds in the pushed directory that the local tree no
// longer has, and the remote command that removes it.
//
// Kept, whatever the local tree says: anything with a `.git` component (a repository's
// history), gpurent's own bookkeeping (FILE.gpurent-partial and its range ledger: a killed
// push's verified ranges), what the local walk left out on purpose (ignored, excluded, gpurent's
// own directories) and everything below it, and every directory that holds something local or
// left out. Only paths relative to the pushed directory, without "." or ".." components, are
// ever named; a directory to delete is named once, not what is below it.
//
// And only what an earlier push SENT (sync/push_record.hpp): a path on the server that gpurent
// never pushed there (a job's checkpoints and outputs, what a command on the server wrote) is
// kept, and so is every directory that holds one. Without a record nothing is deleted.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/local_tree.hpp"
#include "sync/transport.hpp"

namespace gpurent {

using PathSet = std::set<std::string, std::less<>>;
// `path` itself or one of its ancestor directories is in `set`.
[[nodiscard]] bool path_or_ancestor_in(const PathSet& set, std::string_view path);

struct PushDeletions {
  std::vector<std::string> doomed;         // to delete: sorted, top-most only (a directory stands for what is below it)
  std::vector<std::string> never_pushed;   // kept: on the server, not local, never pushed by gpurent (top-most only)
  bool recorded = false;                   // there was a record of earlier pushes (without one nothing is deleted)
};

// Candidates = (recorded as pushed before) ∩ (on the server now) − (local now), under the filters
// above; `pushed_before` nullopt: no record (first push with --delete), nothing is deleted.
[[nodiscard]] PushDeletions plan_push_deletions(const std::vector<LocalEntry>& local, const std::vector<SkippedPath>& skipped,
                                                const std::vector<RemoteEntry>& remote, const std::optional<PathSet>& pushed_before);

// The command: in `dir` (as remote_shell_path takes it), `rm -rf` each path of its stdin, which
// push_delete_input writes: NUL-separated, each prefixed "./" (a name starting with '-' is never
// an option). Prints "gpurent-delete\0" STATUS "\0" (rm's exit status), or
// "gpurent-agent-error\0cd\0" and exits 3 when the directory is missing.
[[nodiscard]] std::string push_delete_command(std::string_view dir);
// Errc::invalid_input for a path push_delete_command must never receive (empty, absolute, with
// a "." or ".." component, or a NUL).
[[nodiscard]] Result<std::string> push_delete_input(const std::vector<std::string>& rels);
// rm's exit status. Errc::unavailable when the directory is gone, invalid_input when unreadable.
[[nodiscard]] Result<int> parse_push_delete(std::string_view out);

}  // namespace gpurent
