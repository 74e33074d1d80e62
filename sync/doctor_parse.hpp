// SPDX-License-Identifier: MIT
#pragma once
// PURE: what `gpurent doctor` runs on a server, the parsers of each command's output, and the
// diagnosis (which processes hold GPU memory, which are leftovers, what to stop).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/gpu_observation.hpp"
#include "common/result.hpp"

namespace gpurent {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::uint64_t memory_total_mib = 0;
  std::uint64_t memory_used_mib = 0;
  std::uint64_t memory_free_mib = 0;
  std::string driver;
  std::optional<std::uint32_t> utilization_pct;  // utilization.gpu; nullopt when not reported
  auto operator<=>(const GpuInfo&) const = default;
};

struct GpuApp {
  long pid = 0;
  std::string process_name;
  std::optional<std::uint64_t> used_mib;  // "[N/A]" inside some containers
  auto operator<=>(const GpuApp&) const = default;
};

struct PsRow {
  long pid = 0;
  long ppid = 0;
  std::string stat;
  std::int64_t elapsed_s = 0;
  std::string args;
  auto operator<=>(const PsRow&) const = default;
};

struct TorchInfo {
  std::string version;
  std::string cuda;  // "None" for a CPU-only build
  bool available = false;
};

// `nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,driver_version,utilization.gpu --format=csv,noheader,nounits`
// Also the older 6-field form without utilization.gpu (utilization_pct stays nullopt).
[[nodiscard]] Result<std::vector<GpuInfo>> parse_gpu_csv(std::string_view out);
// `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits`
[[nodiscard]] Result<std::vector<GpuApp>> parse_compute_apps_csv(std::string_view out);
// `ps -eo pid,ppid,stat,etimes,args` (header line first)
[[nodiscard]] Result<std::vector<PsRow>> parse_ps(std::string_view out);
// `python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"`
[[nodiscard]] std::optional<TorchInfo> parse_torch_line(std::string_view out);
// `nvcc --version` -> "12.4" (the release), nullopt when absent.
[[nodiscard]] std::optional<std::string> parse_nvcc_version(std::string_view out);

// The one script doctor runs (one exec, one shell start-up) and its output split by section:
// name -> (exit status, stdout+stderr).
[[nodiscard]] std::string doctor_script();
struct SectionOutput {
  int status = 0;
  std::string text;
};
[[nodiscard]] std::map<std::string, SectionOutput> split_sections(std::string_view out);

enum class ProcessKind { training, notebook, model_server, other };
[[nodiscard]] std::string_view to_string(ProcessKind k) noexcept;
[[nodiscard]] ProcessKind classify_process(std::string_view args) noexcept;

struct GpuProcess {
  long pid = 0;
  std::string name;
  std::optional<std::uint64_t> used_mib;
  ProcessKind kind = ProcessKind::other;
  bool leftover = false;
  std::string why;      // why it is (or may be) a leftover
  std::string command;  // full command line from ps, when visible
};

struct DoctorReport {
  bool nvidia_smi = false;  // nvidia-smi ran
  bool apps_listed = false; // nvidia-smi --query-compute-apps answered (an empty list included)
  std::string gpu_problem;  // why there is no GPU list, when there is none
  std::vector<GpuInfo> gpus;
  std::vector<GpuProcess> processes;
  std::optional<TorchInfo> torch;
  std::string torch_problem;
  std::optional<std::string> nvcc;
  std::vector<std::string> advice;
};

[[nodiscard]] DoctorReport diagnose(const std::map<std::string, SectionOutput>& sections);

// What `gpurent status` keeps of a report for the idle warning: per-GPU memory and utilization
// and how many processes hold GPU memory (nullopt when the process query failed). nullopt when
// the report has no GPU list (nothing to say about idleness).
[[nodiscard]] std::optional<DoctorObservation> to_observation(const DoctorReport& report, std::int64_t server_id,
                                                              TimePoint at);

}  // namespace gpurent
