// SPDX-License-Identifier: MIT
#pragma once
// PURE: what `down --destroy` backs up and how it says so: every directory `push`/`run` used on
// the server (recorded in the state store), the job directories, the provider's volume path and
// any --path; a backup that would hold nothing of the jobs' is refused; and the command that
// resumes an interrupted one, with every flag the user gave, shell-quoted.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/ssh_options.hpp"
#include "sync/remote_sizes.hpp"

namespace gpurent {

// Where a path to back up comes from.
enum class BackupOrigin { push, job, workspace, given };
[[nodiscard]] const char* to_string(BackupOrigin o) noexcept;  // "push", "job", "workspace", "--path"

struct BackupSource {
  std::string path;  // remote, as recorded or given ("~/gpurent/train", "/workspace")
  std::vector<BackupOrigin> origins;    // every reason it is in the list
  std::optional<std::size_t> inside;    // covered by the source at this index (not copied itself)
  RemotePathSize size;                  // as the server answered
  [[nodiscard]] bool has(BackupOrigin o) const;
  // Written by the user's jobs: a push or job directory, or a --path they named.
  [[nodiscard]] bool users() const { return has(BackupOrigin::push) || has(BackupOrigin::job) || has(BackupOrigin::given); }
};

// The sources in order push dirs, job directories, workspace, --path; the same path (as the
// server's shell sees it: "~/x" is "x", trailing slashes dropped) listed once with every origin;
// a path below another one is marked `inside` it (copied with it, still probed and named). A
// workspace of "~" (no volume path of its own: the home directory) only when nothing else is.
// `path` as the server's shell names it relative to its login directory `home` ("~/x" for
// "HOME/x", "~" for HOME), so a job's absolute working directory and the "~/…" a push used are one
// path; any other path as it is.
[[nodiscard]] std::string home_relative(const std::string& path, std::string_view home);
[[nodiscard]] std::vector<BackupSource> gather_backup_sources(const std::vector<std::string>& push_dirs,
                                                              const std::vector<std::string>& job_dirs,
                                                              const std::string& workspace,
                                                              const std::vector<std::string>& given);

// The remote paths the backup copies: the sources not inside another one that exist.
[[nodiscard]] std::vector<std::string> paths_to_copy(const std::vector<BackupSource>& sources);

// Why the backup must not run (before anything is copied), or nullopt: a --path that is not
// on the server; two copied paths that would land in the same place under the destination;
// nothing of the jobs' (push/job dirs known, all missing or empty, and no --path with files);
// nothing at all to copy.
[[nodiscard]] std::optional<std::string> backup_refusal(const std::vector<BackupSource>& sources);

// "~/gpurent/train (push, 1.2 GB in 12 files)", "/workspace (workspace, NOT on the server)".
[[nodiscard]] std::string source_line(const BackupSource& s);

// What the user gave `down`, to say again in a hint.
struct DownFlags {
  std::string name;
  std::string mode;  // "destroy", "stop", "hibernate"
  bool no_backup = false;
  bool force = false;
  std::vector<std::string> paths;
  std::string to;
  SshFlags ssh;
  bool yes = false;
  bool json = false;
  bool verbose = false;
};
// A word as a POSIX shell reads it back: plain when it holds only safe characters, else quoted.
[[nodiscard]] std::string shell_word(const std::string& word);
// "gpurent down NAME --destroy --yes --path 'my ckpt' --to /b ...": every flag given, quoted.
[[nodiscard]] std::string down_command_line(const DownFlags& f);

}  // namespace gpurent
