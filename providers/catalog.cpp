// SPDX-License-Identifier: MIT
// Providers as data. Billing facts: the providers' public pages and the seed articles, with
// their sources (URLs) and dates in providers/<name>/README.md and docs/providers.md. The cards
// each provider lists and the built-in offers with their dated prices are data/offers.json and
// the market snapshot (providers/provider_listing.cpp joins them to these rules); prices are never
// invented: an offer is built in only where a dated public source gives its price. This file
// reads no data file: the build's generator of data/offers.json links it (provider_rules()).
#include "providers/catalog.hpp"

#include <algorithm>
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
  p.facts_source =
      "https://docs.lambda.ai/public-cloud/billing : \"ODC prices instances by hourly usage and bills in one-minute "
      "increments\" (read 2026-12-05); stop: Lambda Cloud API v1.10.0 (https://docs-api.lambda.ai/api/cloud), "
      "2026-11-30";
  p.default_region = "";
  p.spot_available = false;
  p.spot_note = "no spot in Lambda's API";
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
  p.facts_source =
      "https://docs.runpod.io/accounts-billing/billing : \"All compute and storage charges are billed per second, "
      "with no fees for data transfer\" (read 2026-12-05); stopped: https://docs.runpod.io/pods/storage, 2026-11-30";
  p.default_region = "";
  p.spot_available = true;
  p.spot_note = "interruptible pods can be stopped at any time";
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
  p.facts_source =
      "https://docs.vast.ai/guides/reference/billing : \"You are charged the base active rental cost for every second "
      "your instance is in the active/connected state\"; \"Stopping an instance does not avoid storage costs\" (read "
      "2026-12-05)";
  p.default_region = "";
  p.spot_available = true;
  p.spot_note = "interruptible = a bid; outbid instances are paused and their data stays on the host";
  return p;
}

const std::vector<ProviderInfo>& rules()
{
  static const std::vector<ProviderInfo> k_rules = [] {
    std::vector<ProviderInfo> out = {gpucloud(), cloudgpu(), lambda(), runpod(), vast()};
    for (auto& p : out) {
      p.billing_source = p.facts_source;  // their billing facts and sources are one line
    }
    return out;
  }();
  return k_rules;
}

}  // namespace

std::span<const ProviderInfo> provider_rules() noexcept { return rules(); }

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
