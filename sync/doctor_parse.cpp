// SPDX-License-Identifier: MIT
// The parsers of the commands `gpurent doctor` runs (one script, its output split by section);
// the diagnosis built on them is in doctor_diagnose.cpp.
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

}  // namespace gpurent
