// SPDX-License-Identifier: MIT
// The card catalogue: the memory CUDA reports as the device's total (what PyTorch prints as
// "total capacity", what vLLM logs as total_gpu_memory), not the marketing label. Every figure
// names its source; "[derived]" marks arithmetic on cited numbers (see docs/providers.md).
#include "providers/card.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/text.hpp"

namespace gpurent {
namespace {

// Centi-GiB -> bytes, e.g. 2365 -> 23.65 GiB.
Bytes centi_gib(std::uint64_t c) { return Bytes{c * k_gib / 100}; }

std::vector<Card> make_catalog()
{
  std::vector<Card> cards;
  cards.push_back({"t4", "T4 16GB", 16, centi_gib(1456),
                   {"tesla t4", "nvidia t4", "t4 16g", "t4-16gb", "tesla t4 16gb"},
                   "PyTorch OOM 'total capacity of 14.56 GiB' on a Tesla T4 (github.com/Zheng-Chong/CatVTON/issues/133, "
                   "github.com/AlphaGPU/leetgpu-challenges/issues/52)"});
  cards.push_back({"rtx-a4000", "RTX A4000 16GB", 16, centi_gib(1561),
                   {"a4000", "rtx a4000", "nvidia rtx a4000", "a4000 16g"},
                   "PyTorch OOM 'total capacity of 15.61 GiB' on an RTX A4000 (github.com/DengKaiCQ/VGGT-Long/issues/6)"});
  cards.push_back({"rtx-4080", "RTX 4080 16GB", 16, centi_gib(1561),
                   {"4080", "rtx 4080", "geforce rtx 4080", "rtx 4080 super", "4080 super", "rtx 4080 16g"},
                   "[assumed] same as the RTX A4000 (both 16 GB boards, 16376MiB in nvidia-smi); the 15.99 GiB of "
                   "aigc-apps/sd-webui-EasyPhoto#281 is a Windows (WDDM) figure"});
  cards.push_back({"rtx-4090", "RTX 4090 24GB", 24, centi_gib(2365),
                   {"4090", "rtx 4090", "geforce rtx 4090", "rtx 4090 24g", "rtx4090-24gb"},
                   "PyTorch OOM 'total capacity of 23.65 GiB' (seed 002_c21f26ea732713ce)"});
  cards.push_back({"rtx-4090-48gb", "RTX 4090 48GB", 48, centi_gib(4765),
                   {"4090 48g", "rtx 4090 48g", "rtx 4090 48gb", "4090-48gb"},
                   "[derived] nvidia-smi memory.total 49140MiB (github.com/tinygrad/open-gpu-kernel-modules/issues/36) "
                   "minus the 24GB card's nvidia-smi/CUDA gap (24564MiB vs 23.65 GiB)"});
  cards.push_back({"rtx-5090", "RTX 5090 32GB", 32, centi_gib(3136),
                   {"5090", "rtx 5090", "geforce rtx 5090", "rtx 5090 32g"},
                   "PyTorch OOM 'total capacity of 31.36 GiB' (github.com/TrajectoryCrafter/TrajectoryCrafter/issues/20)"});
  cards.push_back({"rtx-3090", "RTX 3090 24GB", 24, centi_gib(2358),
                   {"3090", "rtx 3090", "geforce rtx 3090", "rtx 3090 24g"},
                   "vLLM total_gpu_memory (23.58GiB) (github.com/vllm-project/vllm/pull/14447; shared/reference/sizing_formulas.md)"});
  cards.push_back({"a10g", "A10G 24GB", 24, centi_gib(2207),
                   {"nvidia a10g", "a10g 24g", "a10g-24gb"},
                   "vLLM total_gpu_memory (22.07GiB) on an A10G (shared/reference/sizing_formulas.md)"});
  cards.push_back({"a10", "A10 24GB", 24, centi_gib(2207),
                   {"nvidia a10", "a10 24g", "a10-24gb"},
                   "[assumed] same as A10G (same GA102 24GB GDDR6 board); no separate A10 figure found"});
  cards.push_back({"l4", "L4 24GB", 24, centi_gib(2203),
                   {"nvidia l4", "l4 24g", "l4-24gb"},
                   "PyTorch OOM 'total capacity of 22.03 GiB' on an L4 (github.com/ArcInstitute/evo2/issues/190)"});
  cards.push_back({"l40s", "L40S 48GB", 48, centi_gib(4453),
                   {"nvidia l40s", "l40s 48g", "l40s-48gb"},
                   "PyTorch OOM 'total capacity of 44.53 GiB' on an L40S (github.com/Wan-Video/Wan2.1/issues/205)"});
  cards.push_back({"rtx-6000-ada", "RTX 6000 Ada 48GB", 48, centi_gib(4443),
                   {"rtx 6000 ada", "rtx6000 ada", "6000 ada", "rtx 6000 ada generation"},
                   "PyTorch OOM 'total capacity of 44.43 GiB', nvidia-smi 46068MiB (github.com/DINGYANB/MTVCrafter/issues/21)"});
  cards.push_back({"a6000", "RTX A6000 48GB", 48, centi_gib(4754),
                   {"rtx a6000", "nvidia rtx a6000", "a6000 48g"},
                   "PyTorch OOM '47.54 GiB total capacity' quoted for 48GB GA102 cards in public repos; "
                   "nvidia-smi shows 49140MiB"});
  cards.push_back({"a100-40gb", "A100 40GB", 40, centi_gib(3950),
                   {"a100 40g", "a100-40g", "a100 sxm4 40gb", "a100-pcie-40gb"},
                   "PyTorch OOM 'total capacity of 39.50 GiB' on one A100 (github.com/TianheWu/CoSeR/issues/10)"});
  cards.push_back({"a100-80gb", "A100 80GB", 80, centi_gib(7925),
                   {"a100 80g", "a100-80g", "a100 sxm4 80gb", "a100-sxm4-80gb", "a100 pcie 80gb"},
                   "PyTorch OOM '79.25 GiB total capacity' on an A100 (github.com/levihsu/OOTDiffusion/issues/235)"});
  cards.push_back({"h100-80gb", "H100 80GB", 80, centi_gib(7919),
                   {"h100", "h100 80g", "h100-80g", "h100 sxm", "h100 sxm5", "h100 pcie", "h100 80gb hbm3"},
                   "physical 79.19 GiB in the llm-d capacity-planner report (shared/reference/sizing_measured.json); "
                   "nvidia-smi 81559MiB"});
  cards.push_back({"h200", "H200 141GB", 141, centi_gib(13994),
                   {"h200 141g", "h200-141gb", "h200 141gb", "nvidia h200"},
                   "[derived] nvidia-smi memory.total 143771MiB (public nvidia-smi dumps) minus the H100's "
                   "nvidia-smi/CUDA gap (81559MiB vs 79.19 GiB)"});
  cards.push_back({"rtx-pro-6000", "RTX PRO 6000 96GB", 96, centi_gib(9497),
                   {"rtx pro 6000", "rtx pro 6000 blackwell", "pro 6000", "rtx pro 6000 96g", "rtx-pro-6000-96gb"},
                   "CUDA total=94.97 GiB logged by ds4 (github.com/antirez/ds4/issues/431); nvidia-smi 97887MiB"});
  cards.push_back({"b200", "B200 180GB", 180, centi_gib(17835),
                   {"nvidia b200", "b200 180g", "b200-180gb", "b200 192gb"},
                   "cudaDeviceProp total global memory 178.35 (GiB) (github.com/pytorch/ao/pull/4002); "
                   "nvidia-smi 183359MiB (github.com/NVIDIA/TensorRT-LLM/issues/10278)"});
  return cards;
}

const std::vector<Card>& catalog()
{
  static const std::vector<Card> k_cards = make_catalog();
  return k_cards;
}

// Spellings that name more than one card: the user must say which.
struct Ambiguous {
  std::string_view key;
  std::vector<std::string_view> choices;
};

const std::vector<Ambiguous>& ambiguous_names()
{
  static const std::vector<Ambiguous> k_ambiguous = {
      {"a100", {"a100-40gb", "a100-80gb"}},
      {"nvidiaa100", {"a100-40gb", "a100-80gb"}},
      {"rtx6000", {"rtx-6000-ada", "rtx-pro-6000", "a6000"}},
      {"6000", {"rtx-6000-ada", "rtx-pro-6000", "a6000"}},
  };
  return k_ambiguous;
}

// "a10080gb" also matches "a10080g" and "a10080".
std::vector<std::string> key_variants(std::string key)
{
  std::vector<std::string> out{key};
  if (key.size() > 2 && key.ends_with("gb")) {
    out.push_back(key.substr(0, key.size() - 1));
  }
  return out;
}

std::string strip_vendor(std::string key)
{
  for (std::string_view prefix : {"nvidia", "geforce"}) {
    if (key.starts_with(prefix) && key.size() > prefix.size()) {
      key.erase(0, prefix.size());
    }
  }
  return key;
}

bool card_matches(const Card& c, const std::string& wanted)
{
  std::vector<std::string> keys{normalize_key(c.id), normalize_key(c.display)};
  for (const auto& a : c.aliases) {
    keys.push_back(normalize_key(a));
  }
  for (const auto& k : keys) {
    for (const auto& v : key_variants(k)) {
      if (v == wanted || strip_vendor(v) == wanted) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::span<const Card> card_catalog() noexcept { return catalog(); }

Result<Card> find_card(std::string_view name)
{
  if (!printable_ascii(name)) {
    return fail(Errc::not_found, "card name holds a control or non-ASCII byte; give a card such as `rtx-4090` (see `gpurent offers`)");
  }
  const std::string raw = normalize_key(name);
  if (raw.empty()) {
    return fail(Errc::invalid_input, "card: empty name; give a card such as `rtx-4090` or `a100-80gb` (see `gpurent offers`)");
  }
  std::vector<std::string> wanted = key_variants(raw);
  const std::string stripped = strip_vendor(raw);
  if (stripped != raw) {
    for (auto& v : key_variants(stripped)) {
      wanted.push_back(v);
    }
  }
  for (const auto& w : wanted) {
    for (const auto& amb : ambiguous_names()) {
      if (w == amb.key) {
        std::string list;
        for (auto ch : amb.choices) {
          list += list.empty() ? "" : ", ";
          list += ch;
        }
        return fail(Errc::invalid_input,
                    "card `" + std::string(name) + "`: ambiguous; say which: " + list);
      }
    }
  }
  for (const auto& w : wanted) {
    const auto& cards = catalog();
    const auto it = std::find_if(cards.begin(), cards.end(), [&](const Card& c) { return card_matches(c, w); });
    if (it != cards.end()) {
      return *it;
    }
  }
  std::string known;
  for (const auto& c : catalog()) {
    known += known.empty() ? "" : ", ";
    known += c.id;
  }
  return fail(Errc::not_found, "card `" + std::string(name) + "`: not in the catalogue; known cards: " + known);
}

}  // namespace gpurent
