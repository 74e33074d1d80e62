// SPDX-License-Identifier: MIT
#pragma once
// The --then steps of `gpurent run`, carried out in order after the job ends, by `run` itself
// when it is still attached, else by the next `jobs`, `logs` or `status` that sees the job
// ended:
//   backup:REMOTE[:LOCAL]        `gpurent backup` of REMOTE (relative: to the job's directory)
//                                into LOCAL (default <backups>/<last part of REMOTE>, where
//                                <backups> is the server's directory, cli/backup_place.hpp)
//   down:stop|hibernate|destroy  `gpurent down` with its rules; destroy backs up first and needs
//                                that backup verified (after a backup step, of the same path)
// The first step that fails skips the rest: nothing is released after a failed backup.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;
struct JobServer;

// Checks the steps and writes them in their stored form ("backup:REMOTE:LOCAL" with REMOTE
// resolved against `workdir` and LOCAL absolute, "down:MODE"). `tracked`: NAME is a server
// rented with `gpurent up` (a down step needs one: attached servers are released in the
// provider's console, --host ones are not known at all). `backups`: where a backup step without
// LOCAL writes (empty: such a step is refused, LOCAL must be given).
[[nodiscard]] Result<std::vector<JobStep>> prepare_then_steps(const std::vector<std::string>& args, const std::string& workdir,
                                                              const std::filesystem::path& cwd,
                                                              const std::filesystem::path& backups, const std::string& name,
                                                              bool tracked);

// Carries out the job's pending steps (the caller holds the claim), saving each step's state in
// the store as it goes. True when every step is done.
[[nodiscard]] bool run_then_steps(Services& s, StateStore& store, const JobServer& server, JobRecord& job);

}  // namespace gpurent
