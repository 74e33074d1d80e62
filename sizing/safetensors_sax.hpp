// SPDX-License-Identifier: MIT
#pragma once
// Internal to sizing/safetensors_header.cpp: the header's JSON read with a SAX handler, so that
// memory grows with the tensors, not with the text (a hostile 100 MB header builds no DOM).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "sizing/safetensors_header.hpp"

namespace gpurent::st_detail {

struct HeaderJson {
  std::vector<SafetensorsTensor> tensors;  // in the JSON's order, offsets unchecked
  std::vector<std::pair<std::string, std::string>> metadata;
};

// The tensors and "__metadata__" of the JSON; an error (the message without a prefix) for
// anything that is not an object of tensor infos.
[[nodiscard]] Result<HeaderJson> read_header_json(std::string_view json_text);

}  // namespace gpurent::st_detail
