// SPDX-License-Identifier: MIT
#pragma once
// Test-side writers of safetensors and GGUF headers (written from the formats' descriptions, not
// from gpurent's parsers: own dtype and ggml tables), and the tensor layouts of real published
// checkpoints: what the header tests, the Hub double and the fuzz seeds read.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sizing/gguf_header.hpp"

namespace gpurent::test {

using U = std::uint64_t;

// ---------------------------------------------------------------- safetensors
struct StTensor {
  std::string name;
  std::string dtype;
  std::vector<U> shape;
};

inline U st_bits(const std::string& dtype)
{
  static const std::map<std::string, U> bits{
      {"BOOL", 8}, {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8}, {"I8", 8}, {"F8_E5M2", 8},
      {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16}, {"U16", 16},
      {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32}, {"F32", 32}, {"C64", 64}, {"F64", 64},
      {"I64", 64}, {"U64", 64}};
  return bits.at(dtype);
}

inline U elements(const std::vector<U>& shape)
{
  U n = 1;
  for (const U d : shape) {
    n *= d;
  }
  return n;
}

inline U st_bytes(const StTensor& t) { return elements(t.shape) * st_bits(t.dtype) / 8; }

inline U st_total(const std::vector<StTensor>& ts)
{
  U n = 0;
  for (const auto& t : ts) {
    n += st_bytes(t);
  }
  return n;
}

// The 8-byte length and the JSON header (padded with spaces to a multiple of 8, as the library
// writes it), tensors laid out in the given order.
inline std::string safetensors_header(const std::vector<StTensor>& ts,
                                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}})
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    j["__metadata__"] = metadata;
  }
  U offset = 0;
  for (const auto& t : ts) {
    const U n = st_bytes(t);
    j[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  U len = text.size();
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>(len & 0xff);
    len >>= 8;
  }
  return out + text;
}

// Header + (sparse) data: a file of the real size that costs only its header on disk.
inline U write_safetensors(const std::filesystem::path& path, const std::vector<StTensor>& ts)
{
  std::filesystem::create_directories(path.parent_path());
  const std::string header = safetensors_header(ts);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
  }
  const U size = header.size() + st_total(ts);
  std::filesystem::resize_file(path, size);
  return size;
}

inline void write_text(const std::filesystem::path& path, const std::string& text)
{
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Splits tensors over n shards (model-0000i-of-0000n.safetensors) with their index.
inline void write_sharded(const std::filesystem::path& dir, const std::vector<StTensor>& ts, std::size_t shards)
{
  nlohmann::json map = nlohmann::json::object();
  const std::size_t per = (ts.size() + shards - 1) / shards;
  for (std::size_t s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors", s + 1, shards);
    std::vector<StTensor> part(ts.begin() + static_cast<std::ptrdiff_t>(std::min(ts.size(), s * per)),
                               ts.begin() + static_cast<std::ptrdiff_t>(std::min(ts.size(), (s + 1) * per)));
    write_safetensors(dir / name, part);
    for (const auto& t : part) {
      map[t.name] = name;
    }
  }
  write_text(dir / "model.safetensors.index.json",
             nlohmann::json{{"metadata", {{"total_size", st_total(ts)}}}, {"weight_map", map}}.dump(1));
}

// ---------------------------------------------------------------- GGUF
// ggml block layouts (ggml-common.h), by type name.
inline std::pair<U, U> ggml_block(const std::string& type)
{
  static const std::map<std::string, std::pair<U, U>> t{
      {"F32", {1, 4}},     {"F16", {1, 2}},      {"BF16", {1, 2}},     {"Q4_0", {32, 18}},   {"Q4_1", {32, 20}},
      {"Q5_0", {32, 22}},  {"Q5_1", {32, 24}},   {"Q8_0", {32, 34}},   {"Q2_K", {256, 84}},  {"Q3_K", {256, 110}},
      {"Q4_K", {256, 144}}, {"Q5_K", {256, 176}}, {"Q6_K", {256, 210}}, {"IQ4_XS", {256, 136}}, {"MXFP4", {32, 17}},
      {"IQ2_XXS", {256, 66}}, {"IQ3_S", {256, 110}}, {"TQ1_0", {256, 54}}};
  return t.at(type);
}
inline std::uint32_t ggml_id(const std::string& type)
{
  static const std::map<std::string, std::uint32_t> id{
      {"F32", 0},   {"F16", 1},   {"Q4_0", 2},  {"Q4_1", 3},  {"Q5_0", 6},   {"Q5_1", 7},     {"Q8_0", 8},
      {"Q2_K", 10}, {"Q3_K", 11}, {"Q4_K", 12}, {"Q5_K", 13}, {"Q6_K", 14}, {"IQ2_XXS", 16}, {"IQ3_S", 21},
      {"IQ4_XS", 23}, {"BF16", 30}, {"TQ1_0", 34}, {"MXFP4", 39}};
  return id.at(type);
}

struct GgTensor {
  std::string name;
  std::string type;
  std::vector<U> dims;  // ne0 first
};

inline U gg_bytes(const GgTensor& t)
{
  const auto [block, bytes] = ggml_block(t.type);
  return elements(t.dims) / block * bytes;
}

inline GgufValue gv_u32(std::uint32_t v)
{
  GgufValue g;
  g.type = GgufType::u32;
  g.raw.assign(reinterpret_cast<const char*>(&v), 4);
  return g;
}
inline GgufValue gv_f32(float v)
{
  GgufValue g;
  g.type = GgufType::f32;
  g.raw.assign(reinterpret_cast<const char*>(&v), 4);
  return g;
}
inline GgufValue gv_str(std::string s)
{
  GgufValue g;
  g.type = GgufType::string;
  g.strings = {std::move(s)};
  return g;
}
inline GgufValue gv_strs(std::vector<std::string> s)
{
  GgufValue g;
  g.type = GgufType::string;
  g.is_array = true;
  g.count = s.size();
  g.strings = std::move(s);
  return g;
}
inline GgufValue gv_i32s(const std::vector<std::int32_t>& v)
{
  GgufValue g;
  g.type = GgufType::i32;
  g.is_array = true;
  g.count = v.size();
  g.raw.assign(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  return g;
}

inline void put_u32(std::string& out, std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
inline void put_u64(std::string& out, U v) { out.append(reinterpret_cast<const char*>(&v), 8); }
inline void put_str(std::string& out, const std::string& s)
{
  put_u64(out, s.size());
  out += s;
}

// The header bytes of `h` as GGUF v2/v3 lays them out, padded to the alignment when it has tensors.
inline std::string gguf_serialize(const GgufHeader& h)
{
  std::string out = "GGUF";
  put_u32(out, h.version);
  put_u64(out, h.tensors.size());
  put_u64(out, h.kv.size());
  for (const auto& kv : h.kv) {
    put_str(out, kv.key);
    const auto& v = kv.value;
    if (v.is_array) {
      put_u32(out, 9);
      put_u32(out, static_cast<std::uint32_t>(v.type));
      put_u64(out, v.count);
    } else {
      put_u32(out, static_cast<std::uint32_t>(v.type));
    }
    if (v.type == GgufType::string) {
      for (const auto& s : v.strings) {
        put_str(out, s);
      }
    } else {
      out += v.raw;
    }
  }
  for (const auto& t : h.tensors) {
    put_str(out, t.name);
    put_u32(out, static_cast<std::uint32_t>(t.dims.size()));
    for (const U d : t.dims) {
      put_u64(out, d);
    }
    put_u32(out, t.type);
    put_u64(out, t.offset);
  }
  if (!h.tensors.empty()) {
    out.append((h.alignment - out.size() % h.alignment) % h.alignment, '\0');
  }
  return out;
}

// A header from tensors laid out one after the other, each padded to the alignment.
inline GgufHeader gguf_header(std::vector<GgufKv> kv, const std::vector<GgTensor>& ts, std::uint32_t alignment = 32)
{
  GgufHeader h;
  h.kv = std::move(kv);
  h.alignment = alignment;
  U offset = 0;
  for (const auto& t : ts) {
    GgufTensorInfo info{t.name, t.dims, ggml_id(t.type), offset, gg_bytes(t)};
    offset += (info.bytes + alignment - 1) / alignment * alignment;
    h.tensors.push_back(std::move(info));
  }
  h.data_bytes = offset;
  h.data_offset = gguf_serialize(h).size();
  return h;
}

inline U write_gguf(const std::filesystem::path& path, const GgufHeader& h)
{
  std::filesystem::create_directories(path.parent_path());
  const std::string bytes = gguf_serialize(h);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const U size = h.tensors.empty() ? bytes.size()
                                   : h.data_offset + h.tensors.back().offset + h.tensors.back().bytes;
  std::filesystem::resize_file(path, size);
  return size;
}

}  // namespace gpurent::test
