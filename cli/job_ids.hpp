// SPDX-License-Identifier: MIT
#pragma once
// PURE: the words a user may give for a job of one server: its whole id, any unique prefix or
// suffix of it ("20261130-1015", "3fa9"), or its number on that server ("#2", or plain "2"):
// the server's jobs numbered 1, 2, ... in the order they started.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct JobStartTime {
  std::string id;
  std::int64_t started = 0;  // Unix seconds
};
// The ids in start order (ties by id; an id given twice counts once): job #N is element N-1.
[[nodiscard]] std::vector<std::string> number_jobs(std::vector<JobStartTime> jobs);

// The number of `id` in `numbered` (1-based), nullopt when absent.
[[nodiscard]] std::optional<std::size_t> job_number_of(const std::vector<std::string>& numbered, std::string_view id);

// What `ref` names among the server's jobs `numbered` (number_jobs' order), in this order: the
// whole id; "#N" (only a number, 1 to the count); plain digits N from 1 to the count; the one
// id that starts or ends with `ref`. Errors: Errc::usage for an empty ref or one that cannot be
// part of a job id, or one that matches several jobs (listing them); Errc::not_found when none.
// `server` names the server in the messages.
[[nodiscard]] Result<std::string> resolve_job_ref(std::string_view ref, const std::vector<std::string>& numbered,
                                                  std::string_view server);

// A group job's id on one node: the group's id and the node's rank ("<id>-r<rank>"), so that nodes
// sharing a home directory (NFS) each have their own job directory under ~/.gpurent/jobs.
[[nodiscard]] std::string node_job_id(std::string_view group_id, std::uint32_t rank);
// The group's id of a node's job id (the id without "-r<rank>"); the id itself when it has none.
[[nodiscard]] std::string group_job_id(std::string_view node_id);
// Whether `id` is another node's part of a group job, seen from the member of rank `rank` (a home
// directory shared by the members holds every node's job directories).
[[nodiscard]] bool other_nodes_job(std::string_view id, std::uint32_t rank);

}  // namespace gpurent
