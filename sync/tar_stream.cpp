// SPDX-License-Identifier: MIT
#include "sync/tar_stream.hpp"

#include "sync/io_tables.hpp"

// Weak: resolved where sync/tar_archive.cpp is linked in (the IO module, tests and fuzz targets,
// which name it with -Wl,--undefined), null in the executable.
extern "C" const void* gpurent_tar_engine() noexcept __attribute__((weak));

namespace gpurent {

const TarEngine& tar_engine()
{
  static constinit std::atomic<const TarEngine*> s_engine{nullptr};
  return cached_io_table(s_engine, "gpurent_tar_engine", gpurent_tar_engine, "read or write tar (libarchive)");
}

}  // namespace gpurent
