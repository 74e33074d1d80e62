// SPDX-License-Identifier: MIT
#include "cli/io_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace gpurent {
namespace {

std::filesystem::path module_path(const std::string& module_override)
{
  if (!module_override.empty()) {
    return module_override;
  }
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto dir = ec ? std::filesystem::current_path() : exe.parent_path();
  // Beside the executable (the build tree), else where `cmake --install` puts it (PREFIX/lib/gpurent).
  const auto beside = dir / "libgpurent_io.so";
  const auto installed = dir.parent_path() / "lib" / "gpurent" / "libgpurent_io.so";
  return std::filesystem::exists(beside, ec) || !std::filesystem::exists(installed, ec) ? beside : installed;
}

}  // namespace

Result<void*> io_symbol(const char* name, const std::string& module_override)
{
  static void* handle = nullptr;
  if (handle == nullptr) {
    const auto path = module_path(module_override);
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      return fail(Errc::internal, "cannot load the IO module " + path.string() + ": " + (why ? why : "unknown") +
                                      "; rebuild gpurent or set GPURENT_IO_MODULE to libgpurent_io.so");
    }
  }
  void* sym = dlsym(handle, name);
  if (sym == nullptr) {
    return fail(Errc::internal, std::string("the IO module lacks ") + name + "; rebuild gpurent");
  }
  return sym;
}

}  // namespace gpurent
