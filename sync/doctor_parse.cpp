// SPDX-License-Identifier: MIT
#include "sync/doctor_parse.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "common/text.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_begin = "@@gpurent:begin ";
constexpr std::string_view k_end = "\n@@gpurent:end ";

std::vector<std::string_view> lines_of(std::string_view out)
{
  std::vector<std::string_view> lines;
  for (const auto line : split(out, '\n')) {
    const auto t = trim(line);
    if (!t.empty()) {
      lines.push_back(t);
    }
  }
  return lines;
}

template <class T>
std::optional<T> to_int(std::string_view s)
{
  s = trim(s);
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) {
    return std::nullopt;
  }
  return v;
}

// A memory field: an integer, or "[N/A]" / "N/A" (reported as nullopt).
Result<std::optional<std::uint64_t>> mib_field(std::string_view s, std::string_view what)
{
  s = trim(s);
  if (s == "[N/A]" || s == "N/A" || s == "[Not Supported]") {
    return std::optional<std::uint64_t>{};
  }
  const auto v = to_int<std::uint64_t>(s);
  if (!v) {
    return fail(Errc::invalid_input, "nvidia-smi: bad " + std::string(what) + " value '" + std::string(s) + "'");
  }
  return std::optional<std::uint64_t>{*v};
}

bool contains(std::string_view hay, std::string_view needle)
{
  return hay.find(needle) != std::string_view::npos;
}

std::string short_command(std::string_view cmd)
{
  return cmd.size() > 60 ? std::string(cmd.substr(0, 57)) + "..." : std::string(cmd);
}

}  // namespace

Result<std::vector<GpuInfo>> parse_gpu_csv(std::string_view out)
{
  std::vector<GpuInfo> gpus;
  for (const auto line : lines_of(out)) {
    const auto f = split(line, ',');
    if (f.size() != 6 && f.size() != 7) {
      return fail(Errc::invalid_input, "nvidia-smi: expected 7 fields per GPU (or 6 without utilization), got '" +
                                           std::string(line) + "'");
    }
    GpuInfo g;
    const auto index = to_int<int>(f[0]);
    if (!index) {
      return fail(Errc::invalid_input, "nvidia-smi: bad GPU index in '" + std::string(line) + "'");
    }
    g.index = *index;
    g.name = std::string(trim(f[1]));
    TRY_ASSIGN(const auto total, mib_field(f[2], "memory.total"));
    TRY_ASSIGN(const auto used, mib_field(f[3], "memory.used"));
    TRY_ASSIGN(const auto free, mib_field(f[4], "memory.free"));
    g.memory_total_mib = total.value_or(0);
    g.memory_used_mib = used.value_or(0);
    g.memory_free_mib = free.value_or(0);
    g.driver = std::string(trim(f[5]));
    if (f.size() == 7) {
      TRY_ASSIGN(const auto util, mib_field(f[6], "utilization.gpu"));
      if (util && *util > 100) {
        return fail(Errc::invalid_input, "nvidia-smi: bad utilization.gpu value '" + std::string(trim(f[6])) + "'");
      }
      if (util) {
        g.utilization_pct = static_cast<std::uint32_t>(*util);
      }
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

Result<std::vector<GpuApp>> parse_compute_apps_csv(std::string_view out)
{
  std::vector<GpuApp> apps;
  for (const auto line : lines_of(out)) {
    if (line.starts_with("No running")) {
      continue;
    }
    // The process name may contain commas: pid is the first field, memory the last.
    const auto first = line.find(',');
    const auto last = line.rfind(',');
    if (first == std::string_view::npos || first == last) {
      return fail(Errc::invalid_input, "nvidia-smi: expected pid, process_name, used_memory in '" + std::string(line) + "'");
    }
    GpuApp a;
    const auto pid = to_int<long>(line.substr(0, first));
    if (!pid || *pid <= 0) {
      return fail(Errc::invalid_input, "nvidia-smi: bad pid in '" + std::string(line) + "'");
    }
    a.pid = *pid;
    a.process_name = std::string(trim(line.substr(first + 1, last - first - 1)));
    TRY_ASSIGN(a.used_mib, mib_field(line.substr(last + 1), "used_memory"));
    apps.push_back(std::move(a));
  }
  return apps;
}

Result<std::vector<PsRow>> parse_ps(std::string_view out)
{
  std::vector<PsRow> rows;
  bool header = true;
  for (const auto line : lines_of(out)) {
    if (header) {
      header = false;
      if (line.starts_with("PID")) {
        continue;
      }
    }
    std::array<std::string_view, 4> f{};
    std::string_view rest = line;
    for (auto& field : f) {
      rest = trim(rest);
      const auto sp = rest.find_first_of(" \t");
      field = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp);
    }
    const auto pid = to_int<long>(f[0]);
    const auto ppid = to_int<long>(f[1]);
    const auto elapsed = to_int<std::int64_t>(f[3]);
    if (!pid || !ppid || !elapsed || f[2].empty()) {
      return fail(Errc::invalid_input, "ps: unexpected line '" + std::string(line) + "'");
    }
    rows.push_back(PsRow{*pid, *ppid, std::string(f[2]), *elapsed, std::string(trim(rest))});
  }
  return rows;
}

std::optional<TorchInfo> parse_torch_line(std::string_view out)
{
  const auto lines = lines_of(out);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::vector<std::string_view> words;
    for (const auto w : split(*it, ' ')) {
      if (!w.empty()) {
        words.push_back(w);
      }
    }
    if (words.size() == 3 && (words[2] == "True" || words[2] == "False") && !words[0].empty() &&
        std::isdigit(static_cast<unsigned char>(words[0].front())) != 0) {
      return TorchInfo{std::string(words[0]), std::string(words[1]), words[2] == "True"};
    }
  }
  return std::nullopt;
}

std::optional<std::string> parse_nvcc_version(std::string_view out)
{
  const auto pos = out.find("release ");
  if (pos == std::string_view::npos) {
    return std::nullopt;
  }
  auto rest = out.substr(pos + 8);
  const auto end = rest.find_first_of(", \n");
  rest = rest.substr(0, end);
  if (rest.empty() || std::isdigit(static_cast<unsigned char>(rest.front())) == 0) {
    return std::nullopt;
  }
  return std::string(rest);
}

std::string doctor_script()
{
  auto section = [](std::string_view name, std::string_view cmd) {
    return "printf '" + std::string(k_begin) + "%s\\n' " + std::string(name) + "; { " + std::string(cmd) +
           "; } 2>&1; printf '\\n@@gpurent:end %s\\n' $?\n";
  };
  return section("gpus", "nvidia-smi --query-gpu=index,name,memory.total,memory.used,memory.free,driver_version,utilization.gpu --format=csv,noheader,nounits") +
         section("apps", "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits") +
         section("ps", "ps -eo pid,ppid,stat,etimes,args") +
         section("torch", "python3 -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"") +
         section("nvcc", "if command -v nvcc >/dev/null 2>&1; then nvcc --version; elif [ -x /usr/local/cuda/bin/nvcc ]; then "
                         "/usr/local/cuda/bin/nvcc --version; else echo 'nvcc: command not found'; exit 127; fi");
}

std::map<std::string, SectionOutput> split_sections(std::string_view out)
{
  std::map<std::string, SectionOutput> sections;
  std::size_t pos = 0;
  while ((pos = out.find(k_begin, pos)) != std::string_view::npos) {
    const auto name_start = pos + k_begin.size();
    const auto nl = out.find('\n', name_start);
    if (nl == std::string_view::npos) {
      break;
    }
    const auto end = out.find(k_end, nl);
    if (end == std::string_view::npos) {
      break;
    }
    const auto status_start = end + k_end.size();
    const auto status_end = out.find('\n', status_start);
    const auto status = to_int<int>(out.substr(status_start, status_end == std::string_view::npos ? std::string_view::npos
                                                                                                    : status_end - status_start));
    // The text is between the begin line and "\n@@gpurent:end"; its own trailing newline goes.
    std::string_view text = out.substr(nl + 1, end - (nl + 1));
    if (!text.empty() && text.back() == '\n') {
      text.remove_suffix(1);
    }
    sections[std::string(out.substr(name_start, nl - name_start))] = SectionOutput{status.value_or(-1), std::string(text)};
    pos = status_start;
  }
  return sections;
}

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
