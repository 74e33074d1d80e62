// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "providers/card.hpp"

using namespace gpurent;

TEST_CASE("Card: usual spellings find the same card", "[providers][card]")
{
  for (const char* s : {"A100-80GB", "a100 80g", "a100-80gb", "A100 80GB", "nvidia a100 80gb"}) {
    const auto c = find_card(s);
    REQUIRE(c.has_value());
    CHECK(c->id == "a100-80gb-sxm");  // the old id names the SXM board, the one clouds rent most
  }
  for (const char* s : {"RTX 4090", "4090", "rtx-4090", "GeForce RTX 4090", "rtx4090 24gb"}) {
    const auto c = find_card(s);
    REQUIRE(c.has_value());
    CHECK(c->id == "rtx-4090");
  }
  CHECK(find_card("rtx-pro-6000")->id == "rtx-pro-6000");
  CHECK(find_card("RTX PRO 6000 96G")->id == "rtx-pro-6000");
  CHECK(find_card("h100")->id == "h100-sxm");
  CHECK(find_card("h100-80gb")->id == "h100-sxm");
  CHECK(find_card("H100 PCIe")->id == "h100-pcie");
  CHECK(find_card("h100 nvl")->id == "h100-nvl");
  CHECK(find_card("A100 80GB PCIe")->id == "a100-80gb-pcie");
  CHECK(find_card("a100-40gb")->id == "a100-40gb-sxm");
  CHECK(find_card("rtx 4090 48g")->id == "rtx-4090-48gb");
  CHECK(find_card("a10")->id == "a10");
  CHECK(find_card("A10G")->id == "a10g");
  CHECK(find_card("L40S")->id == "l40s");
  CHECK(find_card("5090")->id == "rtx-5090");
}

TEST_CASE("Card: ambiguous and unknown names are clear errors", "[providers][card]")
{
  const auto a = find_card("a100");
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().code == Errc::invalid_input);
  CHECK(a.error().message.find("a100-40gb-sxm") != std::string::npos);
  CHECK(a.error().message.find("a100-80gb-pcie") != std::string::npos);
  const auto u = find_card("voodoo 5");
  REQUIRE_FALSE(u.has_value());
  CHECK(u.error().code == Errc::not_found);
  CHECK(u.error().message.find("rtx-4090") != std::string::npos);
  CHECK_FALSE(find_card("").has_value());
  CHECK_FALSE(find_card("  --  ").has_value());
}

TEST_CASE("Card: usable memory is what the driver reports, not the label", "[providers][card]")
{
  CHECK(find_card("rtx-4090")->usable.n == 2365ULL * k_gib / 100);
  CHECK(to_gib(find_card("rtx-3090")->usable) == Approx(23.58).margin(0.005));
  CHECK(to_gib(find_card("a10g")->usable) == Approx(22.07).margin(0.005));
  CHECK(to_gib(find_card("h100")->usable) == Approx(79.19).margin(0.005));
  CHECK(to_gib(find_card("a100-80gb")->usable) == Approx(79.2).margin(0.06));
  for (const auto& c : card_catalog()) {
    INFO(c.id);
    const double gib = to_gib(c.usable);
    CHECK(gib < static_cast<double>(c.label_gb));
    CHECK(gib > 0.9 * static_cast<double>(c.label_gb));
    CHECK_FALSE(c.source.empty());
    // every catalogue entry is found by its id and by its display name
    CHECK(find_card(c.id)->id == c.id);
    CHECK(find_card(c.display)->id == c.id);
  }
}

TEST_CASE("Card: fit_limit keeps a 5% margin", "[providers][card]")
{
  Card c;
  c.usable = Bytes{1000};
  CHECK(fit_limit(c).n == 950);
  Card odd;
  odd.usable = Bytes{2365ULL * k_gib / 100};
  CHECK(fit_limit(odd).n == odd.usable.n / 100 * 95 + odd.usable.n % 100 * 95 / 100);
  CHECK(fit_limit(odd).n < odd.usable.n);
}
