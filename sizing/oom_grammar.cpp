// SPDX-License-Identifier: MIT
#include "sizing/oom_grammar.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <system_error>

#include "common/text.hpp"

namespace gpurent::oom_detail {
namespace {

constexpr std::uint64_t k_max_size = 1ULL << 50;           // 1 PiB: no single GPU holds more
constexpr std::uint64_t k_max_count = 1'000'000'000'000;   // tokens, blocks
constexpr std::size_t k_max_number = 64;                    // characters in one number
constexpr std::size_t k_max_kept_processes = 256;

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};
// Longest spellings first. KB/MB/GB/TB mean the binary units, as PyTorch and llama.cpp mean them.
constexpr std::array<Unit, 11> k_units{{
    {"bytes", 1}, {"KiB", k_kib}, {"MiB", k_mib}, {"GiB", k_gib}, {"TiB", k_gib * 1024},
    {"KB", k_kib}, {"kB", k_kib}, {"MB", k_mib}, {"GB", k_gib}, {"TB", k_gib * 1024}, {"B", 1},
}};

// Result of reading one placeholder at text[pos].
struct Piece {
  Status status = Status::mismatch;
  std::size_t end = 0;
  Field field;
  std::string error;
};

Piece read_size(std::string_view text, std::size_t pos, bool final)
{
  Piece out;
  std::size_t p = pos;
  bool negative = false;
  if (p < text.size() && (text[p] == '-' || text[p] == '+')) {
    negative = text[p] == '-';
    ++p;
  }
  const std::size_t start = p;
  const std::string_view head = text.substr(p, 3);
  if (head == "inf" || head == "Inf" || head == "INF" || head == "nan" || head == "NaN" || head == "NAN") {
    out.error = "'" + std::string(text.substr(pos, p + 3 - pos)) + "' is not a finite number";
    return out;
  }
  bool digit = false;
  while (p < text.size() && (is_digit(text[p]) || text[p] == '.') && p - start <= k_max_number) {
    digit = digit || is_digit(text[p]);
    ++p;
  }
  if (p - start > k_max_number) {
    out.error = "'" + std::string(text.substr(pos, 24)) + "...' is not a plausible size (too many digits)";
    return out;
  }
  if (p == text.size() && !final) {
    out.status = Status::eof;
    return out;
  }
  if (!digit) {
    return out;
  }
  if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    std::size_t q = p + 1;
    if (q < text.size() && (text[q] == '-' || text[q] == '+')) {
      ++q;
    }
    const std::size_t exp_start = q;
    while (q < text.size() && is_digit(text[q]) && q - exp_start < 8) {
      ++q;
    }
    if (q == text.size() && !final) {
      out.status = Status::eof;
      return out;
    }
    if (q > exp_start) {
      p = q;
    }
  }
  const auto parsed = parse_decimal(text.substr(start, p - start));
  if (!parsed) {
    return out;  // "1.2.3": not a number, so not this message
  }
  const double number = parsed->value;
  const bool range_error = parsed->out_of_range;
  std::size_t unit_end = 0;
  std::uint64_t factor = 0;
  bool partial_unit = false;
  for (const auto& unit : k_units) {
    const std::string_view rest = text.substr(p);
    if (rest.starts_with(unit.name)) {
      unit_end = p + unit.name.size();
      factor = unit.factor;
      break;
    }
    if (!final && rest.size() < unit.name.size() && unit.name.starts_with(rest)) {
      partial_unit = true;
    }
  }
  if (factor == 0) {
    out.status = partial_unit ? Status::eof : Status::mismatch;
    return out;
  }
  const std::string token{text.substr(pos, unit_end - pos)};
  if (negative && number != 0.0) {
    out.error = "'" + token + "' is negative";
    return out;
  }
  const long double bytes = static_cast<long double>(number) * static_cast<long double>(factor);
  if (range_error || !std::isfinite(number)) {
    out.error = "'" + token + "' is not a finite number";
    return out;
  }
  if (bytes > static_cast<long double>(k_max_size)) {
    out.error = "'" + token + "' is larger than any GPU (over 1 PiB)";
    return out;
  }
  out.status = Status::ok;
  out.end = unit_end;
  out.field.bytes = Bytes{static_cast<std::uint64_t>(bytes + 0.5L)};  // 0 <= bytes <= 1 PiB here
  return out;
}

Piece read_integer(std::string_view text, std::size_t pos, bool final, std::size_t max_digits, std::uint64_t limit)
{
  Piece out;
  std::size_t p = pos;
  while (p < text.size() && is_digit(text[p]) && p - pos <= max_digits) {
    ++p;
  }
  if (p == text.size() && !final) {
    out.status = Status::eof;
    return out;
  }
  if (p == pos) {
    return out;
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + p, value);
  if (p - pos > max_digits || ec != std::errc{} || ptr != text.data() + p || value > limit) {
    out.error = "'" + std::string(text.substr(pos, std::min<std::size_t>(p - pos, 24))) + "' is not a plausible count";
    return out;
  }
  out.status = Status::ok;
  out.end = p;
  out.field.value = value;
  return out;
}

}  // namespace

Match match_pattern(std::string_view text, std::size_t pos, std::string_view pattern, bool final)
{
  Match m;
  std::size_t t = pos;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}') {
      const char type = pattern[i + 1];
      Piece piece = type == 's'   ? read_size(text, t, final)
                    : type == 'i' ? read_integer(text, t, final, 12, 0xFFFF'FFFF'FFFFULL)
                                  : read_integer(text, t, final, 20, k_max_count);
      if (piece.status != Status::ok) {
        m.status = piece.status;
        m.error = std::move(piece.error);
        return m;
      }
      if (m.count < m.fields.size()) {
        m.fields[m.count++] = piece.field;
      }
      t = piece.end;
      i += 3;
      continue;
    }
    if (t >= text.size()) {
      m.status = final ? Status::mismatch : Status::eof;
      return m;
    }
    if (text[t] != pattern[i]) {
      return m;
    }
    ++t;
    ++i;
  }
  m.status = Status::ok;
  m.end = t;
  return m;
}

ReportParser::ReportParser(CaptureKind kind, std::size_t pos, std::uint64_t line)
    : m_kind(kind), m_start(pos), m_pos(pos)
{
  m_report.line = line;
  switch (kind) {
  case CaptureKind::vllm_len: m_step = Step::v_start; break;
  case CaptureKind::vllm_blocks: m_step = Step::blocks; break;
  case CaptureKind::tried: m_step = Step::tried; break;
  default: m_step = Step::start; break;
  }
  if (kind == CaptureKind::vllm_len || kind == CaptureKind::vllm_blocks || kind == CaptureKind::vllm_no_kv) {
    m_report.engine = OomEngine::vllm;
    m_report.format = OomFormat::vllm;
    m_report.kind = kind == CaptureKind::vllm_no_kv ? OomKind::no_kv_cache_memory : OomKind::kv_cache_too_small;
  }
  if (kind == CaptureKind::llama) {
    m_report.engine = OomEngine::llama_cpp;
    m_report.format = OomFormat::llama_cpp;
    m_report.kind = OomKind::device_alloc;
  }
  if (kind == CaptureKind::vllm_no_kv || kind == CaptureKind::llama) {
    m_step = Step::done;
  }
}

bool ReportParser::recognised() const noexcept
{
  switch (m_kind) {
  case CaptureKind::cuda_oom:
  case CaptureKind::hip_oom:
  case CaptureKind::tried: return m_prefix || m_report.total.has_value();
  case CaptureKind::vllm_len: return m_report.max_model_len.has_value();
  case CaptureKind::vllm_blocks: return false;
  case CaptureKind::vllm_no_kv:
  case CaptureKind::llama: return true;
  }
  return false;
}

Status ReportParser::alts(std::string_view text, bool final, std::initializer_list<std::string_view> patterns, std::size_t& which,
                          Match& m)
{
  which = 0;
  for (const auto pattern : patterns) {
    m = match_pattern(text, m_pos, pattern, final);
    if (m.status == Status::ok) {
      m_pos = m.end;
      return Status::ok;
    }
    if (m.status == Status::eof) {
      return Status::eof;
    }
    if (!m.error.empty()) {
      m_error = m.error;
      return Status::mismatch;
    }
    ++which;
  }
  return Status::mismatch;
}

Status ReportParser::advance(std::string_view text, bool final)
{
  while (m_step != Step::done) {
    const Status s = step(text, final);
    if (s == Status::eof) {
      return Status::eof;
    }
    if (s == Status::mismatch) {
      m_step = Step::done;
    }
  }
  if (m_pos == m_start) {
    m_pos = m_start + 1;  // never restart the search on the same anchor
  }
  return Status::ok;
}

Status ReportParser::step(std::string_view text, bool final)
{
  std::size_t which = 0;
  Match m;
  OomReport& r = m_report;
  switch (m_step) {
  case Step::start: {
    const Status s = alts(text, final, {"CUDAoutofmemory", "HIPoutofmemory"}, which, m);
    m_prefix = s == Status::ok;
    m_step = Step::opt_dot;
    return s;
  }
  case Step::opt_dot: {
    const Status s = alts(text, final, {".", ""}, which, m);
    m_step = Step::tried;
    return s;
  }
  case Step::tried: {
    const Status s = alts(text, final, {"Triedtoallocate{s}"}, which, m);
    if (s == Status::ok) {
      r.requested = m.fields[0].bytes;
      m_step = Step::after_r;
    }
    return s;
  }
  case Step::after_r: {
    const Status s = alts(text, final,
                          {".GPU{i}hasatotalcapacityof{s}ofwhich{s}isfree.", ".GPU{i}hasatotalcapactyof{s}ofwhich{s}isfree.",
                           "(GPU{i};{s}totalcapacity;{s}alreadyallocated;{s}free;"},
                          which, m);
    if (s == Status::ok) {
      r.device = static_cast<std::uint32_t>(m.fields[0].value);
      r.total = m.fields[1].bytes;
      if (which == 2) {
        r.allocated = m.fields[2].bytes;
        r.free = m.fields[3].bytes;
        m_step = Step::old_tail;
      } else {
        r.free = m.fields[2].bytes;
        r.format = which == 0 ? OomFormat::pytorch_2_2 : OomFormat::pytorch_2_0;
        m_step = Step::entries;
      }
    }
    return s;
  }
  case Step::entries: {
    const Status s = alts(text, final,
                          {"Process{i}has{s}memoryinuse.", "Includingnon-PyTorchmemory,thisprocesshas{s}memoryinuse.",
                           "{s}allowed;", "Oftheallocatedmemory{s}isallocatedbyPyTorch,"},
                          which, m);
    if (s == Status::ok) {
      if (which == 0) {
        if (r.other_processes.size() < k_max_kept_processes) {
          r.other_processes.push_back({m.fields[0].value, m.fields[1].bytes});
        }
        r.other_processes_sum += m.fields[1].bytes;
        ++r.other_process_count;
      } else if (which == 1) {
        r.process_in_use = m.fields[0].bytes;
      } else if (which == 2) {
        r.allowed = m.fields[0].bytes;
      } else {
        r.allocated = m.fields[0].bytes;
        m_step = Step::a_tail;
      }
    }
    return s;
  }
  case Step::a_tail: {
    const Status s = alts(text, final,
                          {"with{s}allocatedinprivatepools(e.g.,CUDAGraphs),and{s}isreservedbyPyTorchbutunallocated",
                           "and{s}isreservedbyPyTorchbutunallocated"},
                          which, m);
    if (s == Status::ok) {
      if (which == 0) {
        r.private_pools = m.fields[0].bytes;
      }
      r.reserved_unallocated = m.fields[which == 0 ? 1 : 0].bytes;
      m_step = Step::done;
    }
    return s;
  }
  case Step::old_tail: {
    const Status s = alts(text, final, {"{s}allowed;", "{s}reservedintotalbyPyTorch", "{s}cached"}, which, m);
    if (s == Status::ok) {
      if (which == 0) {
        r.allowed = m.fields[0].bytes;
        return s;
      }
      if (which == 1) {
        r.format = OomFormat::pytorch_1x;
        r.reserved_total = m.fields[0].bytes;
        r.reserved_unallocated = m.fields[0].bytes - r.allocated.value_or(Bytes{});
      } else {
        r.format = OomFormat::pytorch_legacy;
        r.reserved_unallocated = m.fields[0].bytes;
      }
      m_step = Step::done;
    }
    return s;
  }
  case Step::v_start: {
    const Status s = alts(text, final,
                          {"maxseqlen({n})islargerthanthemaximumnumberoftokensthatcanbestoredinKVcache({n})",
                           "maxseqlen({n}),({s}KVcacheisneeded,whichislargerthantheavailableKVcachememory({s})."},
                          which, m);
    if (s == Status::ok) {
      r.max_model_len = m.fields[0].value;
      if (which == 0) {
        r.kv_cache_tokens = m.fields[1].value;
        m_step = Step::done;
      } else {
        r.kv_cache_needed = m.fields[1].bytes;
        r.kv_cache_available = m.fields[2].bytes;
        m_step = Step::v_est;
      }
    }
    return s;
  }
  case Step::v_est: {
    const Status s = alts(text, final, {"Basedontheavailablememory,theestimatedmaximummodellengthis{n}"}, which, m);
    if (s == Status::ok) {
      r.kv_cache_tokens = m.fields[0].value;
      m_step = Step::done;
    }
    return s;
  }
  case Step::blocks: {
    const Status s = alts(text, final, {"GPUblocks:{n}"}, which, m);
    if (s == Status::ok) {
      r.gpu_blocks = m.fields[0].value;
      m_step = Step::done;
    }
    return s;
  }
  case Step::done: break;
  }
  return Status::mismatch;
}

void parse_llama_size(std::string_view text, std::size_t anchor, OomReport& report, std::string& error)
{
  constexpr std::string_view k_word = "allocating";
  const std::size_t window = anchor > 160 ? anchor - 160 : 0;
  const std::size_t at = text.substr(0, anchor).rfind(k_word);
  if (at == std::string_view::npos || at < window) {
    return;
  }
  const Match m = match_pattern(text.substr(0, anchor), at, "allocating{s}ondevice{i}:", true);
  if (m.status == Status::ok && m.end == anchor) {
    report.requested = m.fields[0].bytes;
    report.device = static_cast<std::uint32_t>(m.fields[1].value);
  } else if (!m.error.empty()) {
    error = m.error;
  }
}

}  // namespace gpurent::oom_detail
