// SPDX-License-Identifier: MIT
// One run of a local program to its end, on sync/local_child's pipes.
#include "sync/local_process.hpp"

#include <chrono>
#include <string>

#include "sync/local_child.hpp"

namespace gpurent {

Result<LocalProcessResult> run_local_process(const LocalProcessRequest& req)
{
  if (req.argv.empty()) {
    return fail(Errc::internal, "run_local_process: no program");
  }
  LocalChildRequest spawn;
  spawn.argv = req.argv;
  spawn.unset_env = req.unset_env;
  spawn.cwd = req.cwd;
  spawn.own_group = false;     // a short run: a Ctrl-C reaches it with gpurent
  spawn.err_kept = 1U << 20;  // a runaway stderr is cut, not kept
  TRY_ASSIGN(auto child, LocalChild::start(spawn));
  LocalProcessResult result;
  const auto pumped = child->pump(
      req.input, true,
      [&](const char* data, std::size_t size) -> Result<void> {
        result.out.append(data, size);
        if (result.out.size() > req.max_output) {
          return fail(Errc::internal, req.argv[0] + " printed more than " + std::to_string(req.max_output) + " bytes");
        }
        return {};
      },
      {});
  if (!pumped) {
    child->kill(std::chrono::milliseconds(0));
    return std::unexpected(pumped.error());
  }
  result.status = child->wait();
  result.err = child->err();
  return result;
}

}  // namespace gpurent
