// SPDX-License-Identifier: MIT
#pragma once
#include <atomic>

// Tables of C++ functions that the IO module (libgpurent_io.so) exports, for the parts of the pure
// code that need a library only the IO module links: OpenSSL's libcrypto (sync/crypto_engine.hpp)
// and libarchive (sync/tar_stream.hpp). Commands that never transfer never load them, so `plan`
// starts without them.
//
// Each table is exported as an extern "C" function returning a pointer to it. A binary that links
// the table's source (the IO module itself, the tests, the fuzz targets) reaches it through a weak
// reference; the executable, which does not, loads the module on first use through the loader that
// cli/main.cpp installs.

namespace gpurent {

// Returns the table exported under `name`, or nullptr with the reason written to stderr.
using IoSymbolLoader = const void* (*)(const char* name) noexcept;
void set_io_symbol_loader(IoSymbolLoader loader) noexcept;

using IoTableFunction = const void* (*)() noexcept;
// The table: from `linked` (the caller's weak reference; null where the source is not linked in),
// else from the loader. Throws std::runtime_error naming `what` when neither has it (the commands
// that use these tables have loaded the module already to reach the server, so this is not expected).
[[nodiscard]] const void* load_io_table(const char* name, IoTableFunction linked, const char* what);

// load_io_table once: the table is kept in `slot` (a function-local static of the caller).
template <class Table>
[[nodiscard]] const Table& cached_io_table(std::atomic<const Table*>& slot, const char* name, IoTableFunction linked,
                                           const char* what)
{
  const Table* t = slot.load(std::memory_order_acquire);
  if (t == nullptr) {
    t = static_cast<const Table*>(load_io_table(name, linked, what));
    slot.store(t, std::memory_order_release);
  }
  return *t;
}

}  // namespace gpurent
