// SPDX-License-Identifier: MIT
#pragma once
// Waits for something another process does by itself (a remote agent ending as its connection
// goes): polls `done` every 25 ms for up to `limit`, and answers whether it came true. Not a timed
// assertion: the limit only bounds a failing test's wait.
#include <chrono>
#include <thread>

namespace gpurent::testing {

template <class Done>
bool eventually(Done done, std::chrono::milliseconds limit = std::chrono::seconds(10))
{
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return true;
}

}  // namespace gpurent::testing
