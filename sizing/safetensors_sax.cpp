// SPDX-License-Identifier: MIT
#include "sizing/safetensors_sax.hpp"

#include <nlohmann/json.hpp>

#include <exception>

namespace gpurent::st_detail {
namespace {

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

}  // namespace

Result<HeaderJson> read_header_json(std::string_view json_text)
{
  HeaderSax sax;
  bool ok = false;
  try {
    ok = Json::sax_parse(json_text.begin(), json_text.end(), &sax);
  } catch (const std::exception& e) {
    return fail(Errc::invalid_input, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!ok || !sax.complete()) {
    return fail(Errc::invalid_input, sax.error.empty() ? std::string("not a JSON object of tensors") : sax.error);
  }
  return HeaderJson{std::move(sax.tensors), std::move(sax.metadata)};
}

}  // namespace gpurent::st_detail
