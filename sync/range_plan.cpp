// SPDX-License-Identifier: MIT
#include "sync/range_plan.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

constexpr std::uint64_t k_least_piece = 8 * k_range_mib;
constexpr int k_ledger_version = 1;

}  // namespace

std::uint32_t range_window(std::size_t streams)
{
  const std::uint64_t each = k_range_window_budget / std::max<std::size_t>(streams, 1);
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(each, 256 * 1024, 16 * k_range_mib));
}

std::uint64_t piece_size(std::uint64_t range_bytes, std::size_t streams, std::uint64_t most, std::size_t per_stream)
{
  most = std::max<std::uint64_t>(most, 1);
  const std::uint64_t per = std::max<std::size_t>(streams, 1) * std::max<std::size_t>(per_stream, 1);
  return std::clamp<std::uint64_t>((range_bytes + per - 1) / per, std::min(k_least_piece, most), most);
}

std::vector<Span> spans_to_fetch(std::uint64_t size, const std::vector<Span>& done, std::uint64_t piece)
{
  piece = std::max<std::uint64_t>(piece, 1);
  std::vector<Span> sorted = done;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Span> out;
  if (size == 0) {
    if (done.empty()) {
      out.push_back(Span{0, 0});
    }
    return out;
  }
  std::uint64_t at = 0;
  const auto cut = [&](std::uint64_t from, std::uint64_t to) {
    while (from < to) {
      const std::uint64_t len = std::min(piece, to - from);
      out.push_back(Span{from, len});
      from += len;
    }
  };
  for (const auto& d : sorted) {
    const std::uint64_t start = std::min(d.offset, size);
    const std::uint64_t end = d.length > size - start ? size : start + d.length;
    if (start > at) {
      cut(at, start);
    }
    at = std::max(at, end);
  }
  cut(at, size);
  return out;
}

std::string render_range_ledger(const RangeLedger& l)
{
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& r : l.done) {
    ranges.push_back({{"offset", r.span.offset}, {"length", r.span.length}, {"sha256", r.sha256}});
  }
  return nlohmann::json{{"gpurent_range_ledger", k_ledger_version}, {"size", l.size}, {"mtime_ns", l.mtime_ns}, {"done", ranges}}.dump() +
         "\n";
}

Result<RangeLedger> parse_range_ledger(std::string_view json_text)
{
  const auto bad = [](const std::string& why) { return fail(Errc::invalid_input, "range ledger: " + why); };
  const auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return bad("not a JSON object");
  }
  const auto version = j.find("gpurent_range_ledger");
  if (version == j.end() || !version->is_number_integer() || version->get<std::int64_t>() != k_ledger_version) {
    return bad("unknown version");
  }
  const auto size = j.find("size");
  const auto mtime = j.find("mtime_ns");
  const auto done = j.find("done");
  if (size == j.end() || !size->is_number_unsigned() || mtime == j.end() || !mtime->is_number_integer() || done == j.end() ||
      !done->is_array()) {
    return bad("size, mtime_ns and done are required");
  }
  RangeLedger l;
  l.size = size->get<std::uint64_t>();
  l.mtime_ns = mtime->get<std::int64_t>();
  std::uint64_t end = 0;
  for (const auto& r : *done) {
    if (!r.is_object()) {
      return bad("a range is not an object");
    }
    const auto off = r.find("offset");
    const auto len = r.find("length");
    const auto sum = r.find("sha256");
    if (off == r.end() || !off->is_number_unsigned() || len == r.end() || !len->is_number_unsigned() || sum == r.end() ||
        !sum->is_string() || !is_hex_digest(sum->get_ref<const std::string&>())) {
      return bad("a range needs offset, length and a SHA-256");
    }
    const Span s{off->get<std::uint64_t>(), len->get<std::uint64_t>()};
    if (s.offset < end || s.offset > l.size || s.length > l.size - s.offset) {
      return bad("ranges out of order, overlapping or past the end");
    }
    end = s.offset + s.length;
    l.done.push_back(LedgerRange{s, sum->get<std::string>()});
  }
  return l;
}

std::vector<Span> done_spans(const RangeLedger& l)
{
  std::vector<Span> out;
  out.reserve(l.done.size());
  for (const auto& r : l.done) {
    out.push_back(r.span);
  }
  return out;
}

}  // namespace gpurent
