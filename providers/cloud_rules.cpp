// SPDX-License-Identifier: MIT
// The market clouds' billing as data. Each published rule carries its source (URL, the words it
// says, the day it was read); docs/providers.md "Billing per cloud" lists the same table. Only the
// cloud's own material counts (its docs, pricing pages, API reference, its own GitHub
// organisation); where none states a rule, the rule is "unknown": billed per started hour, and
// said so in every cost line. Third-party summaries found for those clouds, and why they were not
// used, are listed in docs/providers.md.
#include "providers/cloud_rules.hpp"

#include <string>
#include <vector>

namespace gpurent {
namespace {

using std::chrono::seconds;

constexpr seconds k_hour{3600};

struct CloudFacts {
  const char* name;
  const char* display;
  seconds increment;
  seconds minimum;
  const char* billing_source;  // URL, quote and date; k_billing_unknown when none was found
  bool spot;                   // the catalogue carries spot prices for it (SpotPrice, not a placeholder)
  const char* stopped_keeps;   // nullptr: no published stopped-state rule
  const char* stopped_note;
};

// Read 2026-12-05. Spot: clouds whose catalogue rows carry a real SpotPrice (aws, gcp, mithril,
// nebius, verda); the others list none, or a placeholder.
const CloudFacts k_clouds[] = {
    {"aws", "AWS", seconds{1}, seconds{60},
     "https://aws.amazon.com/about-aws/whats-new/2017/10/announcing-amazon-ec2-per-second-billing/ : EC2 Linux "
     "instances \"will be billed on one second increments, with a minimum of 60 seconds\" (read 2026-12-05)",
     true, "the EBS volumes", "EBS volumes keep billing (per second, 60 s minimum) while the instance is stopped"},
    {"gcp", "Google Cloud", seconds{1}, seconds{60},
     "https://cloud.google.com/compute/vm-instance-pricing : \"All vCPUs, GPUs, and GB of memory are charged a "
     "minimum of 1 minute\"; \"After 1 minute, instances are charged in 1 second increments\" (read 2026-12-05)",
     true, "the persistent disks and static IP addresses",
     "persistent disks and static IP addresses keep billing while the VM is stopped (\"Stopped instances do not incur "
     "VM usage charges while they are stopped. However, resources that the VM is using, such as persistent disks and "
     "static IP addresses, will continue to be charged until they are deleted\": Google's Compute API reference, "
     "https://googleapis.dev/dotnet/Google.Apis.Compute.v1/1.55.0.2483/api/"
     "Google.Apis.Compute.v1.InstancesResource.StopRequest.html)"},
    {"nebius", "Nebius", seconds{1}, seconds{0},
     "https://docs.nebius.com/object-storage/resources/pricing : \"for GPUs on running VMs, the billing unit is 1 "
     "second\"; https://docs.nebius.com/legal/specific-terms/compute : \"The time when the Virtual Machine is stopped "
     "is not charged\" (read 2026-12-05)",
     true, "the disks",
     "disks bill while the VM is stopped (\"The usage of Disk is charged regardless whether a Virtual Machine is "
     "running\")"},
    {"hyperbolic", "Hyperbolic", k_hour, seconds{0}, "unknown", false, nullptr, ""},
    {"primeintellect", "Prime Intellect", k_hour, seconds{0}, "unknown", false, nullptr, ""},
    {"shadeform", "Shadeform", k_hour, seconds{0}, "unknown", false, nullptr, ""},
    {"cudo", "CUDO Compute", seconds{1}, seconds{0},
     "https://www.cudocompute.com/docs/billing : \"Once per hour, we recalculate your resource usage for the current "
     "month with precision to the nearest second and adjust your credit balance accordingly\" (read 2026-12-05)",
     false, nullptr, ""},
    {"seeweb", "Seeweb", k_hour, seconds{0}, "unknown", false, nullptr, ""},
    {"mithril", "Mithril", k_hour, seconds{0}, "unknown", true, nullptr, ""},
    {"simplepod", "SimplePod", k_hour, seconds{0}, "unknown", false, nullptr, ""},
    {"verda", "Verda", k_hour, seconds{0}, "unknown", true, nullptr, ""},
    {"jarvislabs", "JarvisLabs", seconds{60}, seconds{0},
     "https://github.com/jarvislabsai : JarvisLabs' own GitHub organisation profile lists \"Pay per minute billing\" "
     "(read 2026-12-05; no billing page of jarvislabs.ai was found)",
     false, "the instance's storage (its home directory)",
     "a paused instance keeps billing for its storage (\"Paused (compute billing stopped, storage billing continues, "
     "data persists)\": https://github.com/jarvislabsai/jarvislabs/blob/046c9eda1ac5f3a7a39b61df33338042983f6bdd/"
     "jarvislabs/skills/SKILL.md)"},
};

ProviderInfo from_facts(const CloudFacts& f)
{
  ProviderInfo p;
  p.name = f.name;
  p.display = f.display;
  p.billing = BillingPolicy{f.increment, f.minimum, seconds{0}};
  p.spot_billing = p.billing;
  p.billing_source = f.billing_source;
  const bool known = p.billing_source != k_billing_unknown;
  p.billing_label = !known                        ? "hourly (assumed)"
                    : f.increment == seconds{1}   ? "per-second"
                    : f.increment == seconds{60}  ? "per-minute"
                                                  : "hourly";
  p.facts_source = known ? p.billing_source : "no published billing rule found (read 2026-12-05): per hour assumed";
  if (f.stopped_keeps != nullptr) {
    p.stopped.available = true;
    p.stopped.bills_full_rate = false;
    p.stopped.fixed_per_hour = MicroUsd{0};
    p.stopped.keeps = f.stopped_keeps;
    p.stopped.loses = "the GPU is released; it may not be free when you start again";
    p.stopped.storage_note = f.stopped_note;
  } else {
    p.stopped.available = false;
    p.stopped.unavailable_reason = std::string(f.name) +
                                   ": no published rule for a stopped server that gpurent knows; assume it bills "
                                   "until it is deleted";
  }
  p.hibernated.available = false;
  p.hibernated.unavailable_reason = std::string(f.name) + ": no hibernate state that gpurent knows";
  p.destroy_loses = "the server and its local disks, as " + std::string(f.display) + " deletes them";
  p.workspace_dir = "~";
  p.max_gpus = 8;
  p.per_gpu_servers = false;  // catalogue rows are exact shapes
  p.has_api = false;          // rent it there, then `gpurent attach --provider <cloud>`
  p.spot_available = f.spot;
  p.spot_note = f.spot ? "spot prices from the market catalogue (SpotPrice); spot servers can be interrupted"
                       : "the market catalogue lists no spot price for " + std::string(f.name);
  return p;
}

const std::vector<ProviderInfo>& clouds()
{
  static const std::vector<ProviderInfo> k_rules = [] {
    std::vector<ProviderInfo> out;
    out.reserve(std::size(k_clouds));
    for (const auto& f : k_clouds) {
      out.push_back(from_facts(f));
    }
    return out;
  }();
  return k_rules;
}

}  // namespace

std::span<const ProviderInfo> market_cloud_rules() noexcept { return clouds(); }

std::string_view billing_source_link(std::string_view source) noexcept
{
  const std::size_t at = source.find("http");
  if (at == std::string_view::npos) {
    return source;
  }
  const std::size_t end = source.find_first_of(" \t;,", at);
  return source.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
}

bool billing_known(const ProviderInfo& p) noexcept { return p.billing_source != k_billing_unknown; }

}  // namespace gpurent
