// SPDX-License-Identifier: MIT
#pragma once
// PURE: what gpurent pushed to one server's remote directory, so that `push --delete` removes
// only what an earlier push sent (sync/push_delete.hpp) and never what a job wrote there. The
// record is kept on the laptop (cli/push_support.cpp writes it under the state directory,
// atomically, 0600); this file only turns it into text and back, strictly.
//
// The text: "gpurent-push-record\0" "1\0" KEY "\0" REMOTE_DIR "\0" COUNT "\0" then COUNT
// relative paths, sorted and unique, each followed by "\0", then "end\0". Nothing may follow.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sync/local_tree.hpp"
#include "sync/push_delete.hpp"
#include "sync/transport.hpp"

namespace gpurent {

inline constexpr std::size_t k_push_record_max_paths = 1'000'000;
inline constexpr std::size_t k_push_record_max_bytes = 256U * 1024U * 1024U;

// The file's name for a server (its record id or name) and remote directory: "push-" and 16 hex
// digits of a 64-bit FNV-1a hash of both (the text repeats them; a different pair read from the
// same name is not this record).
[[nodiscard]] std::string push_record_file_name(std::string_view server_key, std::string_view remote_dir);

// Errc::invalid_input for a path that is not relative to the directory, a key or directory with
// a NUL, or more than k_push_record_max_paths paths or bytes (then nothing is recorded).
[[nodiscard]] Result<std::string> write_push_record(std::string_view server_key, std::string_view remote_dir, const PathSet& paths);
// Errc::invalid_input when damaged (truncated, unsorted, unknown version, a bad path, too big);
// Errc::not_found when it records another server or directory.
[[nodiscard]] Result<PathSet> read_push_record(std::string_view text, std::string_view server_key, std::string_view remote_dir);

// What the server holds from gpurent after a push that delivered every local entry: the local
// entries, plus what was recorded before and is still on the server, less what --delete removed
// (a deleted directory takes what was below it).
[[nodiscard]] PathSet next_push_record(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote,
                                       const std::optional<PathSet>& pushed_before, const std::vector<std::string>& deleted);

}  // namespace gpurent
