// SPDX-License-Identifier: MIT
#pragma once
// Internal to sizing/model_config*.cpp: the checked reader of config.json keys and the steps the
// modelled and the generic (unknown model_type) readers share. Not a public interface.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "sizing/model.hpp"

namespace gpurent::config_detail {

using nlohmann::json;

// Upper bounds far beyond any published model; above them the file is not a real config.
constexpr std::uint64_t k_max_layers = 1000;
constexpr std::uint64_t k_max_hidden = 1'000'000;
constexpr std::uint64_t k_max_vocab = 10'000'000;
constexpr std::uint64_t k_max_width = 10'000'000;     // intermediate sizes, head dims, ranks
constexpr std::uint64_t k_max_heads = 100'000;
constexpr std::uint64_t k_max_experts = 100'000;
constexpr std::uint64_t k_max_context = 1'000'000'000;
constexpr double k_max_total_params = 1e14;

class Reader {
public:
  Reader(const json& j, std::string_view source) : m_j(j), m_source(source) {}

  [[nodiscard]] std::unexpected<Error> error(std::string_view key, std::string_view why) const
  {
    return fail(Errc::invalid_input, "model config " + std::string(m_source) + ": \"" + std::string(key) + "\" " +
                                         std::string(why) +
                                         "; pass the config.json of a supported decoder-only model "
                                         "(see `gpurent models` for built-in ones)");
  }

  [[nodiscard]] bool has(std::string_view key) const
  {
    const auto it = m_j.find(key);
    return it != m_j.end() && !it->is_null();
  }

  // An optional whole number in [lo, hi]; nullopt when absent or null.
  [[nodiscard]] Result<std::optional<std::uint32_t>> opt_u32(std::string_view key, std::uint64_t lo, std::uint64_t hi) const
  {
    const auto it = m_j.find(key);
    if (it == m_j.end() || it->is_null()) {
      return std::optional<std::uint32_t>{};
    }
    std::uint64_t v = 0;
    if (it->is_number_unsigned()) {
      v = it->get<std::uint64_t>();
    } else if (it->is_number_integer()) {
      const auto s = it->get<std::int64_t>();
      if (s < 0) {
        return error(key, "is negative (" + std::to_string(s) + ")");
      }
      v = static_cast<std::uint64_t>(s);
    } else if (it->is_number_float()) {
      const double d = it->get<double>();
      if (!(d >= 0.0 && d <= 1e12) || d != static_cast<double>(static_cast<std::uint64_t>(d))) {
        return error(key, "must be a non-negative whole number");
      }
      v = static_cast<std::uint64_t>(d);
    } else {
      return error(key, "must be a number");
    }
    if (v < lo) {
      return error(key, "must be at least " + std::to_string(lo) + " (got " + std::to_string(v) + ")");
    }
    if (v > hi) {
      return error(key, "is absurdly large (" + std::to_string(v) + ", limit " + std::to_string(hi) + ")");
    }
    return std::optional<std::uint32_t>{static_cast<std::uint32_t>(v)};
  }

  [[nodiscard]] Result<std::uint32_t> u32(std::string_view key, std::uint64_t lo, std::uint64_t hi) const
  {
    TRY_ASSIGN(auto v, opt_u32(key, lo, hi));
    if (!v) {
      return error(key, "is missing");
    }
    return *v;
  }

  [[nodiscard]] Result<std::uint32_t> u32_or(std::string_view key, std::uint64_t lo, std::uint64_t hi, std::uint32_t dflt) const
  {
    TRY_ASSIGN(auto v, opt_u32(key, lo, hi));
    return v.value_or(dflt);
  }

  [[nodiscard]] Result<bool> boolean_or(std::string_view key, bool dflt) const
  {
    const auto it = m_j.find(key);
    if (it == m_j.end() || it->is_null()) {
      return dflt;
    }
    if (!it->is_boolean()) {
      return error(key, "must be true or false");
    }
    return it->get<bool>();
  }

  [[nodiscard]] Result<std::string> string_or(std::string_view key, std::string dflt) const
  {
    const auto it = m_j.find(key);
    if (it == m_j.end() || it->is_null()) {
      return dflt;
    }
    if (!it->is_string()) {
      return error(key, "must be a string");
    }
    return it->get<std::string>();
  }

  [[nodiscard]] const json& raw() const { return m_j; }

private:
  const json& m_j;
  std::string_view m_source;
};

// tie_word_embeddings (the text config's, else the top level's, else `tied_default`) and the
// weights' dtype (torch_dtype of the text config, of the top level, else dtype, else bfloat16).
[[nodiscard]] Result<void> read_tying_and_dtype(const Reader& top, const Reader& r, bool tied_default, ModelArch& m);
// quantization_config at the top level: quant_method, its bits and float/int (ModelArch::quant_*);
// lenient, what is not understood leaves the checkpoint 16-bit (sizing/checkpoint_format.hpp).
void read_quantization(const json& root, ModelArch& m);
// Multi-head latent attention keys (kv_lora_rank, …) when present.
[[nodiscard]] Result<void> read_mla(const Reader& r, ModelArch& m);
// The checks and fields every reader ends with: the total size bound, the HF id from
// _name_or_path, the derived parameter count.
[[nodiscard]] Result<ModelArch> finish_arch(const Reader& top, const Reader& r, ModelArch m);
// A config whose model_type is not modelled: sized from generic keys, approximations labelled
// (sizing/model_config_generic.cpp).
[[nodiscard]] Result<ModelArch> read_generic_config(const json& root, const json& text, const std::string& type,
                                                    std::string_view source);

}  // namespace gpurent::config_detail
