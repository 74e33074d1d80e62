// SPDX-License-Identifier: MIT
// Fuzz target for the GGUF header reader, the architecture read from it and the weights of its
// tensors: any bytes give a header laid out as ggml requires (tensors contiguous, each padded to
// the alignment, every size from the type's block table), a request for more bytes beyond the
// input, or one invalid_input error; never a crash, an escaping exception or a sanitizer report.
// The first byte chooses whether the file's size is known and string arrays are kept. Seeds:
// tests/data/headers/*.gguf.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sizing/gguf_header.hpp"
#include "sizing/gguf_model.hpp"
#include "sizing/weights_from_headers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  gpurent::GgufParseOptions o;
  o.keep_string_arrays = (data[0] & 2) != 0;
  const std::optional<std::uint64_t> file_size =
      (data[0] & 1) != 0 ? std::optional<std::uint64_t>(bytes.size() + (data[0] >> 2) * 4096) : std::nullopt;
  const auto p = gpurent::parse_gguf_header(bytes, file_size, o);
  if (!p) {
    if (p.error().code != gpurent::Errc::invalid_input || p.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  if (!p->header) {
    if (p->need <= bytes.size()) {
      std::abort();
    }
    return 0;
  }
  const auto& h = *p->header;
  std::uint64_t at = 0;
  std::uint64_t sum = 0;
  for (const auto& t : h.tensors) {
    const auto bytes_of = gpurent::ggml_tensor_bytes(t.type, t.dims);
    if (!bytes_of || *bytes_of != t.bytes || t.offset != at || t.dims.size() > 4) {
      std::abort();
    }
    at += (t.bytes + h.alignment - 1) / h.alignment * h.alignment;
    sum += t.bytes;
  }
  if (at != h.data_bytes || h.data_offset % (h.tensors.empty() ? 1 : h.alignment) != 0) {
    std::abort();
  }
  const auto entries = gpurent::tensor_entries(h);
  const auto arch = gpurent::arch_from_gguf(h, entries, "fuzz");
  if (arch) {
    if (!arch->checkpoint || arch->checkpoint->total_bytes() != sum || arch->layers == 0 || arch->hidden == 0 ||
        arch->global_layers > arch->layers || arch->kv_free_layers > arch->layers) {
      std::abort();
    }
  } else if (arch.error().code != gpurent::Errc::invalid_input) {
    std::abort();
  }
  return 0;
}
