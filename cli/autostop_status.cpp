// SPDX-License-Identifier: MIT
// What `gpurent status` learns from the autostop watchdog (cli/autostop_support.hpp): its state per
// server, reading it on --refresh, a stop it asked for (no "exited" trouble) and when it happened.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/autostop_support.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/services.hpp"
#include "common/terminal_text.hpp"
#include "sync/autostop_agent.hpp"

namespace gpurent {

nlohmann::json autostop_status_json(StateStore& store, const ServerRecord& r, TimePoint now, std::vector<std::string>& warnings)
{
  auto rec = store.autostop(r.id);
  if (!rec || !*rec) {
    return nullptr;
  }
  const auto settings = nlohmann::json::parse((*rec)->settings_json, nullptr, false);
  const auto last = nlohmann::json::parse((*rec)->last_json.empty() ? "null" : (*rec)->last_json, nullptr, false);
  nlohmann::json out = {{"active", (*rec)->active},
                        {"armed_at", iso_time((*rec)->armed_at)},
                        {"read_at", (*rec)->read_at ? nlohmann::json(iso_time(*(*rec)->read_at)) : nlohmann::json(nullptr)},
                        {"settings", settings.is_discarded() ? nlohmann::json(nullptr) : settings},
                        {"last", last.is_discarded() ? nlohmann::json(nullptr) : last},
                        {"release", nullptr}};
  if (const auto in = autostop_release_input(store, r, now); in && in->stopped && in->release_after_s > 0) {
    const auto d = autostop_release_decision(*in);
    out["release"] = autostop_release_json(d);
    if (d.kind == AutostopReleaseKind::refused) {
      warnings.push_back("autostop will not release it: " + d.why);
    } else if (d.kind == AutostopReleaseKind::wait || d.kind == AutostopReleaseKind::release) {
      warnings.push_back("stopped by autostop: released (destroyed) at the first `gpurent status --refresh` or `gpurent "
                         "autostop " + r.name + "` after " + iso_time(from_unix(*d.at)));
    }
  }
  if (last.is_object() && last.contains("last_action") && last["last_action"].is_object()) {
    const auto& a = last["last_action"];
    if (a.value("action", "") == "mark-idle" && a.value("ok", false) && r.status == ServerStatus::running) {
      warnings.push_back("autostop found it idle and marked it at " + a.value("at", std::string("?")) +
                         "; it cannot stop billing here: stop or release it yourself");
    }
  }
  return out;
}

namespace {

struct StoredAutostop {
  AutostopRecord record;
  nlohmann::json settings;  // an object (empty when unreadable)
  nlohmann::json last;      // an object (empty when never read)
};

std::optional<StoredAutostop> stored_autostop(StateStore& store, const ServerRecord& r)
{
  auto rec = store.autostop(r.id);
  if (!rec || !*rec) {
    return std::nullopt;
  }
  StoredAutostop out{**rec, nlohmann::json::parse((*rec)->settings_json, nullptr, false),
                     nlohmann::json::parse((*rec)->last_json.empty() ? "{}" : (*rec)->last_json, nullptr, false)};
  if (!out.settings.is_object()) {
    out.settings = nlohmann::json::object();
  }
  if (!out.last.is_object()) {
    out.last = nlohmann::json::object();
  }
  return out;
}

std::int64_t int_of(const nlohmann::json& j, const char* key, std::int64_t fallback)
{
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<std::int64_t>() : fallback;
}

std::string text_of(const nlohmann::json& j, const char* key)
{
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

std::optional<TimePoint> autostop_deadline(StateStore& store, const ServerRecord& r)
{
  if (r.status != ServerStatus::running || r.attached) {
    return std::nullopt;
  }
  const auto a = stored_autostop(store, r);
  if (!a || !a->record.active || !a->settings.value("can_stop_billing", false)) {
    return std::nullopt;
  }
  if (a->last.contains("paused") && a->last["paused"].is_boolean() && a->last["paused"].get<bool>()) {
    const auto until = parse_time(text_of(a->last, "pause_until"));
    if (until) {
      return *until + std::chrono::seconds(int_of(a->settings, "idle_limit_s", 0));
    }
  }
  if (const auto at = parse_time(text_of(a->last, "next_action_at"))) {
    return *at;
  }
  const TimePoint from = a->record.read_at.value_or(a->record.armed_at);
  return from + std::chrono::seconds(int_of(a->settings, "idle_limit_s", 0));
}

std::string autostop_status_line(StateStore& store, const ServerRecord& r)
{
  const auto a = stored_autostop(store, r);
  if (!a) {
    return {};
  }
  const std::int64_t limit = int_of(a->settings, "idle_limit_s", 0);
  const std::string then = text_of(a->settings, "then");
  const bool can_stop = a->settings.value("can_stop_billing", false);
  if (!a->record.active) {
    return "not running (armed " + iso_time(a->record.armed_at) + "; the watchdog ended or was cancelled)";
  }
  std::string line = std::string(a->last.value("paused", false) ? "paused" : "armed") + ": " +
                     (can_stop ? then : std::string("mark idle (cannot stop billing)")) + " after " +
                     autostop_duration_text(limit) + " idle";
  if (const auto release = int_of(a->settings, "release_after_s", 0); release > 0) {
    line += ", destroy " + autostop_duration_text(release) + " later";
  }
  const std::string next = text_of(a->last, "next_action");
  const std::string at = text_of(a->last, "next_action_at");
  if (!next.empty() && next != "none") {
    line += "; next: " + next + (at.empty() ? std::string(" once idle") : " at " + at);
  } else if (next.empty() && r.status == ServerStatus::running) {
    line += "; next: " + std::string(can_stop ? then : "mark-idle") + " once idle";
  }
  if (a->record.read_at) {
    line += " (read " + iso_time(*a->record.read_at) + ")";
  }
  return line;
}

void refresh_autostops(Services& s, StateStore& store, std::vector<ServerRecord>& servers)
{
  for (auto& r : servers) {
    if (is_closed(r.status) || r.status != ServerStatus::running) {
      continue;
    }
    auto rec = store.autostop(r.id);
    if (!rec || !*rec || !(*rec)->active) {
      continue;
    }
    auto read = [&]() -> Result<void> {
      TRY_ASSIGN(const JobServer server, open_job_server(s, r.name, SshFlags{}));
      TRY_ASSIGN(auto session, connect_job_server(s, server));
      TRY(read_autostop(s, server, *session));
      return {};
    }();
    if (!read) {
      s.err << "gpurent: " << r.name << ": cannot read its autostop watchdog (" << escape_controls(read.error().message) << ")\n";
    }
    if (auto again = store.get_server(r.id); again && *again) {
      r = **again;
    }
  }
}

std::pair<std::string, std::string> autostop_trouble(StateStore& store, const ServerRecord& r, const Instance& in,
                                                    std::pair<std::string, std::string> trouble)
{
  if (trouble.first != "exited" || !in.trouble.empty()) {
    return trouble;
  }
  auto rec = store.autostop(r.id);
  if (!rec || !*rec) {
    return trouble;
  }
  const auto settings = nlohmann::json::parse((*rec)->settings_json, nullptr, false);
  if (settings.is_object() && settings.value("can_stop_billing", false) && settings.value("then", "") == "stop") {
    return {};
  }
  return trouble;
}

TimePoint autostop_event_time(StateStore& store, const ServerRecord& r, ServerStatus next, TimePoint now)
{
  if (r.status != ServerStatus::running ||
      (next != ServerStatus::stopped && next != ServerStatus::gone && next != ServerStatus::destroyed)) {
    return now;
  }
  auto rec = store.autostop(r.id);
  if (!rec || !*rec || (*rec)->last_json.empty()) {
    return now;
  }
  const auto last = nlohmann::json::parse((*rec)->last_json, nullptr, false);
  if (!last.is_object() || !last.contains("idle_since") || !last["idle_since"].is_number_integer() ||
      !last.contains("idle_limit_s") || !last["idle_limit_s"].is_number_integer()) {
    return now;
  }
  const auto at = from_unix(last["idle_since"].get<std::int64_t>() + last["idle_limit_s"].get<std::int64_t>());
  return at > r.status_since && at <= now ? at : now;
}

}  // namespace gpurent
