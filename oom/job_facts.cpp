// SPDX-License-Identifier: MIT
// The job a log describes: llama.cpp's model and context lines, vLLM's and SGLang's configuration.
#include "oom/job_facts.hpp"

#include <algorithm>
#include <cctype>

#include "common/rounding.hpp"
#include "common/text.hpp"

namespace gpurent {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

// The value written after `key` in `line`: the key starts a word, may be quoted (a Python dict
// key), and is followed by spaces and '=' or ':'. The value ends at , ) } or a quote (the whole
// rest of the line with `to_end`), trimmed and unquoted.
std::optional<std::string_view> value_of(std::string_view line, std::string_view key, bool to_end = false)
{
  std::size_t from = 0;
  while (true) {
    const std::size_t at = line.find(key, from);
    if (at == std::string_view::npos) {
      return std::nullopt;
    }
    from = at + 1;
    if (at > 0 && word_char(line[at - 1])) {
      continue;
    }
    std::size_t i = at + key.size();
    if (i < line.size() && (line[i] == '\'' || line[i] == '"')) {
      ++i;
    }
    while (i < line.size() && line[i] == ' ') {
      ++i;
    }
    if (i >= line.size() || (line[i] != '=' && line[i] != ':')) {
      continue;
    }
    ++i;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\'' || line[i] == '"')) {
      ++i;
    }
    std::size_t end = i;
    if (to_end) {
      end = line.size();
    } else {
      while (end < line.size() && line[end] != ',' && line[end] != ')' && line[end] != '}' && line[end] != '\'' &&
             line[end] != '"') {
        ++end;
      }
    }
    const std::string_view v = trim(line.substr(i, end - i));
    if (v.empty()) {
      continue;
    }
    return v;
  }
}

std::optional<std::uint64_t> count_of(std::string_view line, std::string_view key)
{
  const auto v = value_of(line, key);
  return v ? parse_u64(*v) : std::nullopt;
}

// "4.58 GiB", "14.9889 GiB", "16384.00 MiB", "14.99GB": binary units, as the engines mean them.
std::optional<Bytes> size_of(std::string_view text)
{
  text = trim(text);
  std::size_t n = 0;
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) != 0 || text[n] == '.')) {
    ++n;
  }
  const auto number = parse_decimal(text.substr(0, n));
  if (!number || number->out_of_range || number->value < 0 || number->value > 1e9) {
    return std::nullopt;
  }
  std::string_view unit = trim(text.substr(n));
  std::uint64_t scale = 0;
  if (unit.starts_with("GiB") || unit.starts_with("GB")) {
    scale = k_gib;
  } else if (unit.starts_with("MiB") || unit.starts_with("MB")) {
    scale = k_mib;
  } else if (unit.starts_with("TiB") || unit.starts_with("TB")) {
    scale = k_gib * 1024;
  } else {
    return std::nullopt;
  }
  return Bytes{static_cast<std::uint64_t>(round_half_away(number->value * static_cast<double>(scale)))};
}

// "8.03 B", "70.55 B", "494.03 M": a parameter count as llama.cpp prints it.
std::optional<std::uint64_t> params_of(std::string_view text)
{
  std::size_t n = 0;
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) != 0 || text[n] == '.')) {
    ++n;
  }
  const auto number = parse_decimal(text.substr(0, n));
  const std::string_view unit = trim(text.substr(n));
  if (!number || number->out_of_range || unit.empty()) {
    return std::nullopt;
  }
  double scale = 0;
  switch (unit.front()) {
  case 'K': scale = 1e3; break;
  case 'M': scale = 1e6; break;
  case 'B': scale = 1e9; break;
  case 'T': scale = 1e12; break;
  default: return std::nullopt;
  }
  const double v = number->value * scale;
  if (v <= 0 || v > 1e14) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(round_half_away(v));
}

std::optional<double> share_of(std::string_view line, std::string_view key)
{
  const auto v = value_of(line, key);
  if (!v) {
    return std::nullopt;
  }
  const auto d = parse_decimal(*v);
  if (!d || d->out_of_range || d->value <= 0 || d->value > 1) {
    return std::nullopt;
  }
  return d->value;
}

// Python's None reads as not given.
std::string word_of(std::string_view line, std::string_view key)
{
  const auto v = value_of(line, key);
  return !v || *v == "None" || *v == "null" ? std::string{} : std::string(*v);
}

template <class T>
void set(std::optional<T>& field, const std::optional<T>& v)
{
  if (v) {
    field = v;
  }
}

void set(std::string& field, std::string v)
{
  if (!v.empty()) {
    field = std::move(v);
  }
}

bool gpu_buffer(std::string_view name)
{
  for (std::string_view dev : {"CUDA", "ROCm", "Vulkan", "SYCL", "Metal", "MUSA", "CANN"}) {
    if (name.starts_with(dev) && name.find("_Host") == std::string_view::npos) {
      return true;
    }
  }
  return false;
}

// llama.cpp's print_info / llm_load_print_meta, llama_context and KV-cache lines.
void llama_line(std::string_view line, OomJobFacts& f)
{
  set(f.arch, word_of(line, "arch"));
  if (const auto v = value_of(line, "general.name", true)) {
    f.model_name = std::string(*v);
  }
  set(f.n_layer, count_of(line, "n_layer"));
  set(f.n_embd, count_of(line, "n_embd"));
  set(f.n_head, count_of(line, "n_head"));
  set(f.n_head_kv, count_of(line, "n_head_kv"));
  set(f.n_embd_head_k, count_of(line, "n_embd_head_k"));
  set(f.n_ff, count_of(line, "n_ff"));
  set(f.n_vocab, count_of(line, "n_vocab"));
  set(f.n_expert, count_of(line, "n_expert"));
  set(f.n_expert_used, count_of(line, "n_expert_used"));
  set(f.n_ctx_train, count_of(line, "n_ctx_train"));
  set(f.n_swa, count_of(line, "n_swa"));
  set(f.n_ctx, count_of(line, "n_ctx"));
  set(f.n_seq_max, count_of(line, "n_seq_max"));
  set(f.n_ubatch, count_of(line, "n_ubatch"));
  if (const auto v = value_of(line, "model params", true)) {
    set(f.model_params, params_of(*v));
  }
  if (const auto v = value_of(line, "file type", true)) {
    f.file_type = std::string(*v);
  }
  if (const auto v = value_of(line, "file size", true)) {
    set(f.file_size, size_of(*v));
    if (const std::size_t open = v->find('('); open != std::string_view::npos) {
      const std::string_view bpw = trim(v->substr(open + 1, v->find(' ', open) - open - 1));
      if (const auto d = parse_decimal(bpw); d && !d->out_of_range && d->value > 0 && d->value <= 64) {
        f.file_bpw = d->value;
      }
    }
  }
  if (const auto v = value_of(line, "flash_attn")) {
    f.flash_attn = std::string(*v);
  }
  if (line.find("Flash Attention was") != std::string_view::npos) {
    if (line.find("set to enabled") != std::string_view::npos) {
      f.flash_attn = "enabled";
    } else if (line.find("set to disabled") != std::string_view::npos) {
      f.flash_attn = "disabled";
    }
  }
  set(f.type_k, word_of(line, "type_k"));
  set(f.type_v, word_of(line, "type_v"));
  // llama_kv_cache: size = 16384.00 MiB (...), K (f16): 8192.00 MiB, V (f16): 8192.00 MiB
  for (const auto& [mark, field] : {std::pair{std::string_view("K ("), &f.type_k}, std::pair{std::string_view("V ("), &f.type_v}}) {
    const std::size_t at = line.find(mark);
    if (at != std::string_view::npos && (at == 0 || line[at - 1] == ' ')) {
      const std::size_t close = line.find("):", at);
      if (close != std::string_view::npos && close - at < 16) {
        *field = std::string(line.substr(at + mark.size(), close - at - mark.size()));
      }
    }
  }
  // load_tensors:        CUDA0 model buffer size =  4403.49 MiB
  if (const std::size_t at = line.find(" model buffer size"); at != std::string_view::npos) {
    const std::string_view before = trim(line.substr(0, at));
    const std::string_view name = before.substr(before.rfind(' ') == std::string_view::npos ? 0 : before.rfind(' ') + 1);
    const std::size_t eq = line.find('=', at);
    if (gpu_buffer(name) && eq != std::string_view::npos) {
      if (const auto b = size_of(line.substr(eq + 1))) {
        f.gpu_model_buffers = f.gpu_model_buffers.value_or(Bytes{}) + *b;
      }
    }
  }
}

// vLLM's "Initializing a V1 LLM engine (...) with config: model='...', ..." and "non-default args:
// {...}", SGLang's "server_args=ServerArgs(model_path='...', ...)".
void serving_line(std::string_view line, OomJobFacts& f)
{
  set(f.model, word_of(line, "model"));
  set(f.model, word_of(line, "model_path"));
  set(f.max_model_len, count_of(line, "max_seq_len"));
  set(f.max_model_len, count_of(line, "max_model_len"));
  set(f.max_model_len, count_of(line, "context_length"));
  set(f.tensor_parallel_size, count_of(line, "tensor_parallel_size"));
  set(f.tensor_parallel_size, count_of(line, "tp_size"));
  set(f.pipeline_parallel_size, count_of(line, "pipeline_parallel_size"));
  set(f.max_num_seqs, count_of(line, "max_num_seqs"));
  set(f.max_num_seqs, count_of(line, "max_running_requests"));
  set(f.gpu_memory_utilization, share_of(line, "gpu_memory_utilization"));
  set(f.gpu_memory_utilization, share_of(line, "mem_fraction_static"));
  set(f.quantization, word_of(line, "quantization"));
  set(f.kv_cache_dtype, word_of(line, "kv_cache_dtype"));
  set(f.dtype, word_of(line, "dtype"));
}

}  // namespace

std::string gguf_type_name(std::string_view file_type)
{
  std::string_view t = trim(file_type);
  if (t.starts_with("MOSTLY ")) {
    t.remove_prefix(7);
  }
  const std::size_t dash = t.find(" - ");
  const std::string_view base = trim(t.substr(0, dash));
  const std::string_view size = dash == std::string_view::npos ? std::string_view{} : trim(t.substr(dash + 3));
  if (base.empty() || base.find(' ') != std::string_view::npos) {
    return {};
  }
  std::string out(base);
  if (size == "Small" || size == "Medium" || size == "Large") {
    out += '_';
    out += size.front();
  }
  if (out == "BF16") {
    return "bf16";
  }
  return out;
}

bool OomJobFacts::any() const noexcept
{
  return n_layer || n_embd || n_ctx || !file_type.empty() || !model.empty() || max_model_len || tensor_parallel_size ||
         !quantization.empty() || weights_loaded;
}

namespace oom_detail {

void JobFactsReader::on_line(std::string_view text)
{
  const bool has_eq = text.find('=') != std::string_view::npos;
  OomJobFacts& f = m_current;
  if (!has_eq && text.find(':') == std::string_view::npos && text.find("took") == std::string_view::npos &&
      text.find("server version") == std::string_view::npos) {
    return;
  }
  // A new run: what the run before it said is no longer the job (a report keeps its own copy).
  if (text.find("loaded meta data with") != std::string_view::npos ||
      text.find("vLLM API server version") != std::string_view::npos) {
    const std::string device = m_current.device_name;
    const std::uint32_t devices = m_pending_devices;
    m_current = OomJobFacts{};
    m_current.device_name = device;
    m_current.devices = devices;
    m_pending_devices = 0;
    m_config_seen = false;
    if (const std::size_t at = text.find("vLLM API server version "); at != std::string_view::npos) {
      std::string_view v = text.substr(at + std::string_view("vLLM API server version ").size());
      v = v.substr(0, std::min<std::size_t>(v.find_first_of(" \t"), 40));
      m_current.engine_version = std::string(v);
    }
  }
  if (text.find("using device ") != std::string_view::npos) {
    const std::size_t open = text.find('(', text.find("using device "));
    const std::size_t close = text.find(')', open == std::string_view::npos ? 0 : open);
    if (open != std::string_view::npos && close != std::string_view::npos) {
      f.device_name = std::string(text.substr(open + 1, close - open - 1));
      ++m_pending_devices;
    }
  }
  if (const std::size_t took = text.find(" took "); took != std::string_view::npos &&
                                                     (text.find("Model loading") != std::string_view::npos ||
                                                      text.find("model weights") != std::string_view::npos)) {
    if (const auto b = size_of(text.substr(took + 6))) {
      f.weights_loaded = b;
    }
  }
  const bool serving_config = text.find("config:") != std::string_view::npos || text.find("args") != std::string_view::npos ||
                              text.find("Args(") != std::string_view::npos;
  if (serving_config) {
    const bool engine_init = text.find("LLM engine") != std::string_view::npos;
    if (engine_init && m_config_seen) {
      std::string release = std::move(m_current.engine_version);  // the server's, printed once before its engines
      m_current = OomJobFacts{};  // a second engine start in the same log
      m_current.engine_version = std::move(release);
    }
    m_config_seen = m_config_seen || engine_init;
    serving_line(text, f);
    return;
  }
  if (!has_eq && text.find("K (") == std::string_view::npos) {
    return;
  }
  llama_line(text, f);
}

OomJobFacts JobFactsReader::snapshot() const
{
  OomJobFacts out = m_current;
  if (out.devices == 0) {
    out.devices = m_pending_devices;
  }
  return out;
}

}  // namespace oom_detail
}  // namespace gpurent
