// SPDX-License-Identifier: MIT
#include "cli/job_ids.hpp"

#include <algorithm>
#include <charconv>


namespace gpurent {
namespace {

bool all_digits(std::string_view s)
{
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::size_t> to_number(std::string_view s)
{
  std::size_t n = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (!all_digits(s) || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return n;
}

bool job_id_char(char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

}  // namespace

std::vector<std::string> number_jobs(std::vector<JobStartTime> jobs)
{
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const JobStartTime& a, const JobStartTime& b) { return a.started != b.started ? a.started < b.started : a.id < b.id; });
  std::vector<std::string> out;
  for (auto& j : jobs) {
    if (std::find(out.begin(), out.end(), j.id) == out.end()) {
      out.push_back(std::move(j.id));
    }
  }
  return out;
}

std::optional<std::size_t> job_number_of(const std::vector<std::string>& numbered, std::string_view id)
{
  const auto it = std::find(numbered.begin(), numbered.end(), id);
  return it == numbered.end() ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(it - numbered.begin()) + 1);
}

Result<std::string> resolve_job_ref(std::string_view ref, const std::vector<std::string>& numbered, std::string_view server)
{
  const std::string name(server);
  const std::string see = "see `gpurent jobs " + name + "`";
  if (ref.empty()) {
    return fail(Errc::usage, "an empty job id; give the id, a part of it or its number; " + see);
  }
  if (std::find(numbered.begin(), numbered.end(), ref) != numbered.end()) {
    return std::string(ref);
  }
  if (ref.front() == '#') {
    const auto n = to_number(ref.substr(1));
    if (!n) {
      return fail(Errc::usage, "'" + std::string(ref) + "' is not a job number (#1, #2, ...); " + see);
    }
    if (*n == 0 || *n > numbered.size()) {
      return fail(Errc::not_found, name + " has no job " + std::string(ref) + " (it has " + std::to_string(numbered.size()) +
                                       " on record); " + see);
    }
    return numbered[*n - 1];
  }
  if (!std::all_of(ref.begin(), ref.end(), job_id_char)) {
    return fail(Errc::usage, "'" + std::string(ref) + "' is not a job id; " + see);
  }
  if (const auto n = to_number(ref); n && *n >= 1 && *n <= numbered.size()) {
    return numbered[*n - 1];
  }
  std::vector<std::size_t> hits;
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    if (std::string_view(numbered[i]).starts_with(ref) || std::string_view(numbered[i]).ends_with(ref)) {
      hits.push_back(i);
    }
  }
  if (hits.size() == 1) {
    return numbered[hits.front()];
  }
  if (hits.empty()) {
    return fail(Errc::not_found, name + " has no job " + std::string(ref) + "; " + see);
  }
  std::string which;
  for (std::size_t k = 0; k < hits.size() && k < 5; ++k) {
    which += (k == 0 ? "" : ", ") + ("#" + std::to_string(hits[k] + 1)) + " " + numbered[hits[k]];
  }
  if (hits.size() > 5) {
    which += ", and " + std::to_string(hits.size() - 5) + " more";
  }
  return fail(Errc::usage, "'" + std::string(ref) + "' matches " + std::to_string(hits.size()) + " jobs on " + name + " (" +
                               which + "); give more of the id, or its number");
}

std::string node_job_id(std::string_view group_id, std::uint32_t rank)
{
  return std::string(group_id) + "-r" + std::to_string(rank);
}

std::string group_job_id(std::string_view node_id)
{
  const auto at = node_id.rfind("-r");
  if (at == std::string_view::npos || at == 0 || at + 2 == node_id.size() ||
      !std::all_of(node_id.begin() + static_cast<std::ptrdiff_t>(at) + 2, node_id.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return std::string(node_id);
  }
  return std::string(node_id.substr(0, at));
}

bool other_nodes_job(std::string_view id, std::uint32_t rank)
{
  const std::string base = group_job_id(id);
  return base != id && id != node_job_id(base, rank);
}

}  // namespace gpurent
