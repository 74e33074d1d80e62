// SPDX-License-Identifier: MIT
#include "common/clock.hpp"

#include <ctime>
#include <thread>

namespace gpurent {

std::chrono::system_clock::time_point SystemClock::now() const { return std::chrono::system_clock::now(); }

void SystemClock::sleep_for(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

std::string utc_iso8601(std::chrono::system_clock::time_point t)
{
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace gpurent
