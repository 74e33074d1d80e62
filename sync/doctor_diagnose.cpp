// SPDX-License-Identifier: MIT
// The diagnosis of `gpurent doctor` (sync/doctor_parse.hpp): which processes hold GPU memory,
// which are leftovers, what to stop, and what `status` keeps of it. The parsers of each
// command's output are in doctor_parse.cpp.
#include <algorithm>
#include <cctype>
#include <string>

#include "common/text.hpp"
#include "sync/doctor_parse.hpp"

namespace gpurent {
namespace {

bool contains(std::string_view hay, std::string_view needle)
{
  return hay.find(needle) != std::string_view::npos;
}

std::string short_command(std::string_view cmd)
{
  return cmd.size() > 60 ? std::string(cmd.substr(0, 57)) + "..." : std::string(cmd);
}

}  // namespace

std::string_view to_string(ProcessKind k) noexcept
{
  switch (k) {
  case ProcessKind::training: return "training";
  case ProcessKind::notebook: return "notebook-kernel";
  case ProcessKind::model_server: return "model-server";
  case ProcessKind::other: return "other";
  }
  return "other";
}

ProcessKind classify_process(std::string_view args) noexcept
{
  std::string lower(args);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  if (contains(lower, "ipykernel")) {
    return ProcessKind::notebook;
  }
  for (const std::string_view s : {"vllm", "ollama", "llama-server", "text-generation-launcher", "text-generation-server",
                                   "sglang", "tritonserver", "lmdeploy"}) {
    if (contains(lower, s)) {
      return ProcessKind::model_server;
    }
  }
  for (const std::string_view s : {"train", "torchrun", "accelerate", "deepspeed", "finetune", "fine_tune", "torch.distributed",
                                   "axolotl", "unsloth", "torchtune", "tune run"}) {
    if (contains(lower, s)) {
      return ProcessKind::training;
    }
  }
  return ProcessKind::other;
}

DoctorReport diagnose(const std::map<std::string, SectionOutput>& sections)
{
  DoctorReport r;
  auto get = [&](const std::string& k) -> const SectionOutput* {
    const auto it = sections.find(k);
    return it == sections.end() ? nullptr : &it->second;
  };
  const SectionOutput* gpus = get("gpus");
  if (gpus == nullptr || gpus->status == 127) {
    r.gpu_problem = "nvidia-smi not found: no NVIDIA driver on this server's PATH";
    r.advice.emplace_back("No NVIDIA GPU is visible (nvidia-smi is missing). Is this a GPU server, and was the GPU image chosen?");
  } else if (gpus->status != 0) {
    r.nvidia_smi = true;
    const auto first_line = std::string(trim(gpus->text.substr(0, gpus->text.find('\n'))));
    r.gpu_problem = "nvidia-smi failed: " + (first_line.empty() ? "exit status " + std::to_string(gpus->status) : first_line);
    r.advice.push_back(r.gpu_problem + ". If the driver is not loaded, restart the server or ask the provider.");
  } else if (auto parsed = parse_gpu_csv(gpus->text)) {
    r.nvidia_smi = true;
    r.gpus = std::move(*parsed);
    if (r.gpus.empty()) {
      r.gpu_problem = "nvidia-smi lists no GPU";
    }
  } else {
    r.nvidia_smi = true;
    r.gpu_problem = parsed.error().message;
  }

  std::map<long, PsRow> ps;
  if (const auto* p = get("ps"); p != nullptr && p->status == 0) {
    if (auto rows = parse_ps(p->text)) {
      for (auto& row : *rows) {
        ps[row.pid] = std::move(row);
      }
    }
  }
  if (const auto* a = get("apps"); a != nullptr && a->status == 0 && r.nvidia_smi) {
    if (auto apps = parse_compute_apps_csv(a->text)) {
      r.apps_listed = true;
      for (const auto& app : *apps) {
        GpuProcess gp;
        gp.pid = app.pid;
        gp.name = app.process_name;
        gp.used_mib = app.used_mib;
        const auto row = ps.find(app.pid);
        if (row == ps.end()) {
          gp.kind = classify_process(app.process_name);
          gp.why = "not visible to ps here (another container or PID namespace)";
        } else {
          gp.command = row->second.args;
          gp.kind = classify_process(row->second.args);
          const auto& st = row->second.stat;
          if (gp.kind == ProcessKind::notebook) {
            gp.leftover = true;
            gp.why = "a notebook kernel keeps its tensors on the GPU until it is shut down";
          } else if (gp.kind == ProcessKind::model_server) {
            gp.leftover = true;
            gp.why = "a model server reserves GPU memory for as long as it runs";
          } else if (st.find('Z') != std::string::npos || st.find('T') != std::string::npos) {
            gp.leftover = true;
            gp.why = st.find('Z') != std::string::npos ? "a zombie: its job ended but it was not reaped" : "stopped (Ctrl-Z?) but still holding memory";
          } else if (row->second.ppid == 1) {
            gp.leftover = true;
            gp.why = "orphaned (its parent exited): likely left over from a finished or interrupted job";
          }
        }
        r.processes.push_back(std::move(gp));
      }
    }
  }
  for (const auto& p : r.processes) {
    if (!p.leftover) {
      continue;
    }
    const std::string mem = p.used_mib ? std::to_string(*p.used_mib) + " MiB" : std::string("GPU memory");
    const std::string what = short_command(p.command.empty() ? p.name : p.command);
    if (p.kind == ProcessKind::notebook) {
      r.advice.push_back("kill " + std::to_string(p.pid) + "   # notebook kernel holding " + mem + " (" + what +
                         "); or shut it down from JupyterLab's Running panel");
    } else {
      r.advice.push_back("kill " + std::to_string(p.pid) + "   # " + std::string(to_string(p.kind)) + " holding " + mem + " (" + what +
                         "): " + p.why);
    }
  }
  for (const auto& g : r.gpus) {
    const bool listed = !r.processes.empty();
    if (!listed && g.memory_used_mib > 1024) {
      r.advice.push_back("GPU " + std::to_string(g.index) + " has " + std::to_string(g.memory_used_mib) +
                         " MiB in use but nvidia-smi lists no process (usual inside containers): look for python processes with `ps -ef | grep python`");
    }
  }

  const SectionOutput* torch = get("torch");
  if (torch != nullptr && torch->status == 0) {
    r.torch = parse_torch_line(torch->text);
  }
  if (!r.torch) {
    if (torch == nullptr || torch->status == 127) {
      r.torch_problem = "python3 not found";
    } else if (torch->text.find("No module named") != std::string::npos) {
      r.torch_problem = "PyTorch is not installed for python3";
    } else {
      r.torch_problem = "the PyTorch check failed: " + std::string(trim(torch->text.substr(torch->text.rfind('\n') == std::string::npos ? 0 : torch->text.rfind('\n') + 1)));
    }
    r.advice.push_back(r.torch_problem + ": install PyTorch with the command pytorch.org gives for this CUDA version");
  } else if (!r.torch->available && !r.gpus.empty()) {
    r.advice.push_back("torch.cuda.is_available() is False although a GPU is present: PyTorch " + r.torch->version +
                       (r.torch->cuda == "None" ? std::string(" is a CPU-only build; install a CUDA build")
                                                : " was built for CUDA " + r.torch->cuda + ", check it matches driver " + r.gpus.front().driver));
  }
  if (const auto* n = get("nvcc"); n != nullptr && n->status == 0) {
    r.nvcc = parse_nvcc_version(n->text);
  }
  return r;
}

std::optional<DoctorObservation> to_observation(const DoctorReport& report, std::int64_t server_id, TimePoint at)
{
  if (report.gpus.empty()) {
    return std::nullopt;
  }
  DoctorObservation o;
  o.server_id = server_id;
  o.at = at;
  for (const auto& g : report.gpus) {
    o.gpus.push_back(GpuSample{g.index, g.memory_used_mib, g.memory_total_mib, g.utilization_pct});
  }
  if (report.apps_listed) {
    o.compute_processes = static_cast<std::uint32_t>(report.processes.size());
  }
  return o;
}

}  // namespace gpurent
