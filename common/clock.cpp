// SPDX-License-Identifier: MIT
#include "common/clock.hpp"

#include <thread>

namespace gpurent {

std::chrono::system_clock::time_point SystemClock::now() const { return std::chrono::system_clock::now(); }

void SystemClock::sleep_for(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

}  // namespace gpurent
