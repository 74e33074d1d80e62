// SPDX-License-Identifier: MIT
// The catalogue reader (providers/market/catalog_csv.cpp): columns by name, GPU rows only,
// whole-file faults as errors naming the cloud and line, bad values as warnings, placeholders absent.
#include <catch2/catch.hpp>

#include <string>

#include "providers/market/catalog_csv.hpp"

using namespace gpurent;
using namespace gpurent::market;

namespace {

const std::string k_v7_header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,AvailabilityZone\n";

}  // namespace

TEST_CASE("catalogue reader: columns are found by name and whatever their order", "[market]")
{
  // runpod's order and lambda's order of the same row.
  const auto a = read_catalog_csv("runpod", k_v7_header + "1x_H100-SXM_SECURE,H100-SXM,1.0,16.0,125.0,H100-SXM,CA,2.69,2.99,CA-MTL-1\n");
  const auto b = read_catalog_csv(
      "lambda", "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
                "gpu_1x_h100_pcie,H100,1.0,26.0,200.0,2.49,us-east-1,\"{'Gpus': [{'Name': 'H100', 'Count': 1.0}]}\",\n");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->rows.size() == 1);
  REQUIRE(b->rows.size() == 1);
  const auto& r = a->rows[0];
  CHECK(r.instance_type == "1x_H100-SXM_SECURE");
  CHECK(r.accelerator_name == "H100-SXM");
  CHECK(r.accelerator_count == 1);
  CHECK(r.region == "CA");
  CHECK(r.zone == "CA-MTL-1");
  CHECK(r.price == MicroUsd{2'990'000});
  CHECK(r.spot_price == MicroUsd{2'690'000});
  CHECK(r.vcpus == 16.0);
  CHECK(r.line == 2);
  const auto& l = b->rows[0];
  CHECK(l.price == MicroUsd{2'490'000});
  CHECK_FALSE(l.spot_price.has_value());
  CHECK(l.gpu_info == "{'Gpus': [{'Name': 'H100', 'Count': 1.0}]}");  // the quoted comma stays inside the field
  CHECK(l.zone.empty());
  CHECK(a->warnings.empty());
}

TEST_CASE("catalogue reader: CPU rows are left out and GPU rows kept with their lines", "[market]")
{
  const auto f = read_catalog_csv("aws", k_v7_header + "m5.large,,,2,8,,us-east-1,0.03,0.096,use1-az1\n"
                                                       "g4dn.xlarge,T4,1.0,4,16,,us-east-1,0.2,0.526,use1-az1\n");
  REQUIRE(f);
  REQUIRE(f->rows.size() == 1);
  CHECK(f->rows[0].accelerator_name == "T4");
  CHECK(f->rows[0].line == 3);
  CHECK(f->cloud == "aws");
}

TEST_CASE("catalogue reader: a record with a line break inside quotes is one row", "[market]")
{
  const auto f = read_catalog_csv("vast", k_v7_header + "1x-A,RTX4090,1,32,64,\"{'a':\n 1}\",\"Texas, US, NA\",0.00,0.32,\n"
                                                        "1x-B,RTX4090,1,32,64,,\"Norway, NO, EU\",0.00,0.35,\n");
  REQUIRE(f);
  REQUIRE(f->rows.size() == 2);
  CHECK(f->rows[0].region == "Texas, US, NA");
  CHECK(f->rows[1].line == 4);
}

TEST_CASE("catalogue reader: CR LF and lone CR end lines as LF does", "[market]")
{
  const std::string row_a = "1x-A,RTX4090,1,32,64,,CA,0.00,0.32,\n";
  const std::string row_b = "1x-B,RTX4090,1,32,64,,NO,0.00,0.35,\n";
  std::string header = k_v7_header;
  for (const std::string eol : {"\r\n", "\r"}) {
    INFO("line end " << (eol == "\r" ? "CR" : "CR LF"));
    auto with = [&](std::string s) {
      s.replace(s.size() - 1, 1, eol);
      return s;
    };
    // fuzz/crashes/fuzz_catalog_csv: a lone CR after the header put the first row on line 1.
    const auto f = read_catalog_csv("vast", with(header) + with(row_a) + with(row_b));
    REQUIRE(f);
    REQUIRE(f->rows.size() == 2);
    CHECK(f->rows[0].line == 2);
    CHECK(f->rows[1].line == 3);
    CHECK(f->rows[1].region == "NO");
    const auto cut = read_catalog_csv("vast", with(header) + with(row_a) + "1x-B,RTX4090,1,\"32");
    REQUIRE_FALSE(cut);
    CHECK_THAT(cut.error().message, Catch::StartsWith("catalogue vast, line 3: truncated"));
  }
}

TEST_CASE("catalogue reader: placeholder prices are absent and never 0", "[market]")
{
  const auto f = read_catalog_csv(
      "quirks", k_v7_header +
                    "pi,A100,1,8,117,,UNSPECIFIED,99999999,1.6567999999999998,\n"  // primeintellect's no-spot placeholder
                    "v,H100,1,32,64,,\"Texas, US, NA\",0.00,1.80,\n"               // vast's spot of 0.00
                    "tpu,tpu-v6e-8,8,,,,us-east5,700.0,700.0,\n"                  // GCP's TPU placeholder
                    "e,H200,8,,,,FIN-03,4.893,,\n");                              // verda: spot only
  REQUIRE(f);
  REQUIRE(f->rows.size() == 4);
  CHECK_FALSE(f->rows[0].spot_price.has_value());
  CHECK(f->rows[0].price == MicroUsd{1'656'800});  // the float artifact rounded to whole micro-dollars
  CHECK_FALSE(f->rows[1].spot_price.has_value());
  CHECK(f->rows[1].price == MicroUsd{1'800'000});
  CHECK_FALSE(f->rows[2].price.has_value());
  CHECK_FALSE(f->rows[2].spot_price.has_value());
  CHECK_FALSE(f->rows[3].price.has_value());
  CHECK(f->rows[3].spot_price == MicroUsd{4'893'000});
  CHECK(f->warnings.empty());  // known placeholders are not faults
}

TEST_CASE("catalogue reader: a bad value is a warning naming cloud and line and column - that price is absent", "[market]")
{
  const auto f = read_catalog_csv("cudo", k_v7_header + "a,L40S,1,2,4,,se-1,,abc,\n"
                                                        "b,L40S,1,2,4,,se-1,-1,0.8994,\n"
                                                        "c,L40S,1,two,4,,se-1,,0.8994,\n"
                                                        "d,L40S,1.5,2,4,,se-1,,0.8994,\n"
                                                        "e,L40S,1,2,4,,se-1,,0,\n"
                                                        "f,L40S,1,2,4,,se-1,,1e2,\n");
  REQUIRE(f);
  REQUIRE(f->rows.size() == 6);
  CHECK_FALSE(f->rows[0].price.has_value());
  CHECK(f->rows[1].price == MicroUsd{899'400});
  CHECK_FALSE(f->rows[1].spot_price.has_value());
  CHECK_FALSE(f->rows[2].vcpus.has_value());
  CHECK(f->rows[2].price == MicroUsd{899'400});
  CHECK(f->rows[3].accelerator_count == 0);
  CHECK_FALSE(f->rows[3].price.has_value());  // GPUs that cannot be counted: not offered
  CHECK_FALSE(f->rows[4].price.has_value());  // a price of 0 is never a price
  CHECK_FALSE(f->rows[5].price.has_value());
  REQUIRE(f->warnings.size() == 6);
  CHECK(f->warnings[0].text == "catalogue cudo, line 2, Price: `abc` is not a price (USD per hour); the row has no on-demand price");
  CHECK(f->warnings[0].line == 2);
  CHECK(f->warnings[1].text.find("line 3, SpotPrice") != std::string::npos);
  CHECK(f->warnings[2].text.find("line 4, vCPUs: `two` is not a number") != std::string::npos);
  CHECK(f->warnings[3].text.find("line 5, AcceleratorCount: must be a whole number") != std::string::npos);
  CHECK(f->warnings[4].text.find("line 6, Price: a price of 0") != std::string::npos);
  CHECK(f->warnings[5].text.find("line 7, Price: `1e2`") != std::string::npos);
}

TEST_CASE("catalogue reader: whole-file faults are errors naming the cloud and line", "[market]")
{
  const auto error_of = [](std::string_view text) {
    const auto f = read_catalog_csv("runpod", text);
    REQUIRE_FALSE(f);
    return f.error().message;
  };
  CHECK(error_of("") == "catalogue runpod, line 1: empty: not a catalogue");
  CHECK(error_of("  <!DOCTYPE html><html><body>429 Too Many Requests</body></html>") ==
        "catalogue runpod, line 1: an HTML or XML page, not CSV");
  // A future layout (v9) without the columns this reader needs.
  CHECK(error_of("instance,gpu,count,usd\nx,H100,1,2.99\n") ==
        "catalogue runpod, line 1: unknown column layout (not catalogue v7/v8 vms.csv): no InstanceType, "
        "AcceleratorName, AcceleratorCount, Region, Price column");
  // simplepod's file has no SpotPrice column: a catalogue all the same.
  const auto no_spot = read_catalog_csv("simplepod", "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo\n"
                                                     "gpu_1x_rtx4090_16,RTX4090,1,16,64,0.320,Europe-PL,{}\n");
  REQUIRE(no_spot);
  CHECK(no_spot->rows[0].price == MicroUsd{320'000});
  CHECK_FALSE(no_spot->rows[0].spot_price.has_value());
  CHECK(error_of("InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice,Price\n") ==
        "catalogue runpod, line 1: the column `Price` is given twice");
  // Cut off in the middle of the last record: too few fields, or a quote never closed.
  CHECK(error_of(k_v7_header + "1x_A,L4,1.0,8,80,L4,CA,0.3,0.44,CA-MTL-1\n1x_B,L4,1.0,8") ==
        "catalogue runpod, line 3: truncated last record (4 of 10 fields)");
  CHECK(error_of(k_v7_header + "1x_A,L4,1.0,8,80,\"{'Gpus': [") ==
        "catalogue runpod, line 2: truncated last record (a quoted field is not closed)");
  CHECK(error_of(k_v7_header + "m5.large,,,2,8,,us-east-1,0.03,0.096,use1-az1\n") ==
        "catalogue runpod, line 2: no GPU rows (no row with an AcceleratorName)");
  CHECK(error_of(std::string("Instance\0Type", 13)).find("binary data") != std::string::npos);
  CHECK(error_of(k_v7_header + "a,\"L4\"x,1,8,80,,CA,,0.44,\n").find("catalogue runpod, line 2: malformed CSV") == 0);
}

TEST_CASE("catalogue reader: a short row in the middle is skipped with a warning - a last record without a line break is fine",
          "[market]")
{
  const auto f = read_catalog_csv("runpod", k_v7_header + "1x_A,L4,1.0,8\n1x_B,L4,1.0,8,80,L4,CA,0.3,0.44,CA-MTL-1");
  REQUIRE(f);
  REQUIRE(f->rows.size() == 1);
  CHECK(f->rows[0].instance_type == "1x_B");
  CHECK(f->rows[0].line == 3);
  REQUIRE(f->warnings.size() == 1);
  CHECK(f->warnings[0].text == "catalogue runpod, line 2, (row): 4 fields where the header has 10; the row is skipped");
}

TEST_CASE("catalogue reader: prices become whole micro-dollars without floating point", "[market]")
{
  CHECK(parse_catalog_usd("0.36979999999999996") == MicroUsd{369'800});
  CHECK(parse_catalog_usd("23.60") == MicroUsd{23'600'000});
  CHECK(parse_catalog_usd("4.20076") == MicroUsd{4'200'760});
  CHECK(parse_catalog_usd("1.0000004") == MicroUsd{1'000'000});
  CHECK(parse_catalog_usd("1.0000005") == MicroUsd{1'000'001});
  CHECK(parse_catalog_usd("12") == MicroUsd{12'000'000});
  CHECK_FALSE(parse_catalog_usd("99999999").has_value());
  CHECK_FALSE(parse_catalog_usd("1e-05").has_value());
  CHECK_FALSE(parse_catalog_usd("-1").has_value());
  CHECK_FALSE(parse_catalog_usd(".5").has_value());
  CHECK_FALSE(parse_catalog_usd("5.").has_value());
  CHECK_FALSE(parse_catalog_usd("nan").has_value());
}
