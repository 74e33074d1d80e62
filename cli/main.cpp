// SPDX-License-Identifier: MIT
// The composition root: builds the real ports, runs the command line, and holds the one catch.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/app.hpp"
#include "cli/io_loader.hpp"
#include "cli/services.hpp"
#include "common/clock.hpp"
#include "common/heap_pages.hpp"
#include "providers/state_store.hpp"
#include "sync/io_tables.hpp"
#include "sync/transport.hpp"

extern char** environ;

namespace {

std::map<std::string, std::string> read_environment()
{
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) {
      env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return env;
}

template <class T>
using Factory = void (*)(std::unique_ptr<T>*);

// GPURENT_IO_MODULE as main read it (the table loader is a plain function, so it cannot capture).
const std::string* g_module_override = nullptr;

// SHA-256, base64 and the tar streams live in the IO module (sync/io_tables.hpp): loaded on first use.
const void* load_io_table_symbol(const char* name) noexcept
{
  auto sym = gpurent::io_symbol(name, g_module_override != nullptr ? *g_module_override : std::string());
  if (!sym) {
    std::cerr << "gpurent: " << sym.error().message << "\n";
    return nullptr;
  }
  return reinterpret_cast<const void* (*)() noexcept>(*sym)();
}

}  // namespace

int main(int argc, char** argv)
{
  // Before the first large allocation: a start's fresh heap in huge pages (common/heap_pages.hpp).
  gpurent::back_heap_with_huge_pages();
  // sync_with_stdio(false) would allocate six stream buffers (~120 KiB) at every start.
  gpurent::SystemClock clock;
  gpurent::Services s{std::cout, std::cerr, std::cin, read_environment(), clock};
  s.stdout_tty = isatty(STDOUT_FILENO) == 1;
  s.stderr_tty = isatty(STDERR_FILENO) == 1;
  s.stdin_tty = isatty(STDIN_FILENO) == 1;
  if (!s.stdout_tty) {
    // Into a pipe or a file, stdout is written 64 KiB at a time, not 4 KiB: `plan --json` is
    // 4 writes instead of 63. The buffer is never freed: exit() flushes stdout after the static
    // destructors have run. Commands that stream (logs, run, backup's progress) flush as they go.
    constexpr std::size_t k_out_buffer = std::size_t{1} << 16;
    std::setvbuf(stdout, new char[k_out_buffer], _IOFBF, k_out_buffer);
  }
  s.handle_signals = true;  // cli/interrupt.hpp: up, down and backup watch SIGINT, SIGTERM, SIGHUP
  const std::string module_override = s.getenv("GPURENT_IO_MODULE").value_or("");
  g_module_override = &module_override;
  gpurent::set_io_symbol_loader(&load_io_table_symbol);

  std::unique_ptr<gpurent::HttpClient> http;
  s.http = [&]() -> gpurent::Result<gpurent::HttpClient*> {
    if (!http) {
      auto sym = gpurent::io_symbol("gpurent_make_http_client", module_override);
      if (!sym) {
        return std::unexpected(sym.error());
      }
      reinterpret_cast<Factory<gpurent::HttpClient>>(*sym)(&http);
    }
    return http.get();
  };

  std::unique_ptr<gpurent::StateStore> state;
  s.state = [&]() -> gpurent::Result<gpurent::StateStore*> {
    if (!state) {
      auto dir = gpurent::state_dir([&](const std::string& k) { return s.getenv(k); });
      if (!dir) {
        return std::unexpected(dir.error());
      }
      auto sym = gpurent::io_symbol("gpurent_open_state_store", module_override);
      if (!sym) {
        return std::unexpected(sym.error());
      }
      const std::filesystem::path db = *dir / "state.db";
      gpurent::Result<std::unique_ptr<gpurent::StateStore>> opened = std::unexpected(gpurent::Error{});
      using OpenFn = void (*)(const std::filesystem::path*, gpurent::Result<std::unique_ptr<gpurent::StateStore>>*);
      reinterpret_cast<OpenFn>(*sym)(&db, &opened);
      if (!opened) {
        return std::unexpected(opened.error());
      }
      state = std::move(*opened);
    }
    return state.get();
  };

  s.ssh_connect = [&](const gpurent::SshTarget& target, const gpurent::SshOptions& options)
      -> gpurent::Result<std::unique_ptr<gpurent::SshSession>> {
    auto sym = gpurent::io_symbol("gpurent_ssh_connect", module_override);
    if (!sym) {
      return std::unexpected(sym.error());
    }
    gpurent::Result<std::unique_ptr<gpurent::SshSession>> session = std::unexpected(gpurent::Error{});
    reinterpret_cast<gpurent::SshConnectFn>(*sym)(&target, &options, &session);
    return session;
  };

  std::vector<std::string> args(argv + 1, argv + argc);
  int code = 1;
  try {
    code = gpurent::run_app(args, s);
  } catch (const std::exception& e) {
    code = gpurent::report_error(s, gpurent::Error{gpurent::Errc::internal, e.what()});
  }
  std::cout.flush();
  return code;
}
