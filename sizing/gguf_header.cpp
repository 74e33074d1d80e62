// SPDX-License-Identifier: MIT
#include "sizing/gguf_header.hpp"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace gpurent {
namespace {

constexpr std::uint32_t k_max_dims = 4;        // GGML_MAX_DIMS
constexpr std::size_t k_max_name = 63;          // GGML_MAX_NAME (64) including the terminator
constexpr std::uint64_t k_int64_max = 0x7fffffffffffffffULL;

Error bad(std::string what) { return Error{Errc::invalid_input, "GGUF header: " + std::move(what)}; }

// Reads little-endian values; running past the end marks the parse as short (more bytes needed),
// which is different from an error.
class Cursor {
public:
  Cursor(std::string_view bytes, std::uint64_t limit) : m_b(bytes), m_limit(limit) {}
  [[nodiscard]] bool short_read() const noexcept { return m_short; }
  [[nodiscard]] std::uint64_t pos() const noexcept { return m_pos; }
  [[nodiscard]] std::uint64_t need() const noexcept { return m_need; }
  [[nodiscard]] std::uint64_t available() const noexcept { return m_b.size() - m_pos; }

  bool take(std::uint64_t n, std::string_view& out)
  {
    if (n > m_b.size() - m_pos) {
      m_short = true;
      m_need = (n > UINT64_MAX - m_pos) ? UINT64_MAX : m_pos + n;
      return false;
    }
    out = m_b.substr(m_pos, n);
    m_pos += n;
    return true;
  }
  template <class T>
  bool read(T& v)
  {
    std::string_view s;
    if (!take(sizeof(T), s)) {
      return false;
    }
    std::uint64_t acc = 0;
    for (std::size_t i = sizeof(T); i-- > 0;) {
      acc = (acc << 8) | static_cast<unsigned char>(s[i]);
    }
    v = static_cast<T>(acc);
    return true;
  }
  [[nodiscard]] std::uint64_t limit() const noexcept { return m_limit; }

private:
  std::string_view m_b;
  std::uint64_t m_limit;
  std::uint64_t m_pos = 0;
  std::uint64_t m_need = 0;
  bool m_short = false;
};

// A parse step: ok, needs more bytes, or failed (error set).
enum class Step { ok, more, failed };

struct Reader {
  Cursor c;
  const GgufParseOptions& o;
  std::optional<std::uint64_t> file_size;
  std::string error;

  Step fail(std::string e)
  {
    error = std::move(e);
    return Step::failed;
  }
  Step more() { return Step::more; }

  // A length-prefixed string; `what` names it in errors. Lengths are checked against the header
  // limit and the file before anything is allocated.
  Step string(std::string& out, std::string_view what, std::uint64_t max_len)
  {
    std::uint64_t n = 0;
    if (!c.read(n)) {
      return more();
    }
    if (n > max_len) {
      return fail(std::string(what) + " claims " + std::to_string(n) + " bytes, over the limit of " +
                  std::to_string(max_len));
    }
    if (Step s = room(n, what); s != Step::ok) {
      return s;
    }
    std::string_view s;
    if (!c.take(n, s)) {
      return more();
    }
    out.assign(s);
    return Step::ok;
  }

  // Whether n more bytes can exist: within the header limit and within the file.
  Step room(std::uint64_t n, std::string_view what)
  {
    const std::uint64_t left = c.limit() > c.pos() ? c.limit() - c.pos() : 0;
    if (n > left) {
      return fail(std::string(what) + " needs " + std::to_string(n) + " bytes, beyond the " +
                  std::to_string(c.limit()) + "-byte header limit");
    }
    if (file_size && (c.pos() > *file_size || n > *file_size - c.pos())) {
      return fail(std::string(what) + " runs past the end of the " + std::to_string(*file_size) + "-byte file");
    }
    return Step::ok;
  }

  Step value(GgufValue& v, std::string_view key)
  {
    std::uint32_t type = 0;
    if (!c.read(type)) {
      return more();
    }
    if (type == static_cast<std::uint32_t>(GgufType::array)) {
      v.is_array = true;
      if (!c.read(type)) {
        return more();
      }
      if (!c.read(v.count)) {
        return more();
      }
      if (type == static_cast<std::uint32_t>(GgufType::array)) {
        return fail("key \"" + std::string(key) + "\" holds an array of arrays, which ggml does not read either");
      }
    }
    if (type > static_cast<std::uint32_t>(GgufType::f64)) {
      return fail("key \"" + std::string(key) + "\" has an unknown value type " + std::to_string(type));
    }
    v.type = static_cast<GgufType>(type);
    const std::string what = "key \"" + std::string(key).substr(0, 80) + "\"";
    if (v.type == GgufType::string) {
      // Each string is at least its 8-byte length: bound the count before reserving.
      if (v.count > (c.limit() / 8) + 1) {
        return fail(what + " claims " + std::to_string(v.count) + " strings, more than the header can hold");
      }
      if (Step s = room(v.count * 8, what); s != Step::ok) {
        return s;
      }
      const bool keep = !v.is_array || o.keep_string_arrays;
      if (keep) {
        v.strings.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(v.count, c.available() / 8 + 1)));
      }
      for (std::uint64_t i = 0; i < v.count; ++i) {
        std::string str;
        if (Step s = string(str, what, c.limit()); s != Step::ok) {
          return s;
        }
        if (keep) {
          v.strings.push_back(std::move(str));
        }
      }
      return Step::ok;
    }
    const std::uint32_t size = gguf_type_size(v.type);
    if (v.count > c.limit() / size) {
      return fail(what + " claims " + std::to_string(v.count) + " elements, more than the header can hold");
    }
    const std::uint64_t n = v.count * size;
    if (Step s = room(n, what); s != Step::ok) {
      return s;
    }
    std::string_view s;
    if (!c.take(n, s)) {
      return more();
    }
    v.raw.assign(s);
    if (v.type == GgufType::boolean) {
      for (const char b : v.raw) {
        if (b != 0 && b != 1) {
          return fail(what + " holds a boolean that is neither 0 nor 1");
        }
      }
    }
    return Step::ok;
  }

  Step tensor(GgufTensorInfo& t, std::size_t index)
  {
    if (Step s = string(t.name, "tensor " + std::to_string(index) + "'s name", k_max_name); s != Step::ok) {
      return s;
    }
    const std::string what = "tensor \"" + t.name + "\"";
    std::uint32_t n_dims = 0;
    if (!c.read(n_dims)) {
      return more();
    }
    if (n_dims > k_max_dims) {
      return fail(what + " has " + std::to_string(n_dims) + " dimensions, more than ggml's 4");
    }
    t.dims.resize(n_dims);
    for (auto& d : t.dims) {
      if (!c.read(d)) {
        return more();
      }
      if (d > k_int64_max) {
        return fail(what + " has a negative dimension");
      }
    }
    if (!c.read(t.type)) {
      return more();
    }
    if (!c.read(t.offset)) {
      return more();
    }
    auto bytes = ggml_tensor_bytes(t.type, t.dims);
    if (!bytes) {
      return fail(what + ": " + bytes.error().message.substr(bytes.error().message.find(": ") + 2));
    }
    t.bytes = *bytes;
    return Step::ok;
  }
};

std::uint64_t pad(std::uint64_t x, std::uint64_t a) noexcept { return (x + a - 1) / a * a; }

}  // namespace

const GgufValue* GgufHeader::find(std::string_view key) const noexcept
{
  for (const auto& k : kv) {
    if (k.key == key) {
      return &k.value;
    }
  }
  return nullptr;
}

Result<GgufParse> parse_gguf_header(std::string_view bytes, std::optional<std::uint64_t> file_size,
                                    const GgufParseOptions& options)
{
  const std::uint64_t limit = std::min<std::uint64_t>(options.max_header, k_max_gguf_header);
  Reader r{Cursor(bytes, limit), options, file_size, {}};
  GgufHeader h;
  const auto outcome = [&](Step s) -> Result<GgufParse> {
    if (s == Step::failed) {
      return std::unexpected(bad(r.error));
    }
    if (file_size && r.c.need() > *file_size) {
      return std::unexpected(bad("the header runs past the end of the " + std::to_string(*file_size) + "-byte file"));
    }
    if (r.c.need() > limit) {
      return std::unexpected(bad("the header is larger than the " + std::to_string(limit) + "-byte limit"));
    }
    return GgufParse{std::nullopt, std::max<std::uint64_t>(r.c.need(), bytes.size() + 1)};
  };
  std::string_view magic;
  if (!r.c.take(4, magic)) {
    return outcome(Step::more);
  }
  if (magic != "GGUF") {
    return std::unexpected(bad("the file does not start with \"GGUF\"; not a GGUF file"));
  }
  if (!r.c.read(h.version)) {
    return outcome(Step::more);
  }
  if ((h.version & 0xFFFFu) == 0 && h.version != 0) {
    return std::unexpected(bad("version " + std::to_string(h.version) +
                               " looks byte-swapped: a big-endian GGUF file, which llama.cpp on x86/ARM cannot load"));
  }
  if (h.version < 2 || h.version > 3) {
    return std::unexpected(bad("version " + std::to_string(h.version) + " is not supported (GGUF v2 and v3 are; " +
                               "v1 files must be re-converted)"));
  }
  std::uint64_t n_tensors = 0;
  std::uint64_t n_kv = 0;
  if (!r.c.read(n_tensors) || !r.c.read(n_kv)) {
    return outcome(Step::more);
  }
  // Each tensor info takes at least 8 + 4 + 4 + 8 bytes, each key/value pair at least 8 + 4 + 1.
  if (n_tensors > limit / 24 || n_kv > limit / 13) {
    return std::unexpected(bad("it claims " + std::to_string(n_tensors) + " tensors and " + std::to_string(n_kv) +
                               " metadata pairs, more than a header can hold"));
  }
  std::unordered_set<std::string> seen;
  h.kv.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_kv, bytes.size() / 13 + 1)));
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    GgufKv kv;
    if (Step s = r.string(kv.key, "key " + std::to_string(i), 65535); s != Step::ok) {
      return outcome(s);
    }
    if (kv.key.empty()) {
      return std::unexpected(bad("key " + std::to_string(i) + " is empty"));
    }
    if (!seen.insert(kv.key).second) {
      return std::unexpected(bad("the key \"" + kv.key.substr(0, 80) + "\" appears twice"));
    }
    if (Step s = r.value(kv.value, kv.key); s != Step::ok) {
      return outcome(s);
    }
    h.kv.push_back(std::move(kv));
  }
  if (const GgufValue* a = h.find("general.alignment")) {
    if (a->type != GgufType::u32 || a->is_array) {
      return std::unexpected(bad("\"general.alignment\" must be a u32, not " +
                                 std::string(a->is_array ? "an array" : to_string(a->type))));
    }
    h.alignment = static_cast<std::uint32_t>(*a->as_u64());
    if (h.alignment == 0 || !std::has_single_bit(h.alignment)) {
      return std::unexpected(bad("\"general.alignment\" " + std::to_string(h.alignment) + " is not a power of 2"));
    }
  }
  seen.clear();
  h.tensors.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_tensors, bytes.size() / 24 + 1)));
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t;
    if (Step s = r.tensor(t, static_cast<std::size_t>(i)); s != Step::ok) {
      return outcome(s);
    }
    if (!seen.insert(t.name).second) {
      return std::unexpected(bad("the tensor name \"" + t.name + "\" appears twice"));
    }
    h.tensors.push_back(std::move(t));
  }
  h.data_offset = n_tensors > 0 ? pad(r.c.pos(), h.alignment) : r.c.pos();
  std::uint64_t size = 0;
  for (const auto& t : h.tensors) {
    if (t.offset != size) {
      return std::unexpected(bad("tensor \"" + t.name + "\" has offset " + std::to_string(t.offset) + ", expected " +
                                 std::to_string(size) + " (tensors must follow each other, padded to " +
                                 std::to_string(h.alignment) + " bytes)"));
    }
    const std::uint64_t padded = pad(t.bytes, h.alignment);  // t.bytes <= INT64_MAX: no overflow
    if (padded > k_int64_max - size) {
      return std::unexpected(bad("the tensors' total size overflows"));
    }
    size += padded;
    if (file_size && (h.data_offset > *file_size || t.offset + t.bytes > *file_size - h.data_offset)) {
      return std::unexpected(bad("tensor \"" + t.name + "\" ends at byte " + std::to_string(h.data_offset + t.offset + t.bytes) +
                                 ", past the end of the " + std::to_string(*file_size) + "-byte file"));
    }
  }
  h.data_bytes = size;
  return GgufParse{std::move(h), 0};
}

}  // namespace gpurent
