// SPDX-License-Identifier: MIT
#include "sizing/quant_skip.hpp"

#include <vector>

#include "sizing/param_count.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;

std::vector<std::string_view> parts_of(std::string_view s)
{
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t dot = s.find('.', start);
    const std::size_t end = dot == std::string_view::npos ? s.size() : dot;
    out.push_back(s.substr(start, end - start));
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return out;
}

// A plain entry: a run of the name's dot-separated parts ('*' stands for any one part).
bool plain_matches(std::string_view entry, std::string_view name)
{
  if (entry.find('*') == std::string_view::npos) {
    // No wildcard: the entry at part boundaries of the name.
    for (std::size_t at = name.find(entry); at != std::string_view::npos; at = name.find(entry, at + 1)) {
      const std::size_t end = at + entry.size();
      if ((at == 0 || name[at - 1] == '.') && (end == name.size() || name[end] == '.')) {
        return true;
      }
    }
    return false;
  }
  const auto e = parts_of(entry);
  const auto n = parts_of(name);
  if (e.empty() || e.size() > n.size()) {
    return false;
  }
  for (std::size_t at = 0; at + e.size() <= n.size(); ++at) {
    bool all = true;
    for (std::size_t k = 0; k < e.size() && all; ++k) {
      all = e[k] == "*" || e[k] == n[at + k];
    }
    if (all) {
      return true;
    }
  }
  return false;
}

bool is_word(char c) noexcept
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One atom of the regex subset at p[0..len): returns its length, or 0 when unsupported.
std::size_t atom_length(std::string_view p) noexcept
{
  if (p.empty()) {
    return 0;
  }
  if (p[0] == '\\') {
    return p.size() >= 2 ? 2 : 0;
  }
  switch (p[0]) {
  case '(': case ')': case '[': case ']': case '|': case '{': case '}': case '*': case '+': case '?': return 0;
  default: return 1;
  }
}

bool atom_accepts(std::string_view atom, char c) noexcept
{
  if (atom[0] == '.') {
    return true;
  }
  if (atom[0] == '\\') {
    switch (atom[1]) {
    case 'd': return c >= '0' && c <= '9';
    case 'w': return is_word(c);
    default: return atom[1] == c;
    }
  }
  return atom[0] == c;
}

// Backtracking match of the subset from the start of `s`; `ok` turns false on unsupported syntax.
bool regex_at(std::string_view p, std::string_view s, bool& ok)
{
  if (p.empty()) {
    return true;  // re.match: a prefix of the name is enough
  }
  if (p == "$") {
    return s.empty();
  }
  const std::size_t len = atom_length(p);
  if (len == 0) {
    ok = false;
    return false;
  }
  const std::string_view atom = p.substr(0, len);
  const char q = len < p.size() ? p[len] : '\0';
  if (q == '*' || q == '+' || q == '?') {
    const std::string_view rest = p.substr(len + 1);
    const std::size_t min = q == '+' ? 1 : 0;
    std::size_t max = 0;
    while (max < s.size() && (q != '?' || max < 1) && atom_accepts(atom, s[max])) {
      ++max;
    }
    for (std::size_t k = max + 1; k-- > min;) {
      if (regex_at(rest, s.substr(k), ok)) {
        return true;
      }
      if (!ok) {
        return false;
      }
    }
    return false;
  }
  return !s.empty() && atom_accepts(atom, s[0]) && regex_at(p.substr(len), s.substr(1), ok);
}

// The module names transformers gives one layer's linear kinds (param_count's LinearModule names).
std::string module_name(const ModelArch& m, const LinearModule& l, U layer, U expert)
{
  const std::string base = "model.layers." + std::to_string(layer) + ".";
  const std::string_view n = l.name;
  if (l.expert) {
    const std::string_view proj = n.substr(n.find('.') + 1);
    if (m.family == "mixtral") {
      const std::string_view w = proj == "gate_proj" ? "w1" : proj == "up_proj" ? "w3" : "w2";
      return base + "block_sparse_moe.experts." + std::to_string(expert) + "." + std::string(w);
    }
    return base + "mlp.experts." + std::to_string(expert) + "." + std::string(proj);
  }
  if (n.starts_with("shared_experts.")) {
    const std::string_view proj = n.substr(n.find('.') + 1);
    return base + (m.family == "qwen2_moe" ? "mlp.shared_expert." : "mlp.shared_experts.") + std::string(proj);
  }
  const bool mlp = n == "gate_proj" || n == "up_proj" || n == "down_proj" || n == "fc1" || n == "fc2";
  return base + (mlp ? "mlp." : "self_attn.") + std::string(n);
}

}  // namespace

bool module_matches(std::string_view entry, std::string_view name, bool* supported) noexcept
{
  if (supported != nullptr) {
    *supported = true;
  }
  if (entry.starts_with("re:")) {
    std::string_view p = entry.substr(3);
    if (p.starts_with('^')) {
      p.remove_prefix(1);
    }
    bool ok = true;
    const bool hit = regex_at(p, name, ok);
    if (supported != nullptr) {
      *supported = ok;
    }
    return ok && hit;
  }
  return plain_matches(entry, name);
}

UnquantizedLinears unquantized_linears(const ModelArch& m, std::span<const std::string> entries)
{
  UnquantizedLinears out;
  if (entries.empty() || m.layers == 0) {
    return out;
  }
  std::vector<bool> used(entries.size(), false);
  const auto any = [&](const std::string& name) {
    bool hit = false;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      bool ok = true;
      if (module_matches(entries[k], name, &ok)) {
        used[k] = true;
        hit = true;
      }
      if (!ok && !used[k]) {
        used[k] = true;
        ++out.unsupported;
      }
    }
    return hit;
  };
  const ParamBreakdown pb = count_params(m);
  const U moe_first = m.is_moe() && m.dense_layers < m.layers ? m.dense_layers : (m.is_moe() ? 0 : m.layers);
  for (const LinearModule& l : pb.linears) {
    const U weights = l.in_features * l.out_features;
    const bool dense_mlp = !l.expert && !l.name.starts_with("shared_experts.") &&
                           (l.name == "gate_proj" || l.name == "up_proj" || l.name == "down_proj" || l.name == "fc1" ||
                            l.name == "fc2");
    U first = 0;
    U last = m.layers;  // exclusive
    if (l.expert || l.name.starts_with("shared_experts.")) {
      first = moe_first;
    } else if (dense_mlp && m.is_moe()) {
      last = moe_first;
    }
    for (U layer = first; layer < last; ++layer) {
      if (!l.expert) {
        if (any(module_name(m, l, layer, 0))) {
          out.linear += weights;
        }
        continue;
      }
      // Experts: the first and last expert decide for all unless they differ (an entry naming
      // single experts), then each expert is looked at.
      const U experts = m.experts;
      const bool first_hit = any(module_name(m, l, layer, 0));
      const bool last_hit = any(module_name(m, l, layer, experts - 1));
      if (first_hit == last_hit) {
        out.experts += first_hit ? weights * experts : 0;
        continue;
      }
      for (U e = 0; e < experts; ++e) {
        if (any(module_name(m, l, layer, e))) {
          out.experts += weights;
        }
      }
    }
  }
  for (std::size_t k = 0; k < entries.size(); ++k) {
    out.unmatched += used[k] ? 0U : 1U;
  }
  return out;
}

}  // namespace gpurent
