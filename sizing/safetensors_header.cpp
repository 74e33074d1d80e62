// SPDX-License-Identifier: MIT
#include "sizing/safetensors_header.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <exception>
#include <tuple>

namespace gpurent {
namespace {

struct DtypeRow {
  StDtype dtype;
  std::string_view name;
  std::uint32_t bits;
};

constexpr std::array<DtypeRow, 22> k_dtypes{{
    {StDtype::BOOL, "BOOL", 8},       {StDtype::F4, "F4", 4},
    {StDtype::F6_E2M3, "F6_E2M3", 6}, {StDtype::F6_E3M2, "F6_E3M2", 6},
    {StDtype::U8, "U8", 8},           {StDtype::I8, "I8", 8},
    {StDtype::F8_E5M2, "F8_E5M2", 8}, {StDtype::F8_E4M3, "F8_E4M3", 8},
    {StDtype::F8_E8M0, "F8_E8M0", 8}, {StDtype::F8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {StDtype::F8_E5M2FNUZ, "F8_E5M2FNUZ", 8}, {StDtype::I16, "I16", 16},
    {StDtype::U16, "U16", 16},        {StDtype::F16, "F16", 16},
    {StDtype::BF16, "BF16", 16},      {StDtype::I32, "I32", 32},
    {StDtype::U32, "U32", 32},        {StDtype::F32, "F32", 32},
    {StDtype::C64, "C64", 64},        {StDtype::F64, "F64", 64},
    {StDtype::I64, "I64", 64},        {StDtype::U64, "U64", 64},
}};

Error bad(std::string what) { return Error{Errc::invalid_input, "safetensors header: " + std::move(what)}; }

using Json = nlohmann::json;

// Builds the tensor list from SAX events. Tensor infos may carry unknown keys (ignored, as
// serde does); anything else out of place stops the parse with a message.
class HeaderSax {
public:
  std::vector<SafetensorsTensor> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string error;

  bool null() { return scalar("null", [&] { return true; }); }
  bool boolean(bool) { return scalar("a boolean", [] { return false; }); }
  bool number_integer(Json::number_integer_t v)
  {
    if (v < 0) {
      return fail_at("a negative number in " + field_name());
    }
    return number(static_cast<std::uint64_t>(v));
  }
  bool number_unsigned(Json::number_unsigned_t v) { return number(v); }
  bool number_float(Json::number_float_t, const Json::string_t&)
  {
    return scalar("a fractional or out-of-range number", [] { return false; });
  }
  bool binary(Json::binary_t&) { return fail_at("binary data"); }
  bool string(Json::string_t& s)
  {
    if (skipped_value()) {
      return true;
    }
    if (m_state == State::meta_value) {
      metadata.emplace_back(std::move(m_key), std::move(s));
      m_state = State::meta_key;
      return true;
    }
    if (m_state == State::info_value && m_field == Field::dtype) {
      const auto d = parse_st_dtype(s);
      if (!d) {
        return fail_at("unknown dtype \"" + s.substr(0, 40) + "\" (known: BOOL, F4, F6_E2M3, F6_E3M2, U8, I8, F8_*, "
                       "I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64)");
      }
      m_cur.dtype = *d;
      m_have_dtype = true;
      m_state = State::info_key;
      return true;
    }
    return fail_at("a string where " + field_name() + " belongs");
  }
  bool start_object(std::size_t)
  {
    if (m_skip > 0) {
      ++m_skip;
      return true;
    }
    switch (m_state) {
    case State::start: m_state = State::top_key; return true;
    case State::top_value:
      if (m_name == "__metadata__") {
        m_state = State::meta_key;
      } else {
        m_cur = SafetensorsTensor{};
        m_cur.name = m_name;
        m_have_dtype = m_have_shape = m_have_offsets = false;
        m_state = State::info_key;
      }
      return true;
    case State::info_value:
      if (!m_skip_scalar) {
        break;
      }
      m_skip_scalar = false;  // an unknown key's object
      ++m_skip;
      m_state = State::info_key;
      return true;
    default: break;
    }
    return fail_at("an object where " + field_name() + " belongs");
  }
  bool key(Json::string_t& k)
  {
    if (m_skip > 0) {
      return true;
    }
    switch (m_state) {
    case State::top_key:
      if (k.empty()) {
        return fail_at("an empty tensor name");
      }
      m_name = std::move(k);
      m_state = State::top_value;
      return true;
    case State::meta_key: m_key = std::move(k); m_state = State::meta_value; return true;
    case State::info_key:
      m_field = k == "dtype" ? Field::dtype : k == "shape" ? Field::shape : k == "data_offsets" ? Field::offsets
                                                                                                : Field::unknown;
      m_state = State::info_value;
      if (m_field == Field::unknown) {
        m_skip_scalar = true;  // the next value (scalar or container) is ignored
      }
      return true;
    default: return fail_at("a key out of place");
    }
  }
  bool end_object()
  {
    if (m_skip > 0) {
      --m_skip;
      return true;
    }
    switch (m_state) {
    case State::meta_key: m_state = State::top_key; return true;
    case State::info_key: return finish_tensor();
    case State::top_key: m_state = State::done; return true;
    default: return fail_at("an object ended early");
    }
  }
  bool start_array(std::size_t)
  {
    if (m_skip > 0) {
      ++m_skip;
      return true;
    }
    if (m_state == State::info_value && m_skip_scalar) {
      m_skip_scalar = false;
      ++m_skip;
      m_state = State::info_key;
      return true;
    }
    if (m_state == State::info_value && (m_field == Field::shape || m_field == Field::offsets)) {
      m_numbers.clear();
      m_state = State::in_array;
      return true;
    }
    if (m_state == State::start) {
      return fail_at("not a JSON object of tensors");
    }
    return fail_at("a list where " + field_name() + " belongs");
  }
  bool end_array()
  {
    if (m_skip > 0) {
      --m_skip;
      return true;
    }
    if (m_state != State::in_array) {
      return fail_at("a list ended out of place");
    }
    if (m_field == Field::shape) {
      m_cur.shape = std::move(m_numbers);
      m_have_shape = true;
    } else {
      if (m_numbers.size() != 2) {
        return fail_at("\"data_offsets\" must hold exactly two numbers");
      }
      m_cur.begin = m_numbers[0];
      m_cur.end = m_numbers[1];
      m_have_offsets = true;
    }
    m_numbers = {};
    m_state = State::info_key;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&)
  {
    if (error.empty()) {
      error = "not valid JSON (at byte " + std::to_string(position) + ")";
    }
    return false;
  }
  [[nodiscard]] bool complete() const { return m_state == State::done; }

private:
  enum class State { start, top_key, top_value, meta_key, meta_value, info_key, info_value, in_array, done };
  enum class Field { dtype, shape, offsets, unknown };

  // Inside an ignored value (an unknown key's), or that value itself when it is a scalar.
  bool skipped_value()
  {
    if (m_skip > 0) {
      return true;
    }
    if (m_state == State::info_value && m_skip_scalar) {
      m_skip_scalar = false;
      m_state = State::info_key;
      return true;
    }
    return false;
  }

  template <class F>
  bool scalar(std::string_view what, F ok_in_meta)
  {
    if (skipped_value()) {
      return true;
    }
    if (m_state == State::top_value && m_name == "__metadata__" && ok_in_meta()) {
      m_state = State::top_key;  // "__metadata__": null
      return true;
    }
    return fail_at(std::string(what) + " where " + field_name() + " belongs");
  }
  bool number(std::uint64_t v)
  {
    if (skipped_value()) {
      return true;
    }
    if (m_state != State::in_array) {
      return fail_at("a number where " + field_name() + " belongs");
    }
    if (m_numbers.size() >= k_max_tensor_rank) {
      return fail_at("more than " + std::to_string(k_max_tensor_rank) + " numbers in " + field_name());
    }
    m_numbers.push_back(v);
    return true;
  }
  bool finish_tensor()
  {
    if (!m_have_dtype || !m_have_shape || !m_have_offsets) {
      return fail_at(std::string("no \"") + (!m_have_dtype ? "dtype" : !m_have_shape ? "shape" : "data_offsets") + "\"");
    }
    tensors.push_back(std::move(m_cur));
    m_cur = SafetensorsTensor{};
    m_state = State::top_key;
    return true;
  }
  [[nodiscard]] std::string field_name() const
  {
    if (m_state == State::start || m_state == State::top_key) {
      return "the header";
    }
    if (m_state == State::meta_key || m_state == State::meta_value) {
      return "\"__metadata__\" (string values only)";
    }
    const std::string tensor = "tensor \"" + m_name.substr(0, 120) + "\"";
    if (m_state == State::top_value) {
      return tensor;
    }
    switch (m_field) {
    case Field::dtype: return tensor + " \"dtype\"";
    case Field::shape: return tensor + " \"shape\"";
    case Field::offsets: return tensor + " \"data_offsets\"";
    default: return tensor;
    }
  }
  bool fail_at(std::string what)
  {
    if (error.empty()) {
      error = std::move(what);
    }
    return false;
  }

  State m_state = State::start;
  Field m_field = Field::unknown;
  std::string m_name;
  std::string m_key;
  SafetensorsTensor m_cur;
  std::vector<std::uint64_t> m_numbers;
  bool m_have_dtype = false, m_have_shape = false, m_have_offsets = false;
  bool m_skip_scalar = false;
  std::size_t m_skip = 0;
};

// elements × bits / 8, or an error on overflow or a fraction of a byte.
Result<std::uint64_t> tensor_bytes(const SafetensorsTensor& t)
{
  std::uint64_t n = 1;
  for (const auto d : t.shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return std::unexpected(bad("tensor \"" + t.name + "\": the shape's product overflows 64 bits"));
    }
  }
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(n, st_dtype_bits(t.dtype), &bits)) {
    return std::unexpected(bad("tensor \"" + t.name + "\": its size in bits overflows 64 bits"));
  }
  if (bits % 8 != 0) {
    return std::unexpected(bad("tensor \"" + t.name + "\": " + std::to_string(n) + " elements of " +
                               std::string(to_string(t.dtype)) + " do not fill whole bytes"));
  }
  return bits / 8;
}

}  // namespace

std::optional<StDtype> parse_st_dtype(std::string_view s) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.name == s) {
      return row.dtype;
    }
  }
  return std::nullopt;
}

std::string_view to_string(StDtype d) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.dtype == d) {
      return row.name;
    }
  }
  return "?";
}

std::uint32_t st_dtype_bits(StDtype d) noexcept
{
  for (const auto& row : k_dtypes) {
    if (row.dtype == d) {
      return row.bits;
    }
  }
  return 0;
}

Result<std::uint64_t> safetensors_header_length(std::string_view first, std::optional<std::uint64_t> file_size)
{
  if (first.size() < 8) {
    return std::unexpected(bad("the file is shorter than the 8-byte header length"));
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(first[static_cast<std::size_t>(i)]);
  }
  if (n > k_max_safetensors_header) {
    return std::unexpected(bad("the header claims " + std::to_string(n) + " bytes, over the format's limit of " +
                               std::to_string(k_max_safetensors_header) + "; not a safetensors file"));
  }
  if (n < 2) {
    return std::unexpected(bad("the header is " + std::to_string(n) + " bytes long; not a safetensors file"));
  }
  if (file_size && (*file_size < 8 || n > *file_size - 8)) {
    return std::unexpected(bad("the header claims " + std::to_string(n) + " bytes but the file has " +
                               std::to_string(*file_size)));
  }
  return n;
}

Result<SafetensorsHeader> parse_safetensors_header(std::string_view json_text, std::optional<std::uint64_t> file_size)
{
  if (json_text.size() > k_max_safetensors_header) {
    return std::unexpected(bad("the header is over the format's limit of 100,000,000 bytes"));
  }
  HeaderSax sax;
  bool ok = false;
  try {
    ok = Json::sax_parse(json_text.begin(), json_text.end(), &sax);
  } catch (const std::exception& e) {
    return std::unexpected(bad(std::string("not valid JSON (") + e.what() + ")"));
  }
  if (!ok || !sax.complete()) {
    return std::unexpected(bad(sax.error.empty() ? std::string("not a JSON object of tensors") : sax.error));
  }
  SafetensorsHeader h;
  h.header_length = json_text.size();
  h.tensors = std::move(sax.tensors);
  h.metadata = std::move(sax.metadata);
  std::sort(h.metadata.begin(), h.metadata.end());
  for (std::size_t i = 1; i < h.metadata.size(); ++i) {
    if (h.metadata[i].first == h.metadata[i - 1].first) {
      return std::unexpected(bad("\"__metadata__\" repeats the key \"" + h.metadata[i].first + "\""));
    }
  }
  // Data order: by offsets (names break ties so that empty tensors sort deterministically).
  std::sort(h.tensors.begin(), h.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < h.tensors.size(); ++i) {
    const auto& t = h.tensors[i];
    if (i > 0 && t.name == h.tensors[i - 1].name) {
      return std::unexpected(bad("tensor \"" + t.name + "\" is listed twice"));
    }
    if (t.begin != expected || t.end < t.begin) {
      return std::unexpected(bad("tensor \"" + t.name + "\": data_offsets [" + std::to_string(t.begin) + ", " +
                                 std::to_string(t.end) + "] do not follow the previous tensor (expected to start at " +
                                 std::to_string(expected) + ")"));
    }
    TRY_ASSIGN(const std::uint64_t size, tensor_bytes(t));
    if (t.end - t.begin != size) {
      return std::unexpected(bad("tensor \"" + t.name + "\": data_offsets span " + std::to_string(t.end - t.begin) +
                                 " bytes but its shape and dtype need " + std::to_string(size)));
    }
    expected = t.end;
  }
  if (file_size) {
    const std::uint64_t need = 8 + h.header_length + expected;  // no overflow: each part < 2^62 here
    if (expected > (UINT64_MAX >> 2) || need != *file_size) {
      return std::unexpected(bad("header and tensors cover " + std::to_string(need) + " bytes but the file has " +
                                 std::to_string(*file_size) + " (truncated or padded file)"));
    }
  }
  return h;
}

Result<SafetensorsHeader> parse_safetensors_prefix(std::string_view bytes, std::optional<std::uint64_t> file_size)
{
  TRY_ASSIGN(const std::uint64_t n, safetensors_header_length(bytes, file_size));
  if (bytes.size() - 8 < n) {
    return std::unexpected(bad("only " + std::to_string(bytes.size()) + " bytes given of a " + std::to_string(n + 8) +
                               "-byte header"));
  }
  return parse_safetensors_header(bytes.substr(8, n), file_size);
}

}  // namespace gpurent
