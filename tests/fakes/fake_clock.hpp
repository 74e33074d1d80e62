// SPDX-License-Identifier: MIT
#pragma once
// A Clock whose sleep_for only advances time: a 10-minute deadline is tested in microseconds.
#include <chrono>
#include <vector>

#include "common/clock.hpp"

namespace gpurent::test {

class FakeClock final : public Clock {
public:
  explicit FakeClock(std::chrono::system_clock::time_point start = std::chrono::system_clock::time_point{
                         std::chrono::seconds{1'790'000'000}})
      : m_now(start)
  {
  }
  [[nodiscard]] std::chrono::system_clock::time_point now() const override { return m_now; }
  void sleep_for(std::chrono::milliseconds d) override
  {
    m_sleeps.push_back(d);
    m_now += d;
  }
  void advance(std::chrono::milliseconds d) { m_now += d; }
  [[nodiscard]] const std::vector<std::chrono::milliseconds>& sleeps() const { return m_sleeps; }
  [[nodiscard]] std::chrono::milliseconds slept() const
  {
    std::chrono::milliseconds total{0};
    for (const auto d : m_sleeps) {
      total += d;
    }
    return total;
  }

private:
  std::chrono::system_clock::time_point m_now;
  std::vector<std::chrono::milliseconds> m_sleeps;
};

}  // namespace gpurent::test
