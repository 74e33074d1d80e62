// SPDX-License-Identifier: MIT
// `gpurent autostop NAME`'s views (cli/autostop_support.hpp): the contract's JSON and the text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/autostop_support.hpp"
#include "cli/errors.hpp"
#include "cli/lifecycle_support.hpp"

namespace gpurent {
namespace {

nlohmann::json time_or_null(std::optional<std::int64_t> t)
{
  return t ? nlohmann::json(iso_time(from_unix(*t))) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json autostop_error_json(const Error& e, std::string_view command)
{
  const auto object = nlohmann::json::parse(error_json(error_text(e, command), e.code, exit_code_for(e.code)), nullptr, false);
  return {{"error", object.is_discarded() ? nlohmann::json{{"message", e.message}} : object}};
}

nlohmann::json autostop_json(const AutostopView& v)
{
  nlohmann::json last = nullptr;
  if (v.last_sample) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : v.last_sample->gpus) {
      gpus.push_back({{"index", g.index}, {"utilization_pct", g.utilization_pct}, {"memory_used_mib", g.memory_used_mib}});
    }
    last = {{"at", iso_time(from_unix(v.last_sample->at))},
            {"gpus", gpus},
            {"sessions", v.last_sample->sessions ? nlohmann::json(*v.last_sample->sessions) : nlohmann::json(nullptr)},
            {"jobs", v.last_sample->jobs},
            {"processes", v.last_sample->processes ? nlohmann::json(*v.last_sample->processes) : nlohmann::json(nullptr)},
            {"readable", v.last_sample->readable},
            {"why_unreadable", v.last_sample->why.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.last_sample->why)},
            {"idle", v.last_sample->idle}};
  }
  nlohmann::json action = nullptr;
  if (v.last_action) {
    action = {{"at", iso_time(from_unix(v.last_action->at))}, {"stage", v.last_action->stage}, {"action", v.last_action->what},
              {"ok", v.last_action->ok}, {"detail", v.last_action->detail}};
  }
  nlohmann::json ended = nullptr;
  if (v.exit && !v.armed) {
    ended = {{"at", iso_time(from_unix(v.exit->at))}, {"why", v.exit->what}};
  }
  return {{"armed", v.armed},
          {"idle_limit_s", v.configured ? nlohmann::json(v.settings.idle_s) : nlohmann::json(nullptr)},
          {"then", v.configured ? nlohmann::json(std::string(to_string(v.settings.then))) : nlohmann::json(nullptr)},
          {"release_after_s", v.configured && v.settings.release_after_s > 0 ? nlohmann::json(v.settings.release_after_s) : nlohmann::json(nullptr)},
          {"gpu_util_pct", v.configured ? nlohmann::json(v.settings.gpu_util_pct) : nlohmann::json(nullptr)},
          {"idle_for_s", v.idle_for_s},
          {"next_action", v.next_action},
          {"next_action_at", time_or_null(v.next_action_at)},
          {"can_stop_billing", v.can_stop_billing},
          {"paused", v.paused},
          {"pause_until", time_or_null(v.pause_until)},
          {"last_sample", last},
          {"last_action", action},
          {"ended", ended}};
}

void print_autostop_text(std::ostream& o, const std::string& name, const AutostopView& v)
{
  if (!v.configured) {
    o << name << ": autostop is not armed (arm it with `gpurent autostop " << name << " --idle 30m`)\n";
    return;
  }
  const std::string first = v.can_stop_billing ? std::string(to_string(v.settings.then)) : std::string("mark idle (cannot stop billing)");
  o << name << ": autostop " << (v.paused ? "paused" : v.armed ? "armed" : "not running") << ": after "
    << autostop_duration_text(v.settings.idle_s) << " idle, " << first;
  if (v.settings.release_after_s > 0) {
    o << "; destroy " << autostop_duration_text(v.settings.release_after_s) << " later";
  }
  o << " (GPUs below " << v.settings.gpu_util_pct << "%, no job, no session)\n";
  if (v.paused) {
    o << "  paused until " << iso_time(from_unix(*v.pause_until)) << "\n";
  }
  if (v.armed) {
    o << "  idle for " << autostop_duration_text(v.idle_for_s) << "; next: " << v.next_action;
    o << (v.next_action_at ? " at " + iso_time(from_unix(*v.next_action_at)) : std::string(" (once idle)")) << "\n";
  }
  if (v.last_sample) {
    const auto& l = *v.last_sample;
    o << "  last sample " << iso_time(from_unix(l.at)) << ": ";
    if (!l.readable) {
      o << "unreadable (" << l.why << ": counts as busy)";
    } else {
      for (std::size_t i = 0; i < l.gpus.size(); ++i) {
        o << (i ? ", " : "") << "GPU" << l.gpus[i].index << " " << l.gpus[i].utilization_pct << "% " << l.gpus[i].memory_used_mib << " MiB";
      }
      o << "; " << (l.sessions ? std::to_string(*l.sessions) : std::string("?")) << " session(s), " << l.jobs << " job(s)"
        << (l.idle ? " -> idle" : " -> busy");
    }
    o << "\n";
  }
  if (v.last_action) {
    o << "  " << iso_time(from_unix(v.last_action->at)) << ": " << v.last_action->what << " "
      << (v.last_action->ok ? "done" : "failed") << " (" << v.last_action->detail << ")\n";
  }
  if (v.exit && !v.armed) {
    o << "  the watchdog ended " << iso_time(from_unix(v.exit->at)) << " (" << v.exit->what << ")\n";
  }
}

}  // namespace gpurent
