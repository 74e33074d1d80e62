// SPDX-License-Identifier: MIT
// The placeholders of the OOM message grammar (oom/grammar.hpp): numbers with and without
// units, counts, words, TensorFlow dtypes and tensor shapes, each read at one position of the text.
#include <charconv>
#include <system_error>

#include "common/text.hpp"
#include "oom/grammar.hpp"

namespace gpurent::oom_detail {
namespace {

constexpr std::uint64_t k_max_size = 1ULL << 50;           // 1 PiB: no single GPU holds more
constexpr std::uint64_t k_max_count = 1'000'000'000'000;   // tokens, blocks
constexpr std::uint64_t k_max_elements = 1ULL << 60;       // tensor elements
constexpr std::size_t k_max_number = 64;                    // characters in one number
constexpr std::size_t k_max_word = 48;

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_word(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

struct Unit {
  std::string_view name;
  std::uint64_t factor;
};
// Longest spellings first. KB/MB/GB/TB and XLA's K/M/G mean the binary units, as PyTorch,
// llama.cpp and XLA's HumanReadableNumBytes mean them.
constexpr std::array<Unit, 15> k_units{{
    {"bytes", 1}, {"KiB", k_kib}, {"MiB", k_mib}, {"GiB", k_gib}, {"TiB", k_gib * 1024}, {"KB", k_kib}, {"kB", k_kib},
    {"MB", k_mib}, {"GB", k_gib}, {"TB", k_gib * 1024}, {"B", 1}, {"K", k_kib}, {"M", k_mib}, {"G", k_gib}, {"T", k_gib * 1024},
}};

Piece eof_piece()
{
  Piece p;
  p.status = Status::eof;
  return p;
}

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Digits with at most one '.' (and an exponent), at text[p]; `end` is where the number stops.
struct Number {
  Status status = Status::mismatch;
  std::size_t end = 0;
  double value = 0.0;
  bool out_of_range = false;
  std::string error;
};

Number read_number(std::string_view text, std::size_t pos, bool final)
{
  Number out;
  std::size_t p = pos;
  bool digit = false;
  while (p < text.size() && (is_digit(text[p]) || text[p] == '.') && p - pos <= k_max_number) {
    digit = digit || is_digit(text[p]);
    ++p;
  }
  if (p - pos > k_max_number) {
    out.error = quote(text.substr(pos, 24)) + "... is not a plausible size (too many digits)";
    return out;
  }
  if (p == text.size() && !final) {
    out.status = Status::eof;
    return out;
  }
  if (!digit) {
    return out;
  }
  if (p > pos + 1 && text[p - 1] == '.') {
    --p;  // "... is 0.88." ends a sentence: the last '.' is not part of the number
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
  const auto parsed = parse_decimal(text.substr(pos, p - pos));
  if (!parsed) {
    return out;  // "1.2.3": not a number, so not this message
  }
  out.status = Status::ok;
  out.end = p;
  out.value = parsed->value;
  out.out_of_range = parsed->out_of_range;
  return out;
}

Piece read_size(std::string_view text, std::size_t pos, bool final, bool lenient)
{
  Piece out;
  std::size_t p = pos;
  bool negative = false;
  if (p < text.size() && (text[p] == '-' || text[p] == '+')) {
    negative = text[p] == '-';
    ++p;
  }
  const std::string_view head = text.substr(p, 3);
  if (head == "inf" || head == "Inf" || head == "INF" || head == "nan" || head == "NaN" || head == "NAN") {
    out.error = quote(text.substr(pos, p + 3 - pos)) + " is not a finite number";
    return out;
  }
  const Number number = read_number(text, p, final);
  if (number.status != Status::ok) {
    out.status = number.status;
    out.error = number.error;
    return out;
  }
  p = number.end;
  std::size_t unit_end = 0;
  std::uint64_t factor = 0;
  bool partial_unit = false;
  const std::string_view rest = text.substr(p);
  for (const auto& unit : k_units) {
    if (rest.starts_with(unit.name)) {
      if (partial_unit && !final) {
        return eof_piece();  // "G" may still become "GiB"
      }
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
  if (negative && number.value != 0.0) {
    out.error = quote(token) + " is negative";
    return out;
  }
  const long double bytes = static_cast<long double>(number.value) * static_cast<long double>(factor);
  if (number.out_of_range || bytes > static_cast<long double>(k_max_size)) {
    if (lenient) {
      out.status = Status::ok;
      out.end = unit_end;
      out.field.absurd = true;
      out.field.factor = factor;
      return out;
    }
    out.error = quote(token) + (number.out_of_range ? " is not a finite number" : " is larger than any GPU (over 1 PiB)");
    return out;
  }
  out.status = Status::ok;
  out.end = unit_end;
  out.field.bytes = Bytes{static_cast<std::uint64_t>(bytes + 0.5L)};  // 0 <= bytes <= 1 PiB here
  out.field.real = number.value;
  out.field.factor = factor;
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
    return eof_piece();
  }
  if (p == pos) {
    return out;
  }
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + p, value);
  if (p - pos > max_digits || ec != std::errc{} || ptr != text.data() + p || value > limit) {
    out.error = quote(text.substr(pos, std::min<std::size_t>(p - pos, 24))) + " is not a plausible count";
    return out;
  }
  out.status = Status::ok;
  out.end = p;
  out.field.value = value;
  out.field.bytes = Bytes{value};
  return out;
}

Piece read_decimal(std::string_view text, std::size_t pos, bool final)
{
  std::size_t p = pos;
  if (p < text.size() && text[p] == '-') {
    ++p;
  }
  const Number number = read_number(text, p, final);
  Piece out;
  out.status = number.status;
  out.error = number.error;
  if (number.status == Status::ok) {
    if (number.out_of_range) {
      out.status = Status::mismatch;
      out.error = quote(text.substr(pos, std::min<std::size_t>(number.end - pos, 24))) + " is not a finite number";
      return out;
    }
    out.end = number.end;
    out.field.real = p > pos ? -number.value : number.value;
  }
  return out;
}

// A word; when the pattern goes on with literal text, the shortest word that it follows
// ("{w}bufferofsize" reads "CUDA0" out of "CUDA0bufferofsize").
Piece read_word(std::string_view text, std::size_t pos, bool final, std::string_view then)
{
  Piece out;
  std::size_t p = pos;
  while (p < text.size() && is_word(text[p]) && p - pos < k_max_word) {
    ++p;
    if (!then.empty()) {
      const std::string_view rest = text.substr(p);
      if (rest.starts_with(then)) {
        out.status = Status::ok;
        out.end = p;
        out.field.word = text.substr(pos, p - pos);
        return out;
      }
      if (rest.size() < then.size() && then.starts_with(rest) && !final) {
        return eof_piece();
      }
    }
  }
  if (p == text.size() && !final) {
    return eof_piece();
  }
  if (then.empty() && p > pos && (p == text.size() || !is_word(text[p]))) {
    out.status = Status::ok;
    out.end = p;
    out.field.word = text.substr(pos, p - pos);
  }
  return out;
}

// TensorFlow's DataTypeString names, longest first; `value` is the size of one element.
struct DType {
  std::string_view name;
  std::uint64_t size;
};
constexpr std::array<DType, 24> k_dtypes{{
    {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"complex128", 16}, {"complex64", 8}, {"bfloat16", 2}, {"float16", 2},
    {"float32", 4}, {"float64", 8}, {"quint16", 2}, {"qint16", 2}, {"quint8", 1}, {"qint32", 4}, {"qint8", 1}, {"double", 8},
    {"uint64", 8}, {"uint32", 4}, {"uint16", 2}, {"uint8", 1}, {"int64", 8}, {"int32", 4}, {"int16", 2}, {"float", 4},
    {"int8", 1}, {"half", 2},
}};

Piece read_dtype(std::string_view text, std::size_t pos, bool final)
{
  const std::string_view rest = text.substr(pos);
  for (const auto& t : k_dtypes) {
    if (rest.starts_with(t.name)) {
      Piece out;
      out.status = Status::ok;
      out.end = pos + t.name.size();
      out.field.word = t.name;
      out.field.value = t.size;
      return out;
    }
  }
  Piece out;
  if (!final && rest.size() < 13) {
    for (const auto& t : k_dtypes) {
      if (t.name.starts_with(rest)) {
        return eof_piece();
      }
    }
  }
  if (text.substr(pos, 4) == "bool") {
    out.status = Status::ok;
    out.end = pos + 4;
    out.field.word = "bool";
    out.field.value = 1;
  }
  return out;
}

// "500,17,17,4032": the product of the dimensions (1 for an empty list), `bytes.n` = dimensions.
Piece read_list(std::string_view text, std::size_t pos, bool final)
{
  Piece out;
  std::size_t p = pos;
  std::uint64_t product = 1;
  std::uint64_t dims = 0;
  while (p < text.size() && is_digit(text[p])) {
    const Piece dim = read_integer(text, p, final, 19, ~0ULL);
    if (dim.status != Status::ok) {
      return dim;
    }
    if (dim.field.value != 0 && product > k_max_elements / dim.field.value) {
      out.error = quote(text.substr(pos, std::min<std::size_t>(dim.end - pos, 40))) + " is not a plausible tensor shape";
      return out;
    }
    product *= dim.field.value;
    ++dims;
    p = dim.end;
    if (p < text.size() && text[p] == ',') {
      ++p;
      continue;
    }
    break;
  }
  if (p == text.size() && !final) {
    return eof_piece();
  }
  out.status = Status::ok;
  out.end = p;
  out.field.value = product;
  out.field.bytes = Bytes{dims};
  out.field.word = text.substr(pos, p - pos);
  return out;
}

}  // namespace

Piece read_placeholder(char type, std::string_view text, std::size_t pos, bool final, std::string_view then)
{
  switch (type) {
  case 's': return read_size(text, pos, final, false);
  case 'z': return read_size(text, pos, final, true);
  case 'i': return read_integer(text, pos, final, 12, 0xFFFF'FFFF'FFFFULL);
  case 'n': return read_integer(text, pos, final, 20, k_max_count);
  case 'b': {
    Piece piece = read_integer(text, pos, final, 20, ~0ULL);
    if (piece.status == Status::ok && piece.field.value > k_max_size) {
      piece.status = Status::mismatch;
      piece.error = quote(text.substr(pos, piece.end - pos)) + " bytes is larger than any GPU (over 1 PiB)";
    }
    return piece;
  }
  case 'd': return read_decimal(text, pos, final);
  case 'w': return read_word(text, pos, final, then);
  case 't': return read_dtype(text, pos, final);
  case 'l': return read_list(text, pos, final);
  default: return Piece{};
  }
}

}  // namespace gpurent::oom_detail
