// SPDX-License-Identifier: MIT
// Fuzz target for the safetensors header reader and the weights computed from it: any bytes give
// a header that obeys the format (offsets contiguous from 0, each tensor exactly elements x bits
// / 8 bytes, header + data == the file's size when given) and whose parts add up, or one
// invalid_input error; never a crash, an escaping exception or a sanitizer report. The first byte
// chooses whether the file's size is known. Seeds: tests/data/headers/*.safetensors.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sizing/safetensors_header.hpp"
#include "sizing/weights_from_headers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0) {
    return 0;
  }
  const bool sized = (data[0] & 1) != 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::optional<std::uint64_t> file_size;
  if (sized && bytes.size() >= 8) {
    const auto n = gpurent::safetensors_header_length(bytes, std::nullopt);
    if (n) {
      file_size = 8 + *n + (data[0] >> 1);  // a few bytes of data at most
    }
  }
  const auto h = gpurent::parse_safetensors_prefix(bytes, file_size);
  if (!h) {
    if (h.error().code != gpurent::Errc::invalid_input || h.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  std::uint64_t at = 0;
  for (const auto& t : h->tensors) {
    std::uint64_t n = 1;
    for (const auto d : t.shape) {
      n *= d;
    }
    if (t.begin != at || t.end < t.begin || (t.end - t.begin) * 8 != n * gpurent::st_dtype_bits(t.dtype)) {
      std::abort();
    }
    at = t.end;
  }
  if (file_size && h->file_bytes() != *file_size) {
    std::abort();
  }
  const auto entries = gpurent::tensor_entries(*h);
  const auto w = gpurent::weights_from_safetensors(entries, gpurent::quant_hints_from_config(bytes));
  if (w.total_bytes() != h->data_bytes() || w.outside_text_bytes > w.other.bytes) {
    std::abort();
  }
  return 0;
}
