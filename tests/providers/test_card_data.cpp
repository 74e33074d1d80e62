// SPDX-License-Identifier: MIT
// data/cards.json as compiled in: every card as the providers sell it, each figure sourced; the
// parser's errors name the card and key; user cards add and override.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/card_data.hpp"

using namespace gpurent;

TEST_CASE("Card data: the compiled-in initialisers are exactly what the strict reader reads from data/cards.json", "[providers][card]")
{
  const auto read = card_data_from_json(embedded_cards_json());
  REQUIRE(read.has_value());
  const CardData& built_in = builtin_card_data();
  REQUIRE(built_in.cards.size() == read->cards.size());
  for (std::size_t i = 0; i < read->cards.size(); ++i) {
    INFO(read->cards[i].id);
    CHECK(built_in.cards[i] == read->cards[i]);  // every field, doubles bit for bit
  }
  CHECK(built_in.ambiguous == read->ambiguous);
  CHECK_FALSE(built_in.ambiguous.empty());
}

TEST_CASE("Card data: the built-in file parses and every card is complete or says what it lacks", "[providers][card]")
{
  const auto data = card_data_from_json(embedded_cards_json());
  REQUIRE(data.has_value());
  REQUIRE(data->cards.size() >= 28);
  std::map<std::string, std::string> owner;  // spelling -> the card it names
  for (const Card& c : data->cards) {
    INFO(c.id);
    CHECK(owner.emplace(normalize_key(c.id), c.id).second);
    for (const auto& a : c.aliases) {
      INFO(a);
      const auto [it, added] = owner.emplace(normalize_key(a), c.id);
      CHECK(it->second == c.id);  // no spelling names two cards
    }
    REQUIRE(c.compute_capability.has_value());  // every built-in card's generation is known
    CHECK(*c.compute_capability >= 70);  // Volta (V100) is the oldest built-in generation
    CHECK_FALSE(c.source.empty());
    CHECK(c.sources.contains("compute_capability"));
    if (c.mem_bw_gbs) {
      CHECK(c.sources.contains("mem_bw_gbs"));
    }
    const bool complete = c.mem_bw_gbs && (c.tflops.bf16 || c.tflops.fp16) && c.link.pcie_gen;
    CHECK((complete || !c.gaps.empty()));  // a gap is said, never filled by a guess
    if (*c.compute_capability < 89) {
      CHECK_FALSE(c.tflops.fp8.has_value());  // no FP8 tensor cores before Ada
    }
  }
}

TEST_CASE("Card data: SXM, PCIe and NVL boards are different cards", "[providers][card]")
{
  const auto sxm = find_card("h100-sxm");
  const auto pcie = find_card("h100-pcie");
  const auto nvl = find_card("h100-nvl");
  REQUIRE((sxm && pcie && nvl));
  CHECK(*sxm->compute_capability == 90);
  CHECK(*sxm->mem_bw_gbs > *pcie->mem_bw_gbs);
  CHECK(*sxm->link.nvlink_gb_per_s > *pcie->link.nvlink_gb_per_s);
  CHECK(nvl->usable > sxm->usable);
  CHECK(find_card("a100-80gb-sxm")->id != find_card("a100-80gb-pcie")->id);
  CHECK(*find_card("t4")->compute_capability == 75);
  CHECK(*find_card("rtx-5090")->compute_capability == 120);
  CHECK(*find_card("b200")->compute_capability == 100);
  CHECK(compute_capability_text(*find_card("rtx-pro-6000")) == "12.0");
}

TEST_CASE("Card data: A40, L40, the SXM2 V100s and the 96 GB GH200, by the names their sellers use", "[providers][card]")
{
  CHECK(find_card("A40")->id == "a40");
  CHECK(*find_card("a40")->compute_capability == 86);
  CHECK(find_card("NVIDIA L40")->id == "l40");
  CHECK(find_card("l40")->id != find_card("l40s")->id);
  CHECK(find_card("l40")->tflops.bf16 < find_card("l40s")->tflops.bf16);
  // The V100 is here as the SXM2 modules: a size alone names one, the bare name is ambiguous.
  const auto v16 = find_card("v100-16gb");
  REQUIRE(v16);
  CHECK(v16->id == "v100-16gb-sxm");
  CHECK(find_card("Tesla V100-SXM2-32GB")->id == "v100-32gb-sxm");
  CHECK(*v16->compute_capability == 70);
  CHECK_FALSE(v16->tflops.bf16.has_value());  // Volta: FP16 tensor cores only
  CHECK_FALSE(v16->tflops.int8.has_value());
  CHECK(*v16->tflops.fp16 == 125);
  CHECK(*v16->link.nvlink_gen == 2);
  for (const char* name : {"v100", "Tesla V100", "nvidia v100"}) {
    INFO(name);
    const auto amb = find_card(name);
    REQUIRE_FALSE(amb.has_value());
    CHECK(amb.error().message.find("v100-16gb-sxm, v100-32gb-sxm") != std::string::npos);
  }
  // CUDA names the 96 GB HBM3 GH200 "NVIDIA GH200 480GB" (480 GB: the Grace CPU's LPDDR5X).
  CHECK(find_card("NVIDIA GH200 480GB")->id == "gh200");
  CHECK(*find_card("gh200")->compute_capability == 90);
  CHECK(find_card("gh200")->label_gb == 96);
  CHECK_FALSE(find_card("gh200")->gaps.empty());  // its links are not sourced: said
}

TEST_CASE("Card data: bad files are errors naming the card and key", "[providers][card]")
{
  const auto no_usable = card_data_from_json(R"({"cards":[{"id":"x","compute_capability":"8.9"}]})");
  REQUIRE_FALSE(no_usable.has_value());
  CHECK(no_usable.error().message.find("card x.usable_gib") != std::string::npos);
  const auto bad_cc = card_data_from_json(R"({"cards":[{"id":"x","usable_gib":20,"compute_capability":"sm89"}]})");
  REQUIRE_FALSE(bad_cc.has_value());
  CHECK(bad_cc.error().message.find("compute_capability") != std::string::npos);
  const auto unknown = card_data_from_json(R"({"cards":[{"id":"x","usable_gib":20,"vram":24}]})");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("card x.vram") != std::string::npos);
  const auto negative = card_data_from_json(R"({"cards":[{"id":"x","usable_gib":-1}]})");
  REQUIRE_FALSE(negative.has_value());
  const auto twice = card_data_from_json(R"({"cards":[{"id":"x","usable_gib":20},{"id":"X","usable_gib":21}]})");
  REQUIRE_FALSE(twice.has_value());
  CHECK(twice.error().message.find("twice") != std::string::npos);
  CHECK_FALSE(card_data_from_json("[1,2").has_value());
  CHECK(parse_compute_capability("12.0").value() == 120);
  CHECK(parse_compute_capability("8.9").value() == 89);
  CHECK_FALSE(parse_compute_capability("89").has_value());
  CHECK_FALSE(parse_compute_capability("8.").has_value());
  CHECK_FALSE(parse_compute_capability("").has_value());
}

TEST_CASE("Card data: a user card is added, an override keeps the built-in figures it does not name", "[providers][card]")
{
  const auto added = user_card_from_json("my-a40", R"({"usable_gib": 44.35, "display": "A40 48GB", "label_gb": 48})");
  REQUIRE(added.has_value());
  CHECK(added->origin == "config");
  CHECK_FALSE(added->compute_capability.has_value());  // unknown, never assumed
  const auto missing = user_card_from_json("my-a40", R"({"display": "A40"})");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message.find("usable_gib") != std::string::npos);
  const auto over = user_card_from_json("rtx-4090", R"({"usable_gib": 23.5, "tflops": {"bf16": 170}})");
  REQUIRE(over.has_value());
  CHECK(to_gib(over->usable) == Approx(23.5).margin(0.001));
  CHECK(*over->compute_capability == 89);  // kept from the built-in card
  CHECK(*over->tflops.bf16 == Approx(170));
  CHECK(over->tflops.fp8.has_value());
  install_user_cards({*added, *over});
  CHECK(find_card("my-a40")->display == "A40 48GB");
  CHECK(to_gib(find_card("4090")->usable) == Approx(23.5).margin(0.001));
  install_user_cards({});
  CHECK(to_gib(find_card("4090")->usable) == Approx(23.65).margin(0.001));
  CHECK_FALSE(find_card("my-a40").has_value());
}
