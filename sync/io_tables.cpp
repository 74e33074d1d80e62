// SPDX-License-Identifier: MIT
#include "sync/io_tables.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace gpurent {
namespace {

constinit std::atomic<IoSymbolLoader> g_loader{nullptr};

}  // namespace

void set_io_symbol_loader(IoSymbolLoader loader) noexcept { g_loader.store(loader); }

const void* load_io_table(const char* name, IoTableFunction linked, const char* what)
{
  const void* table = nullptr;
  if (linked != nullptr) {
    table = linked();
  } else if (const IoSymbolLoader loader = g_loader.load(); loader != nullptr) {
    table = loader(name);
  }
  if (table == nullptr) {
    throw std::runtime_error(std::string("cannot ") + what + ": the IO module (libgpurent_io.so) did not load");
  }
  return table;
}

}  // namespace gpurent
