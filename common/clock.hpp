// SPDX-License-Identifier: MIT
#pragma once
// Clock port: every wait and deadline goes through it, so tests use a fake clock.
#include <chrono>
#include <string>

namespace gpurent {

class Clock {
public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual std::chrono::system_clock::time_point now() const = 0;
  virtual void sleep_for(std::chrono::milliseconds d) = 0;
};

class SystemClock final : public Clock {
public:
  [[nodiscard]] std::chrono::system_clock::time_point now() const override;
  void sleep_for(std::chrono::milliseconds d) override;
};

// "2026-11-30T18:49:24Z": UTC, whole seconds, as stored in the state and printed.
[[nodiscard]] std::string utc_iso8601(std::chrono::system_clock::time_point t);

}  // namespace gpurent
