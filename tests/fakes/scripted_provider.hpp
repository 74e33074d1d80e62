// SPDX-License-Identifier: MIT
#pragma once
// A Provider whose get() and terminate() answer scripts (the last answer repeats), counting calls.
#include <deque>
#include <string>

#include "providers/provider.hpp"

namespace gpurent::test {

class ScriptedProvider final : public Provider {
public:
  std::deque<Result<std::optional<Instance>>> script;  // get()
  std::deque<Result<void>> terminate_script{Result<void>{}};
  std::vector<Instance> listed;
  int terminate_calls = 0;
  int get_calls = 0;
  std::string_view name() const override { return "scripted"; }
  std::optional<std::string> unsupported(Feature) const override { return std::nullopt; }
  Result<std::vector<Offer>> fetch_offers() override { return std::vector<Offer>{}; }
  Result<Instance> launch(const LaunchRequest&) override { return Instance{}; }
  Result<std::optional<Instance>> get(std::string_view) override
  {
    ++get_calls;
    return next(script);
  }
  Result<std::vector<Instance>> list() override { return listed; }
  Result<void> stop(std::string_view) override { return {}; }
  Result<void> start(std::string_view) override { return {}; }
  Result<void> hibernate(std::string_view) override { return {}; }
  Result<void> terminate(std::string_view) override
  {
    ++terminate_calls;
    return next(terminate_script);
  }

private:
  template <class T>
  static T next(std::deque<T>& q)
  {
    T r = q.front();
    if (q.size() > 1) {
      q.pop_front();
    }
    return r;
  }
};

inline Result<std::optional<Instance>> state(InstanceState s, std::string raw, std::string host = "")
{
  Instance in;
  in.id = "i-1";
  in.state = s;
  in.raw_state = std::move(raw);
  in.host = std::move(host);
  return std::optional<Instance>{in};
}

inline Result<std::optional<Instance>> absent() { return std::optional<Instance>{}; }

}  // namespace gpurent::test
