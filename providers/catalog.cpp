// SPDX-License-Identifier: MIT
// Providers as data. Billing facts: the providers' public pages and the seed articles, with
// their sources (URLs) and dates in providers/<name>/README.md and docs/providers.md. Prices
// are never invented: an offer is built in only where a dated public source gives its price.
#include "providers/catalog.hpp"

#include <string>
#include <vector>

#include "common/text.hpp"

namespace gpurent {
namespace {

using std::chrono::seconds;

constexpr seconds k_hour{3600};
constexpr seconds k_minute{60};
constexpr seconds k_second{1};

MicroUsd usd_cents(std::int64_t cents) { return MicroUsd{cents * 10'000}; }

ProviderInfo gpucloud()
{
  ProviderInfo p;
  p.name = "gpucloud";
  p.display = "GPU Cloud";
  p.billing = BillingPolicy{k_hour, k_hour, k_hour};
  p.spot_billing = p.billing;
  p.stopped.available = true;
  p.stopped.bills_full_rate = true;
  p.stopped.keeps = "the server and its disk";
  p.stopped.loses = "nothing is saved: a stopped server still bills the full hourly rate";
  p.hibernated.available = true;
  p.hibernated.bills_full_rate = false;
  p.hibernated.fixed_per_hour = usd_cents(2);
  p.hibernated.keeps = "the disk";
  p.hibernated.loses = "the running GPU (processes stop)";
  p.hibernated.allowed_on_spot = false;
  p.hibernated.spot_reason = "a Spot machine cannot be hibernated on gpucloud; delete it when you are done";
  p.destroy_loses = "the server and its disk are deleted";
  p.workspace_dir = "~";
  p.max_gpus = 8;
  p.min_card_gb = 48;
  p.has_api = false;
  p.billing_label = "hourly";
  p.facts_source = "seed 000_73699bc0f32144d9 (GPU Cloud's OOM guide), read 2026-11-30";
  p.default_region = "canada-montreal";
  p.spot_available = true;
  p.spot_note = "Spot machines exist (cannot be hibernated); the seed gives no spot price";
  p.listed_cards = {"rtx-pro-6000"};
  p.price_source = "";
  return p;
}

ProviderInfo cloudgpu()
{
  ProviderInfo p;
  p.name = "cloudgpu";
  p.display = "CloudGPU";
  p.billing = BillingPolicy{k_minute, k_minute, seconds{0}};
  p.spot_billing = p.billing;
  p.stopped.available = false;
  p.stopped.unavailable_reason =
      "cloudgpu has no stop state: GPU time is billed per minute until the instance is destroyed";
  p.hibernated.available = false;
  p.hibernated.unavailable_reason =
      "cloudgpu has no hibernate state: billing stops only when the instance is destroyed, and "
      "destroying deletes local instance storage (back up first)";
  p.destroy_loses = "data on local instance storage is permanently deleted";
  p.workspace_dir = "~";
  p.max_gpus = 8;
  p.min_card_gb = 0;
  p.has_api = false;
  p.billing_label = "per-minute";
  p.facts_source = "seed 004_0540af161689a0c3 (CloudGPU's OOM guide, updated 2026-10-27)";
  p.default_region = "";
  p.spot_available = false;
  p.spot_note = "no spot or interruptible servers are described (seed 004)";
  p.listed_cards = {"rtx-4090", "rtx-5090", "rtx-4090-48gb", "a100-80gb-sxm", "rtx-pro-6000"};
  p.price_source = "";
  return p;
}

ProviderInfo lambda()
{
  ProviderInfo p;
  p.name = "lambda";
  p.display = "Lambda Cloud";
  p.billing = BillingPolicy{k_minute, k_minute, seconds{0}};
  p.spot_billing = p.billing;
  p.stopped.available = false;
  p.stopped.unavailable_reason =
      "lambda has no stop operation (its API's instance actions have none); terminate instead";
  p.hibernated.available = false;
  p.hibernated.unavailable_reason = "lambda has no hibernate state; terminate instead";
  p.destroy_loses = "the instance's local disk; persistent filesystems survive and keep billing per GiB-month";
  p.workspace_dir = "/home/ubuntu";
  p.max_gpus = 8;
  p.has_api = true;
  p.billing_label = "per-minute";
  p.facts_source = "https://docs.lambda.ai/public-cloud/billing and Lambda Cloud API v1.10.0 (https://docs-api.lambda.ai/api/cloud), 2026-11-30";
  p.default_region = "";
  p.spot_available = false;
  p.spot_note = "no spot in Lambda's API";
  p.listed_cards = {"a10", "a100-40gb-sxm", "h100-pcie", "h100-sxm"};
  p.price_source = "Lambda's list prices as transcribed by techbytes.app (GPU pricing matrix)";
  return p;
}

ProviderInfo runpod()
{
  ProviderInfo p;
  p.name = "runpod";
  p.display = "RunPod";
  p.billing = BillingPolicy{k_second, seconds{0}, seconds{0}};
  p.spot_billing = p.billing;
  p.stopped.available = true;
  p.stopped.bills_full_rate = false;
  p.stopped.fixed_per_hour = MicroUsd{0};
  p.stopped.keeps = "the volume disk";
  p.stopped.loses = "the container disk is erased; the GPU is released and may be taken when you restart";
  p.stopped.storage_note = "volume disk $0.20/GB-month while stopped ($0.10 while running)";
  p.hibernated.available = false;
  p.hibernated.unavailable_reason = "runpod has no hibernate state; stop keeps the volume disk at $0.20/GB-month";
  p.destroy_loses = "the volume disk is deleted when the pod is terminated (network volumes survive)";
  p.workspace_dir = "/workspace";
  p.max_gpus = 8;
  p.has_api = true;
  p.per_gpu_servers = true;
  p.billing_label = "per-second";
  p.facts_source = "https://docs.runpod.io/pods/pricing and /pods/storage, 2026-11-30";
  p.default_region = "";
  p.spot_available = true;
  p.spot_note = "interruptible pods can be stopped at any time";
  p.listed_cards = {"rtx-3090", "rtx-4090", "l4",        "rtx-5090",  "l40s",     "rtx-pro-6000", "a100-80gb-pcie",
                   "a100-80gb-sxm", "h100-pcie", "h100-sxm", "h100-nvl", "h200", "b200"};
  p.price_source = "deploybase.ai 'RunPod GPU Pricing 2026' (per GPU, times the GPU count)";
  return p;
}

ProviderInfo vast()
{
  ProviderInfo p;
  p.name = "vast";
  p.display = "Vast.ai";
  p.billing = BillingPolicy{k_second, seconds{0}, seconds{0}};
  p.spot_billing = p.billing;
  p.stopped.available = true;
  p.stopped.bills_full_rate = false;
  p.stopped.fixed_per_hour = MicroUsd{0};
  p.stopped.keeps = "the instance's disk (on the host)";
  p.stopped.loses = "the GPU is released; restarting depends on the host having it free";
  p.stopped.storage_note = "storage bills for every second the instance exists, typically more when stopped";
  p.hibernated.available = false;
  p.hibernated.unavailable_reason = "vast has no hibernate state; stop keeps the disk (storage still bills)";
  p.destroy_loses = "destroy is irreversible and deletes the instance's data";
  p.workspace_dir = "/workspace";
  p.max_gpus = 8;
  p.has_api = true;
  p.billing_label = "per-second";
  p.facts_source = "https://vast.ai/docs/billing/billing and /docs/renting/instance-details, 2026-11-30";
  p.default_region = "";
  p.spot_available = true;
  p.spot_note = "interruptible = a bid; outbid instances are paused and their data stays on the host";
  p.listed_cards = {};
  p.price_source = "";  // a marketplace: each host sets its price; use `offers --refresh`
  return p;
}

const std::vector<ProviderInfo>& providers()
{
  static const std::vector<ProviderInfo> k_providers = {gpucloud(), cloudgpu(), lambda(), runpod(), vast()};
  return k_providers;
}

// RunPod bills per GPU: a pod of N GPUs (1 to 8, the pod's gpuCount) costs N times the per-GPU price.
void add_per_gpu(std::vector<Offer>& out, const char* provider, const char* card, std::int64_t cents,
                 std::int64_t spot_cents, const char* origin)
{
  for (std::uint32_t n = 1; n <= 8; ++n) {
    Offer o;
    o.provider = provider;
    o.card = card;
    o.gpus = n;
    o.price_per_hour = usd_cents(cents * n);
    if (spot_cents > 0) {
      o.spot_price_per_hour = usd_cents(spot_cents * n);
    }
    o.price_origin = origin;
    out.push_back(o);
  }
}

std::vector<Offer> make_offers()
{
  std::vector<Offer> out;
  // Lambda, 1x instances, listed prices verified 2026-05-07 (see lambda's price_source).
  const char* lambda_origin = "built-in 2026-05-07";
  out.push_back({"lambda", "a10", 1, usd_cents(86), std::nullopt, "", lambda_origin});
  // techbytes gives "$1.48/hr for A100 40GB" (Lambda's gpu_1x_a100_sxm4) and "1x H100 PCIe at $2.86/hr".
  out.push_back({"lambda", "a100-40gb-sxm", 1, usd_cents(148), std::nullopt, "", lambda_origin});
  out.push_back({"lambda", "h100-pcie", 1, usd_cents(286), std::nullopt, "", lambda_origin});
  // RunPod, per GPU (on-demand, spot), data as of 2026-03-10.
  const char* runpod_origin = "built-in 2026-03-10";
  add_per_gpu(out, "runpod", "rtx-3090", 39, 22, runpod_origin);
  add_per_gpu(out, "runpod", "rtx-4090", 60, 34, runpod_origin);
  add_per_gpu(out, "runpod", "l4", 78, 44, runpod_origin);
  add_per_gpu(out, "runpod", "rtx-5090", 122, 69, runpod_origin);
  add_per_gpu(out, "runpod", "l40s", 140, 79, runpod_origin);
  add_per_gpu(out, "runpod", "rtx-pro-6000", 157, 89, runpod_origin);
  add_per_gpu(out, "runpod", "a100-80gb-pcie", 210, 119, runpod_origin);  // "A100 PCIe 80GB $1.19 $2.10"
  add_per_gpu(out, "runpod", "a100-80gb-sxm", 245, 139, runpod_origin);   // "A100 SXM"
  add_per_gpu(out, "runpod", "h100-pcie", 351, 199, runpod_origin);       // "H100 PCIe 80GB $1.99 $3.51"
  add_per_gpu(out, "runpod", "h100-sxm", 476, 269, runpod_origin);        // "H100 SXM"
  add_per_gpu(out, "runpod", "h200", 635, 359, runpod_origin);
  add_per_gpu(out, "runpod", "b200", 1057, 598, runpod_origin);
  return out;
}

}  // namespace

std::span<const ProviderInfo> provider_catalog() noexcept { return providers(); }

Result<ProviderInfo> find_provider(std::string_view name)
{
  if (!printable_ascii(name)) {
    return fail(Errc::not_found, "provider name holds a control or non-ASCII byte; give one of the known providers as plain text");
  }
  const std::string key = normalize_key(name);
  for (const auto& p : providers()) {
    if (normalize_key(p.name) == key || normalize_key(p.display) == key) {
      return p;
    }
  }
  std::string known;
  for (const auto& p : providers()) {
    known += known.empty() ? "" : ", ";
    known += p.name;
  }
  return fail(Errc::not_found, "provider `" + std::string(name) + "`: unknown; known providers: " + known);
}

std::span<const Offer> builtin_offers() noexcept
{
  static const std::vector<Offer> k_offers = make_offers();
  return k_offers;
}

std::string increment_label(std::chrono::seconds increment)
{
  const auto s = increment.count();
  if (s > 0 && s % 3600 == 0) {
    return std::to_string(s / 3600) + " h";
  }
  if (s > 0 && s % 60 == 0) {
    return std::to_string(s / 60) + " min";
  }
  return std::to_string(s) + " s";
}

}  // namespace gpurent
