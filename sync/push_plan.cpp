// SPDX-License-Identifier: MIT
#include "sync/push_plan.hpp"

#include <algorithm>
#include <map>

namespace gpurent {
namespace {

constexpr std::uint64_t k_entry_weight = 1024;

std::int64_t seconds_of(std::int64_t ns)
{
  return ns >= 0 ? ns / 1'000'000'000LL : -((-ns + 999'999'999LL) / 1'000'000'000LL);
}

}  // namespace

PushPlan plan_push(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote, std::uint64_t big_threshold)
{
  std::map<std::string_view, const RemoteEntry*> there;
  for (const auto& r : remote) {
    there.emplace(r.path, &r);
  }
  PushPlan plan;
  for (std::size_t i = 0; i < local.size(); ++i) {
    const LocalEntry& e = local[i];
    const auto it = there.find(e.path);
    const RemoteEntry* r = it == there.end() ? nullptr : it->second;
    bool send = r == nullptr || r->kind != e.kind;
    if (!send && e.kind == EntryKind::file) {
      send = r->size != e.size || seconds_of(r->mtime_ns) != seconds_of(e.mtime_ns);
    } else if (!send && e.kind == EntryKind::symlink) {
      send = r->link_target != e.link_target;
    }
    if (e.kind == EntryKind::file) {
      ++plan.files_total;
      plan.bytes_total += e.size;
    }
    if (!send) {
      continue;
    }
    if (e.kind == EntryKind::file) {
      ++plan.files_to_send;
      plan.bytes_to_send += e.size;
    }
    if (e.kind == EntryKind::file && e.size >= big_threshold) {
      plan.big.push_back(i);
    } else {
      plan.stream.push_back(i);
    }
  }
  return plan;
}

std::vector<std::vector<std::size_t>> split_stream(const std::vector<std::size_t>& stream, const std::vector<LocalEntry>& local,
                                                   std::size_t parts, double first_share)
{
  std::vector<std::vector<std::size_t>> out;
  if (stream.empty()) {
    return out;
  }
  parts = std::max<std::size_t>(1, std::min(parts, stream.size()));
  std::uint64_t total = 0;
  for (const auto i : stream) {
    total += local[i].size + k_entry_weight;
  }
  const bool weighted = parts > 1 && first_share > 0 && first_share < 1;
  const auto first = weighted ? static_cast<std::uint64_t>(static_cast<double>(total) * first_share) : (total + parts - 1) / parts;
  const std::uint64_t rest = parts > 1 && total > first ? (total - first + parts - 2) / (parts - 1) : first;
  out.emplace_back();
  std::uint64_t acc = 0;
  for (const auto i : stream) {
    const std::uint64_t w = local[i].size + k_entry_weight;
    const std::uint64_t share = out.size() == 1 ? first : rest;
    if (acc > 0 && acc + w / 2 > share && out.size() < parts) {
      out.emplace_back();
      acc = 0;
    }
    out.back().push_back(i);
    acc += w;
  }
  return out;
}

std::vector<ByteRange> split_ranges(const std::vector<std::size_t>& big, const std::vector<LocalEntry>& local,
                                    std::uint64_t range_size, const std::map<std::size_t, std::vector<Span>>& done,
                                    std::uint64_t first_range)
{
  std::vector<ByteRange> out;
  for (const auto i : big) {
    const auto d = done.find(i);
    if (out.empty() && first_range > 0 && first_range < local[i].size && (d == done.end() || d->second.empty())) {
      out.push_back(ByteRange{i, 0, first_range});
      for (const auto& sp : spans_to_fetch(local[i].size, {Span{0, first_range}}, range_size)) {
        out.push_back(ByteRange{i, sp.offset, sp.length});
      }
      continue;
    }
    for (const auto& sp : spans_to_fetch(local[i].size, d == done.end() ? std::vector<Span>{} : d->second, range_size)) {
      out.push_back(ByteRange{i, sp.offset, sp.length});
    }
  }
  return out;
}

namespace {

// Of a connection's set-up, the part that is not hidden behind the first connection's sending
// (its CPU on both ends: key exchange, authentication, the remote shell): fitted on the 2-vCPU
// machine of docs/benchmarks.md, where 2, 3, 4 and 6 connections were timed.
constexpr double k_connection_cpu_share = 0.25;

}  // namespace

double first_stream_share(std::chrono::duration<double> windowed, std::chrono::duration<double> setup, std::size_t parts)
{
  if (parts <= 1) {
    return 1;
  }
  const double n = static_cast<double>(parts);
  if (!(windowed.count() > 0) || !(setup.count() >= 0)) {
    return 1 / n;
  }
  const double t = (windowed.count() + (n - 1) * setup.count()) / n;
  return std::clamp(t / windowed.count(), 1 / n, 0.9);
}

std::size_t choose_push_sessions(std::uint64_t bytes, std::chrono::duration<double> round_trip,
                                 std::chrono::duration<double> setup, std::size_t most, std::uint64_t window)
{
  if (most <= 1 || window == 0 || !(round_trip.count() > 0)) {
    return 1;
  }
  // Seconds the window alone would take over one connection.
  const double windowed = static_cast<double>(bytes) * round_trip.count() / static_cast<double>(window);
  const double each = std::max(setup.count(), 0.0);
  std::size_t best = 1;
  double best_time = windowed;
  for (std::size_t n = 2; n <= most; ++n) {
    // The others connect while the first one sends: n connections end together after
    // (windowed + (n - 1) x each) / n (first_stream_share), plus what each costs the shared CPUs
    // beside the transfer, a quarter of its set-up (measured, docs/benchmarks.md).
    const double k = static_cast<double>(n);
    const double t = (windowed + (k - 1) * each) / k + (k - 1) * each * k_connection_cpu_share;
    if (t < best_time) {
      best = n;
      best_time = t;
    }
  }
  return best;
}

}  // namespace gpurent
