// SPDX-License-Identifier: MIT
#include "providers/billing.hpp"

#include <algorithm>

namespace gpurent {

std::chrono::seconds BillingPolicy::billed_seconds(std::chrono::seconds runtime) const noexcept
{
  const std::int64_t run = std::max<std::int64_t>(runtime.count(), 0);
  std::int64_t s = std::max({run, minimum.count(), charged_at_deploy.count()});
  const std::int64_t inc = std::max<std::int64_t>(increment.count(), 1);
  if (s % inc != 0) {
    s += inc - s % inc;
  }
  return std::chrono::seconds{s};
}

MicroUsd BillingPolicy::charge(MicroUsd per_hour, std::chrono::seconds runtime) const noexcept
{
  const std::int64_t secs = billed_seconds(runtime).count();
  const std::int64_t rate = std::max<std::int64_t>(per_hour.n, 0);
  // rate * secs / 3600 rounded up, split so the product cannot overflow for sane inputs
  // (callers cap hours at 1e5 and prices at $1e5/h).
  const std::int64_t whole = rate / 3600 * secs;
  const std::int64_t rest = rate % 3600 * secs;
  return MicroUsd{whole + (rest + 3599) / 3600};
}

}  // namespace gpurent
