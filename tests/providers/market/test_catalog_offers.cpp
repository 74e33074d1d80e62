// SPDX-License-Identifier: MIT
// Catalogue rows to offers (providers/market/catalog_offers.cpp, name_map.cpp): names by data,
// never guessed; the quirks, each with a case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "providers/market/catalog_csv.hpp"
#include "providers/market/name_map.hpp"

using namespace gpurent;
using namespace gpurent::market;

namespace {

const std::string k_header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price\n";

CatalogFile file_of(std::string_view cloud, const std::string& rows)
{
  auto f = read_catalog_csv(cloud, k_header + rows);
  REQUIRE(f);
  return *f;
}

// A copy: callers pass the result of offers_from_catalog straight in (a temporary).
Offer only_offer(const MarketOffers& m)
{
  REQUIRE(m.offers.size() == 1);
  return m.offers[0];
}

}  // namespace

TEST_CASE("market names: the compiled-in names file reads and every card it names is a card", "[market]")
{
  const auto m = name_map_from_json(embedded_names_json());
  REQUIRE(m);
  CHECK_FALSE(m->rules.empty());
  CHECK(check_name_map_cards(*m, {"l4"}).has_value() == false);  // the check can fail
  CHECK(builtin_name_map().rules.size() == m->rules.size());
}

TEST_CASE("market names: the same name means different cards on different clouds", "[market]")
{
  const auto card_of = [](std::string_view cloud, const std::string& row) {
    const auto m = offers_from_catalog(file_of(cloud, row), "snapshot", "2026-12-05");
    return m.offers.empty() ? std::string("(unmapped)") : m.offers[0].card;
  };
  // H100: PCIe on runpod, NVL on cudo, SXM on nebius, either on lambda by instance type.
  CHECK(card_of("runpod", "1x_H100_SECURE,H100,1,16,125,H100,CA,,2.39\n") == "h100-pcie");
  CHECK(card_of("runpod", "1x_H100-SXM_SECURE,H100-SXM,1,16,125,H100-SXM,CA,2.69,2.99\n") == "h100-sxm");
  CHECK(card_of("cudo", "epyc-genoa-h100-nvl-pcie_1x2v4gb,H100,1,2,4,,au-melbourne-1,,2.4994\n") == "h100-nvl");
  CHECK(card_of("nebius", "gpu-h100-sxm_1gpu-16vcpu-200gb,H100,1,16,200,,eu-north1,1.25,2.95\n") == "h100-sxm");
  CHECK(card_of("lambda", "gpu_1x_h100_pcie,H100,1,26,200,,us-east-1,,2.49\n") == "h100-pcie");
  CHECK(card_of("lambda", "gpu_8x_h100_sxm5,H100,8,208,1800,,us-east-1,,23.92\n") == "h100-sxm");
  // A100: 80 GB on mithril, 40 GB on AWS p4d; plain A100 on lambda without a form factor: not guessed.
  CHECK(card_of("mithril", "a100-80gb.sxm.1x,A100,1,30,240,,us-central1-b,0.5,0.5\n") == "a100-80gb-sxm");
  CHECK(card_of("aws", "p4d.24xlarge,A100,8,96,1152,,us-east-1,,32.7726\n") == "a100-40gb-sxm");
  CHECK(card_of("lambda", "gpu_1x_a100,A100,1,30,200,\"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]}\",us-east-1,,1.29\n") ==
        "(unmapped)");
  // RTX6000 is the Turing card (not a card of gpurent's); RTX6000-Ada and RTX6000Ada are the Ada one.
  CHECK(card_of("lambda", "gpu_1x_rtx6000,RTX6000,1,14,46,,us-east-1,,0.5\n") == "(unmapped)");
  CHECK(card_of("runpod", "1x_RTX6000-Ada_SECURE,RTX6000-Ada,1,8,62,,CA,,0.77\n") == "rtx-6000-ada");
  CHECK(card_of("shadeform", "datacrunch_RTX6000Ada,RTX6000Ada,1,10,60,,fin-01,,0.77\n") == "rtx-6000-ada");
}

TEST_CASE("market names: a name no rule maps is returned with its rows and never guessed", "[market]")
{
  const auto m = offers_from_catalog(file_of("newcloud", "a,Z900,1,8,64,{'Name': 'Z900'},r1,,1.00\n"
                                                         "b,Z900,2,8,64,{'Name': 'Z900'},r1,,2.00\n"
                                                         "c,MI300X,1,8,64,,r1,,2.00\n"
                                                         "d,L4,1,8,64,,r1,,0.40\n"),
                                     "snapshot", "2026-12-05");
  REQUIRE(m.offers.size() == 1);
  CHECK(m.offers[0].card == "l4");
  REQUIRE(m.unmapped.size() == 2);
  CHECK(m.unmapped[0].cloud == "newcloud");
  CHECK(m.unmapped[0].accelerator_name == "Z900");
  CHECK(m.unmapped[0].gpu_info == "{'Name': 'Z900'}");
  CHECK(m.unmapped[0].rows == 2);
  CHECK(m.unmapped[0].reason == "no rule in data/market/names.json");
  CHECK(m.unmapped[1].accelerator_name == "MI300X");
  CHECK(m.unmapped[1].reason == "AMD: gpurent is CUDA-only");
}

TEST_CASE("market quirks: GCP accelerator rows price the GPUs only and say so", "[market]")
{
  const auto m = offers_from_catalog(file_of("gcp", ",H100,1,,,,us-central1,2.25,4.20076\n"
                                                    "a3-highgpu-1g,H100,1,26,234,,us-central1,,5.3833\n"),
                                     "snapshot", "2026-12-05");
  REQUIRE(m.offers.size() == 2);
  CHECK(m.offers[0].gpu_only);
  CHECK(m.offers[0].price_per_hour == MicroUsd{4'200'760});
  CHECK_FALSE(m.offers[1].gpu_only);  // a row with its instance type prices the whole VM
  const auto other = offers_from_catalog(file_of("nebius", ",L40S,1,,,,eu-north1,,1.55\n"), "snapshot", "2026-12-05");
  CHECK_FALSE(only_offer(other).gpu_only);  // the quirk is GCP's
}

TEST_CASE("market quirks: a spot price above on demand is kept and flagged", "[market]")
{
  const auto m = offers_from_catalog(file_of("gcp", ",H100,1,,,,asia-northeast1,10.01876,9.8\n"), "snapshot", "2026-12-05");
  const Offer& o = only_offer(m);
  CHECK(o.spot_price_per_hour == MicroUsd{10'018'760});
  CHECK(o.spot_above_on_demand);
  const auto equal = offers_from_catalog(file_of("mithril", "h100-80gb.sxm.8x,H100,8,168,1814,,us-central1-b,8.0,8.0\n"),
                                         "snapshot", "2026-12-05");
  CHECK_FALSE(only_offer(equal).spot_above_on_demand);  // an auction's spot = price is not above
}

TEST_CASE("market quirks: a row without an on-demand price is not offered - placeholders never become prices", "[market]")
{
  const auto m = offers_from_catalog(file_of("verda", "2B200.60V,B200,2,60,500,,FIN-03,4.893,\n"
                                                      "1B200.30V,B200,1,30,250,,FIN-03,1.99,4.89\n"),
                                     "snapshot", "2026-12-05");
  CHECK(only_offer(m).gpus == 1);
  const auto pi = offers_from_catalog(file_of("primeintellect", "runpod__1xH100_80GB__24__251,H100,1,24,251,,UNSPECIFIED,99999999,2.39\n"),
                                      "snapshot", "2026-12-05");
  // Its upstream's id is not in this file's columns (no UpstreamCloudId): not mapped, not guessed.
  CHECK(pi.offers.empty());
  const auto vast = offers_from_catalog(file_of("vast", "1x-H100_SXM-32-65536,H100,1,32,64,,\"Texas, US, NA\",0.00,1.80\n"),
                                        "snapshot", "2026-12-05");
  const Offer& v = only_offer(vast);
  CHECK(v.card == "h100-sxm");
  CHECK_FALSE(v.spot_price_per_hour.has_value());  // vast's 0.00 spot is no price
  CHECK(v.region == "Texas, US, NA");
  for (const auto& o : vast.offers) {
    CHECK(o.price_per_hour.n > 0);
  }
}

TEST_CASE("market quirks: aggregators carry their upstream - float artifacts are whole micro-dollars", "[market]")
{
  auto f = read_catalog_csv("primeintellect",
                            "InstanceType,UpstreamCloudId,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,Price,SpotPrice\n"
                            "runpod__1xA100_80GB__8__117,NVIDIA A100 80GB PCIe,8.0,117,A100,1.0,{},UNSPECIFIED,1.6567999999999998,99999999\n");
  REQUIRE(f);
  const Offer& o = only_offer(offers_from_catalog(*f, "snapshot", "2026-12-05"));
  CHECK(o.card == "a100-80gb-pcie");
  CHECK(o.upstream == "runpod");
  CHECK(o.price_per_hour == MicroUsd{1'656'800});
  CHECK_FALSE(o.spot_price_per_hour.has_value());
  const Offer& s = only_offer(offers_from_catalog(file_of("shadeform", "crusoe_L40S,L40S,1,8,147,,us-east1,,1.0\n"), "snapshot", "2026-12-05"));
  CHECK(s.upstream == "crusoe");
  const Offer& c = only_offer(offers_from_catalog(file_of("cudo", "epyc-genoa-l40s-compute_1x2v4gb,L40S,1,2,4,,se-1,,0.36979999999999996\n"),
                                                  "snapshot", "2026-12-05"));
  CHECK(c.price_per_hour == MicroUsd{369'800});
  CHECK(c.upstream.empty());
}

TEST_CASE("market offers: one offer per shape and region and the cheapest row - each says where its price comes from", "[market]")
{
  const auto m = offers_from_catalog(file_of("cudo", "l40s_1x12v,L40S,1,12,24,,se-1,,0.95\n"
                                                     "l40s_1x2v,L40S,1,2,4,,se-1,,0.8994\n"
                                                     "l40s_1x4v,L40S,1,4,8,,se-1,,0.91\n"
                                                     "l40s_1x2v,L40S,1,2,4,,us-1,,0.99\n"),
                                     "catalogue", "2026-12-04");
  REQUIRE(m.offers.size() == 2);
  CHECK(m.offers[0].region == "se-1");
  CHECK(m.offers[0].price_per_hour == MicroUsd{899'400});
  CHECK(m.offers[0].instance_type == "l40s_1x2v");
  CHECK(m.offers[1].region == "us-1");
  CHECK(m.offers[0].provider == "cudo");
  CHECK(m.offers[0].price_source == "catalogue");
  CHECK(m.offers[0].price_date == "2026-12-04");
  CHECK(m.offers[0].price_origin == "catalogue 2026-12-04");
}

TEST_CASE("market names: the names file's own rules are checked", "[market]")
{
  CHECK_FALSE(name_map_from_json("{\"rules\": [{\"name\": \"X\"}]}"));                          // no card
  CHECK_FALSE(name_map_from_json("{\"rules\": [{\"name\": \"X\", \"card\": null}]}"));          // null without why
  CHECK_FALSE(name_map_from_json("{\"rules\": [{\"name\": \"X\", \"card\": \"l4\", \"gpu\": 1}]}"));  // unknown key
  CHECK_FALSE(name_map_from_json("{\"rules\": [{\"card\": \"l4\"}]}"));                         // no name
  CHECK_FALSE(name_map_from_json("not json"));
  const auto m = name_map_from_json("{\"rules\": [{\"name\": \"X\", \"card\": \"nope\"}]}");
  REQUIRE(m);
  const auto c = check_name_map_cards(*m, {"l4"});
  REQUIRE_FALSE(c);
  CHECK(c.error().message == "market names: rules[0] (X).card: `nope` is not a card id of data/cards.json");
}
