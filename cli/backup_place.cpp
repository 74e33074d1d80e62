// SPDX-License-Identifier: MIT
#include "cli/backup_place.hpp"

#include <cctype>

#include "cli/services.hpp"

namespace gpurent {

std::string backup_dir_name(std::string_view server_name)
{
  std::string out;
  for (const char c : server_name) {
    out.push_back((std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_') ? c : '_');
  }
  return out.empty() || out == "." || out == ".." ? std::string("server") : out;
}

Result<std::filesystem::path> default_backup_dir(const Services& s, const std::optional<std::string>& backup_dir,
                                                 std::string_view server_name)
{
  const std::string leaf = backup_dir_name(server_name);
  if (backup_dir && !backup_dir->empty()) {
    return std::filesystem::path(*backup_dir) / leaf;
  }
  // XDG Base Directory: a relative XDG_DATA_HOME is invalid and ignored.
  if (const auto data = s.getenv("XDG_DATA_HOME"); data && std::filesystem::path(*data).is_absolute()) {
    return std::filesystem::path(*data) / "gpurent" / "backups" / leaf;
  }
  if (const auto home = s.getenv("HOME"); home && std::filesystem::path(*home).is_absolute()) {
    return std::filesystem::path(*home) / ".local" / "share" / "gpurent" / "backups" / leaf;
  }
  return fail(Errc::usage, "no --to, no backup_dir in the config file, and neither XDG_DATA_HOME nor HOME is set to "
                           "find the data directory; give --to DIR");
}

}  // namespace gpurent
