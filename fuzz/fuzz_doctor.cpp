// SPDX-License-Identifier: MIT
// Fuzz target for what `gpurent doctor` reads back from a server (sync/doctor_parse.hpp): the
// script's output split into sections, the nvidia-smi CSV parsers (GPU list, compute apps), ps,
// the torch line and nvcc --version, the diagnosis, and the observation `status` keeps for its
// idle-GPU rule (providers/idle.hpp). Any bytes give a report, never a crash or a sanitizer
// report; every process the report names is one nvidia-smi listed, every advice line is one
// line, and the observation agrees with the report.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "providers/idle.hpp"
#include "sync/doctor_parse.hpp"

namespace {

void check_one_line(const std::string& s)
{
  if (s.find('\n') != std::string::npos) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // Each parser alone, over the whole input (the sections below reach them with less freedom).
  const auto gpus = gpurent::parse_gpu_csv(text);
  if (gpus) {
    for (const auto& g : *gpus) {
      if (g.utilization_pct && *g.utilization_pct > 100) {
        std::abort();
      }
    }
  } else if (gpus.error().message.empty()) {
    std::abort();
  }
  const auto apps = gpurent::parse_compute_apps_csv(text);
  if (apps) {
    for (const auto& a : *apps) {
      if (a.pid <= 0) {
        std::abort();
      }
    }
  }
  (void)gpurent::parse_ps(text);
  if (const auto torch = gpurent::parse_torch_line(text); torch && torch->version.empty()) {
    std::abort();
  }
  if (const auto nvcc = gpurent::parse_nvcc_version(text); nvcc && nvcc->empty()) {
    std::abort();
  }

  // The whole doctor run, as `gpurent doctor` does it.
  const auto sections = gpurent::split_sections(text);
  for (const auto& [name, section] : sections) {
    check_one_line(name);
  }
  const auto report = gpurent::diagnose(sections);
  for (const auto& a : report.advice) {
    if (a.empty()) {
      std::abort();
    }
    check_one_line(a);
  }
  if (!report.processes.empty() && !report.apps_listed) {
    std::abort();  // processes come only from nvidia-smi's list
  }
  const gpurent::TimePoint at{std::chrono::seconds{1'800'000'000}};
  const auto obs = gpurent::to_observation(report, 7, at);
  if (obs.has_value() == report.gpus.empty()) {
    std::abort();
  }
  if (obs) {
    if (obs->gpus.size() != report.gpus.size() || obs->compute_processes.has_value() != report.apps_listed) {
      std::abort();
    }
    const std::vector<gpurent::DoctorObservation> seen{*obs};
    const auto span = gpurent::idle_span(gpurent::ServerStatus::running, at - std::chrono::hours(1), seen,
                                         at + std::chrono::minutes(30));
    if (span.has_value() != gpurent::observation_idle(*obs)) {
      std::abort();  // a single observation since the server started: idle exactly when it is idle
    }
    if (span) {
      if (span->minutes != 30 || span->observations != 1) {
        std::abort();
      }
      check_one_line(gpurent::idle_warning(*span));
    }
  }
  return 0;
}
