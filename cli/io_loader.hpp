// SPDX-License-Identifier: MIT
#pragma once
// Loads libgpurent_io.so (curl, libssh2, SQLite) on first use, so offline commands start fast.
#include <string>

#include "common/result.hpp"

namespace gpurent {

// Returns the address of an exported factory in the IO module. The module is looked up in
// $GPURENT_IO_MODULE, then beside the running executable.
[[nodiscard]] Result<void*> io_symbol(const char* name, const std::string& module_override);

}  // namespace gpurent
