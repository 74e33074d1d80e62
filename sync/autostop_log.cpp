// SPDX-License-Identifier: MIT
#include "sync/autostop_log.hpp"

#include <algorithm>
#include <charconv>

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

template <class T>
std::optional<T> number(std::string_view s)
{
  T v{};
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

std::vector<std::string_view> words(std::string_view line)
{
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
    }
    if (i > start) {
      out.push_back(line.substr(start, i - start));
    }
  }
  return out;
}

std::optional<std::string_view> value(const std::vector<std::string_view>& w, std::string_view key)
{
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i].size() > key.size() && w[i].starts_with(key) && w[i][key.size()] == '=') {
      return w[i].substr(key.size() + 1);
    }
  }
  return std::nullopt;
}

// "0:3:1200,1:0:0"; nullopt when any entry is malformed; "-" or empty: none.
std::optional<std::vector<AutostopGpu>> parse_gpus(std::string_view s)
{
  std::vector<AutostopGpu> out;
  if (s == "-" || s.empty()) {
    return out;
  }
  while (!s.empty()) {
    const auto comma = s.find(',');
    const auto item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    const auto c1 = item.find(':');
    const auto c2 = c1 == std::string_view::npos ? c1 : item.find(':', c1 + 1);
    if (c2 == std::string_view::npos) {
      return std::nullopt;
    }
    const auto i = number<int>(item.substr(0, c1));
    const auto u = number<std::uint32_t>(item.substr(c1 + 1, c2 - c1 - 1));
    const auto m = number<std::uint64_t>(item.substr(c2 + 1));
    if (!i || !u || !m) {
      return std::nullopt;
    }
    out.push_back({*i, *u, *m});
  }
  return out;
}

std::optional<AutostopSample> parse_sample(const std::vector<std::string_view>& w)
{
  AutostopSample s;
  const auto t = value(w, "t");
  const auto r = value(w, "r");
  if (!t || !r || !number<std::int64_t>(*t)) {
    return std::nullopt;
  }
  s.at = *number<std::int64_t>(*t);
  s.readable = *r == "1";
  s.why = std::string(value(w, "why").value_or(""));
  if (const auto g = value(w, "gpus")) {
    auto gpus = parse_gpus(*g);
    if (!gpus) {
      return std::nullopt;
    }
    s.gpus = std::move(*gpus);
  }
  if (const auto p = value(w, "procs")) {
    s.processes = number<std::uint32_t>(*p);
  }
  if (const auto n = value(w, "sessions")) {
    s.sessions = number<std::uint32_t>(*n);
  }
  if (const auto j = value(w, "jobs")) {
    s.jobs = number<std::uint32_t>(*j).value_or(0);
  }
  s.idle = value(w, "idle").value_or("0") == "1";
  if (const auto since = value(w, "since")) {
    s.idle_since = number<std::int64_t>(*since);
  }
  return s;
}

// A shell single-quoted word as shell_quote writes it: 'a'\''b' -> a'b.
std::optional<std::string> unquote(std::string_view v)
{
  std::string out;
  std::size_t i = 0;
  while (i < v.size()) {
    if (v[i] == '\'') {
      const auto end = v.find('\'', i + 1);
      if (end == std::string_view::npos) {
        return std::nullopt;
      }
      out += v.substr(i + 1, end - i - 1);
      i = end + 1;
    } else if (v[i] == '\\' && i + 1 < v.size()) {
      out.push_back(v[i + 1]);
      i += 2;
    } else {
      out.push_back(v[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace

bool autostop_sample_idle(const AutostopSample& s, std::uint32_t gpu_util_pct) noexcept
{
  if (!s.readable || s.gpus.empty() || !s.sessions || *s.sessions > 0 || s.jobs > 0) {
    return false;
  }
  return std::all_of(s.gpus.begin(), s.gpus.end(), [gpu_util_pct](const AutostopGpu& g) { return g.utilization_pct < gpu_util_pct; });
}

AutostopLog parse_autostop_log(std::string_view text)
{
  AutostopLog log;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto w = words(line);
    if (w.empty()) {
      continue;
    }
    if (w[0] == "sample") {
      if (auto s = parse_sample(w)) {
        log.samples.push_back(std::move(*s));
      }
      continue;
    }
    if (w[0] != "start" && w[0] != "pause" && w[0] != "resume" && w[0] != "backup" && w[0] != "action" && w[0] != "exit") {
      continue;
    }
    const auto t = value(w, "t");
    const auto at = t ? number<std::int64_t>(*t) : std::nullopt;
    if (!at) {
      continue;
    }
    AutostopEvent e;
    e.kind = std::string(w[0]);
    e.at = *at;
    e.ok = value(w, "result").value_or("") == "ok";
    e.detail = std::string(value(w, "detail").value_or(""));
    e.stage = number<int>(value(w, "stage").value_or("")).value_or(0);
    if (e.kind == "action") {
      e.what = std::string(value(w, "do").value_or(""));
    } else if (e.kind == "exit") {
      e.what = std::string(value(w, "why").value_or(""));
    } else if (e.kind == "pause") {
      e.what = std::string(value(w, "until").value_or(""));
    }
    log.events.push_back(std::move(e));
  }
  return log;
}

Result<AutostopSettings> parse_autostop_config(std::string_view text)
{
  AutostopSettings s;
  bool any = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    const auto k = line.substr(0, eq);
    const auto v = unquote(line.substr(eq + 1));
    if (!v) {
      return fail(Errc::invalid_input, "the watchdog's config on the server is malformed");
    }
    const auto n = number<std::int64_t>(*v);
    any = true;
    if (k == "AS_IDLE" && n) {
      s.idle_s = *n;
    } else if (k == "AS_THEN") {
      s.then = parse_autostop_action(*v).value_or(AutostopAction::stop);
    } else if (k == "AS_RELEASE" && n) {
      s.release_after_s = *n;
    } else if (k == "AS_UTIL" && n && *n >= 0 && *n <= 100) {
      s.gpu_util_pct = static_cast<std::uint32_t>(*n);
    } else if (k == "AS_INTERVAL" && n) {
      s.interval_s = *n;
    } else if (k == "AS_API") {
      s.api = *v;
    } else if (k == "AS_API_URL") {
      s.api_url = *v;
    } else if (k == "AS_INSTANCE") {
      s.instance_id = *v;
    } else if (k == "AS_CRED") {
      s.credential = *v;
    } else if (k == "AS_ON_IDLE") {
      s.on_idle = *v;
    } else if (k == "AS_BACKUP_TO") {
      s.backup_to = *v;
    } else if (k == "AS_BACKUP_DIR") {
      s.backup_dir = *v;
    } else if (k == "AS_NO_BACKUP") {
      s.no_backup = *v == "1";
    } else if (k == "AS_NVIDIA_SMI") {
      s.nvidia_smi = *v;
    } else if (k == "AS_ARMED_AT" && n) {
      s.armed_at = *n;
    }
  }
  if (!any) {
    return fail(Errc::invalid_input, "the watchdog's config on the server is empty");
  }
  return s;
}

Result<AutostopRemote> parse_autostop_state(std::string_view out)
{
  const auto f = split_nul_fields(out);
  if (f.empty() || f[0] != "gpurent-autostop-state-1") {
    return fail(Errc::invalid_input, "reading the watchdog printed something unexpected; is a POSIX shell the login shell on the server?");
  }
  AutostopRemote r;
  if (f.size() >= 2 && f[1] == "none") {
    return r;
  }
  for (std::size_t i = 1; i + 1 < f.size(); i += 2) {
    const auto k = f[i];
    const auto v = f[i + 1];
    if (k == "config") {
      r.configured = true;
      r.config = std::string(v);
    } else if (k == "alive") {
      r.alive = v == "yes";
    } else if (k == "pause") {
      auto t = v;
      while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) {
        t.remove_suffix(1);
      }
      r.pause_until = number<std::int64_t>(t);
    } else if (k == "now") {
      r.now = number<std::int64_t>(v).value_or(0);
    } else if (k == "log") {
      r.log = std::string(v);
    }
  }
  return r;
}

std::optional<AutostopEvent> autostop_billing_action(const AutostopLog& log)
{
  for (auto it = log.events.rbegin(); it != log.events.rend(); ++it) {
    if (it->kind == "action" && it->ok && (it->what == "stop" || it->what == "destroy")) {
      return *it;
    }
    if (it->kind == "start") {
      break;  // an earlier arming
    }
  }
  return std::nullopt;
}

std::optional<AutostopEvent> autostop_latest_backup(const AutostopLog& log)
{
  for (auto it = log.events.rbegin(); it != log.events.rend(); ++it) {
    if (it->kind == "backup") {
      return *it;
    }
    if (it->kind == "start") {
      break;  // an earlier arming
    }
  }
  return std::nullopt;
}

AutostopView autostop_view(const AutostopRemote& remote)
{
  AutostopView v;
  if (!remote.configured) {
    v.next_action = "none";
    return v;
  }
  v.configured = true;
  if (auto s = parse_autostop_config(remote.config)) {
    v.settings = std::move(*s);
  }
  const auto log = parse_autostop_log(remote.log);
  v.armed = remote.alive;
  v.can_stop_billing = !v.settings.api.empty();
  v.paused = v.armed && remote.pause_until && *remote.pause_until > remote.now;
  if (v.paused) {
    v.pause_until = remote.pause_until;
  }
  if (!log.samples.empty()) {
    v.last_sample = log.samples.back();
  }
  for (auto it = log.events.rbegin(); it != log.events.rend(); ++it) {
    if (!v.last_action && it->kind == "action") {
      v.last_action = *it;
    }
    if (!v.exit && it->kind == "exit") {
      v.exit = *it;
    }
    if (it->kind == "start") {
      break;  // older events belong to an earlier arming
    }
  }
  const bool api = v.can_stop_billing;
  const std::string first = api ? std::string(to_string(v.settings.then)) : std::string("mark-idle");
  if (!v.armed) {
    v.next_action = "none";
    return v;
  }
  v.next_action = first;
  if (v.paused) {
    v.next_action_at = *v.pause_until + v.settings.idle_s;
    return v;
  }
  if (v.last_sample && v.last_sample->idle && v.last_sample->idle_since) {
    const auto since = *v.last_sample->idle_since;
    v.idle_for_s = std::max<std::int64_t>(0, std::max(remote.now, v.last_sample->at) - since);
    const bool stage1_done = v.last_action && v.last_action->ok && v.last_action->at >= since && v.last_action->stage == 1;
    if (!stage1_done) {
      v.next_action_at = since + v.settings.idle_s;
    } else if (v.settings.release_after_s > 0 && api) {
      v.next_action = "destroy";
      v.next_action_at = since + v.settings.idle_s + v.settings.release_after_s;
    } else {
      v.next_action = "none";
    }
  }
  return v;
}

}  // namespace gpurent
