// SPDX-License-Identifier: MIT
#include "sync/tar_stream.hpp"

#include <atomic>

#include "sync/io_tables.hpp"

// Weak: resolved where sync/tar_archive.cpp is linked in (the IO module, tests and fuzz targets,
// which name it with -Wl,--undefined), null in the executable.
extern "C" const void* gpurent_tar_engine() noexcept __attribute__((weak));

namespace gpurent {

const TarEngine& tar_engine()
{
  static constinit std::atomic<const TarEngine*> s_engine{nullptr};
  const TarEngine* e = s_engine.load(std::memory_order_acquire);
  if (e == nullptr) {
    e = static_cast<const TarEngine*>(load_io_table("gpurent_tar_engine", gpurent_tar_engine, "read or write tar (libarchive)"));
    s_engine.store(e, std::memory_order_release);
  }
  return *e;
}

}  // namespace gpurent
