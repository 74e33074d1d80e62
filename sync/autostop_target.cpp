// SPDX-License-Identifier: MIT
#include "sync/autostop_target.hpp"

#include <charconv>

#include "sync/remote_listing.hpp"

namespace gpurent {
namespace {

bool hex64(std::string_view s) noexcept
{
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string_view trim(std::string_view s) noexcept
{
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::string autostop_target_check_command(const BackupTarget& target, std::string_view stem)
{
  // The stem is [A-Za-z0-9_.-] only (autostop_backup_stem), safe unquoted before the glob.
  return "cd -- " + remote_shell_path(target.path) + " 2>/dev/null || { printf 'nodir\\0'; exit 0; }\n"
         "n=; for s in " + std::string(stem) + "*.tar.sha256; do [ -f \"$s\" ] && n=$s; done\n"
         "[ -n \"$n\" ] || { printf 'none\\0'; exit 0; }\n"
         "t=${n%.sha256}\n"
         "printf 'ok\\0%s\\0' \"$n\"; head -c 300 -- \"$n\" | tr -d '\\000'; printf '\\0'\n"
         "if [ ! -f \"$t\" ]; then printf 'missing\\0'\n"
         "elif ! command -v sha256sum >/dev/null 2>&1; then printf 'nohash\\0'\n"
         "else sha256sum < \"$t\" | cut -c1-64 | tr -d '\\n'; printf '\\0'; fi\n"
         "printf 'end\\0'\n";
}

TargetBackupCheck parse_autostop_target_check(std::string_view out, const BackupTarget& target, std::string_view stem)
{
  TargetBackupCheck r;
  const std::string where = target.ssh_destination() + ":" + target.path;
  const auto f = split_nul_fields(out);
  if (f.empty()) {
    r.why = "the check at " + where + " printed nothing";
    return r;
  }
  if (f[0] == "nodir") {
    r.why = "there is no directory " + target.path + " at " + target.ssh_destination();
    return r;
  }
  if (f[0] == "none") {
    r.why = "there is no verified backup of this arming at " + where + " (no " + std::string(stem) + "*.tar.sha256)";
    return r;
  }
  if (f[0] != "ok" || f.size() != 5 || f[4] != "end") {
    r.why = "the check at " + where + " ended early or printed something else";
    return r;
  }
  const std::string_view sidecar = f[1];
  constexpr std::string_view k_suffix = ".tar.sha256";
  if (!sidecar.starts_with(stem) || !sidecar.ends_with(k_suffix) || sidecar.size() <= stem.size() + k_suffix.size()) {
    r.why = "the check at " + where + " named an unexpected file";
    return r;
  }
  const std::string_view digits = sidecar.substr(stem.size(), sidecar.size() - stem.size() - k_suffix.size());
  std::int64_t started = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), started);
  const std::string tar(sidecar.substr(0, sidecar.size() - 7));  // without ".sha256"
  if (ec != std::errc{} || end != digits.data() + digits.size() || started <= 0) {
    r.why = "the check at " + where + " named an unexpected file";
    return r;
  }
  // sha256sum's own format: "HEX  NAME" (so `sha256sum -c` checks it there too).
  const std::string_view line = trim(f[2]);
  const auto space = line.find("  ");
  if (space == std::string_view::npos || !hex64(line.substr(0, space)) || line.substr(space + 2) != tar) {
    r.why = "the checksum file " + std::string(sidecar) + " at " + where + " is not a SHA-256 of " + tar;
    return r;
  }
  const std::string_view now = trim(f[3]);
  if (now == "missing") {
    r.why = "the newest backup of this arming, " + tar + ", is gone from " + where;
    return r;
  }
  if (now == "nohash") {
    r.why = where + " has no sha256sum to check " + tar + " with";
    return r;
  }
  if (!hex64(now)) {
    r.why = "hashing " + tar + " at " + where + " failed";
    return r;
  }
  if (now != line.substr(0, space)) {
    r.why = "the newest backup of this arming, " + tar + " at " + where +
            ", no longer has the SHA-256 the server verified (changed or truncated since)";
    return r;
  }
  const std::string dir = target.path == "." ? std::string() : target.path.ends_with('/') ? target.path : target.path + "/";
  r.verified = AutostopEvent{"backup", started, 1, "", true, "sha256=" + std::string(now) + ":" + dir + tar};
  return r;
}

}  // namespace gpurent
