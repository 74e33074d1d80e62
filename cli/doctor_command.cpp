// SPDX-License-Identifier: MIT
// `gpurent doctor (NAME | --host USER@HOST[:PORT]) [--json]`: GPUs, what holds their memory,
// PyTorch/CUDA versions, and what to stop. One connection, one remote script. For a tracked
// server (NAME), what it saw is recorded for the idle warning of `gpurent status`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/group_support.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "cli/ssh_options.hpp"
#include "providers/state_store.hpp"
#include "sync/doctor_parse.hpp"

namespace gpurent {
namespace {

struct DoctorOptions {
  std::string name;
  SshFlags ssh;
};

nlohmann::json to_json(const DoctorReport& r)
{
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"memory_total_mib", g.memory_total_mib},
                    {"memory_used_mib", g.memory_used_mib},
                    {"memory_free_mib", g.memory_free_mib},
                    {"utilization_pct", g.utilization_pct ? nlohmann::json(*g.utilization_pct) : nlohmann::json(nullptr)},
                    {"driver", g.driver}});
  }
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& p : r.processes) {
    procs.push_back({{"pid", p.pid},
                     {"name", p.name},
                     {"used_mib", p.used_mib ? nlohmann::json(*p.used_mib) : nlohmann::json(nullptr)},
                     {"kind", std::string(to_string(p.kind))},
                     {"leftover", p.leftover},
                     {"command", p.command}});
  }
  nlohmann::json torch = nullptr;
  if (r.torch) {
    torch = {{"version", r.torch->version}, {"cuda", r.torch->cuda}, {"available", r.torch->available}};
  }
  return {{"gpus", gpus},
          {"gpu_problem", r.gpu_problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.gpu_problem)},
          {"processes", procs},
          {"torch", torch},
          {"nvcc", r.nvcc ? nlohmann::json(*r.nvcc) : nlohmann::json(nullptr)},
          {"advice", r.advice}};
}

void print_text(Services& s, const std::string& who, const DoctorReport& r)
{
  auto gib = [](std::uint64_t mib) { return static_cast<double>(mib) / 1024.0; };
  s.out << "Server " << who << "\n\nGPUs\n";
  if (r.gpus.empty()) {
    s.out << "  none: " << r.gpu_problem << "\n";
  }
  for (const auto& g : r.gpus) {
    const std::string busy = g.utilization_pct ? fmt::format(", {}% busy", *g.utilization_pct) : std::string();
    const std::string line = fmt::format("{}  {}  {:.1f} GiB: {:.1f} used, {:.1f} free{}  (driver {})", g.index, g.name,
                                         gib(g.memory_total_mib), gib(g.memory_used_mib), gib(g.memory_free_mib), busy,
                                         g.driver);
    s.out << "  " << wrap_text(line, 78, "     ") << "\n";
  }
  if (r.nvidia_smi) {
    s.out << "\nProcesses holding GPU memory\n";
    if (r.processes.empty()) {
      s.out << "  none listed\n";
    } else {
      s.out << fmt::format("  {:>8} {:>8}  {:<15} {:<8} {}\n", "PID", "MiB", "KIND", "LEFTOVER", "COMMAND");
    }
    for (const auto& p : r.processes) {
      std::string cmd = p.command.empty() ? p.name : p.command;
      if (cmd.size() > 34) {
        cmd = cmd.substr(0, 31) + "...";
      }
      s.out << fmt::format("  {:>8} {:>8}  {:<15} {:<8} {}\n", p.pid, p.used_mib ? std::to_string(*p.used_mib) : std::string("?"),
                           to_string(p.kind), p.leftover ? "yes" : "no", cmd);
    }
  }
  s.out << "\nPyTorch   ";
  if (r.torch) {
    s.out << r.torch->version << " (CUDA " << r.torch->cuda << "), GPU usable: " << (r.torch->available ? "yes" : "NO") << "\n";
  } else {
    s.out << "not usable: " << r.torch_problem << "\n";
  }
  s.out << "nvcc      " << (r.nvcc ? *r.nvcc : std::string("not found")) << "\n";
  if (!r.advice.empty()) {
    s.out << "\nWhat to do\n";
    for (const auto& a : r.advice) {
      s.out << "  " << wrap_text(a, 78, "      ") << "\n";  // within 80 columns
    }
  }
}

// Keeps what doctor saw on a tracked server for `gpurent status`; a failure is only a warning.
void record_observation(Services& s, const DoctorReport& report, std::int64_t server_id)
{
  const auto observation = to_observation(report, server_id, s.clock.now());
  if (!observation) {
    return;
  }
  auto store = s.state();
  auto saved = store ? (*store)->add_doctor_observation(*observation)
                     : Result<DoctorObservation>(std::unexpected(store.error()));
  if (!saved) {
    report_warning(s, "this check was not recorded for `gpurent status`: " + saved.error().message);
  }
}

Result<int> run(Services& s, DoctorOptions& o)
{
  TRY_ASSIGN(SshOptions options, make_ssh_options(s, o.ssh));
  TRY_ASSIGN(const SshDestination dest, resolve_destination(s, o.name, o.ssh, options));
  TRY_ASSIGN(auto session, connect_ssh(s, dest.target, options));
  TRY_ASSIGN(const ExecResult result, session->exec(doctor_script(), {}));
  const auto sections = split_sections(result.out);
  if (sections.empty()) {
    return fail(Errc::unavailable, "doctor on " + to_string(dest.target) + ": the checks produced no output (" +
                                       result.err.substr(0, 200) + "); is the login shell a POSIX shell?");
  }
  const DoctorReport report = diagnose(sections);
  if (dest.server_id != 0) {
    record_observation(s, report, dest.server_id);
  }
  if (s.global.json) {
    s.out << to_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    print_text(s, to_string(dest.target), report);
  }
  if (report.gpus.empty()) {
    // The report above says what was seen; the exit status says the server cannot run GPU work.
    return report_error(s, Error{Errc::not_found, "doctor: no GPU visible on " + to_string(dest.target) + ": " +
                                                      report.gpu_problem +
                                                      "; check that it is a GPU server with a GPU image and a loaded "
                                                      "driver (restart it, or ask the provider)"});
  }
  return 0;
}

}  // namespace

void add_doctor_command(CLI::App& app, Services& s)
{
  auto opts = std::make_shared<DoctorOptions>();
  auto* sub = app.add_subcommand("doctor", "check a server's GPUs, what holds their memory, PyTorch and CUDA");
  sub->add_option("name", opts->name, "a tracked server or group (or use --host)");
  add_ssh_flags(*sub, opts->ssh);
  sub->callback([&s, opts] {
    if (for_group_named(s, *opts, &DoctorOptions::name, [](Services& ms, DoctorOptions& o) { return run(ms, o); })) {
      return;
    }
    auto r = run(s, *opts);
    s.exit_code = r ? *r : report_error(s, r.error());
  });
}

}  // namespace gpurent
