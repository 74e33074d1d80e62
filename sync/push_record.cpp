// SPDX-License-Identifier: MIT
#include "sync/push_record.hpp"

#include <charconv>

namespace gpurent {
namespace {

constexpr std::string_view k_magic = "gpurent-push-record";
constexpr std::string_view k_version = "1";
constexpr std::string_view k_end = "end";

bool relative_path(std::string_view p)
{
  if (p.empty() || p.front() == '/' || p.back() == '/' || p.find('\0') != std::string_view::npos) {
    return false;
  }
  std::size_t start = 0;
  while (true) {
    const auto slash = p.find('/', start);
    const auto part = p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
    if (slash == std::string_view::npos) {
      return true;
    }
    start = slash + 1;
  }
}


Error damaged(const std::string& why)
{
  return Error{Errc::invalid_input, "the record of earlier pushes is damaged (" + why + ")"};
}

}  // namespace

std::string push_record_file_name(std::string_view server_key, std::string_view remote_dir)
{
  std::uint64_t h = 14695981039346656037ULL;
  const auto mix = [&h](std::string_view s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ULL;
    }
  };
  mix(server_key);
  mix(std::string_view("\0", 1));
  mix(remote_dir);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "push-";
  for (int shift = 60; shift >= 0; shift -= 4) {
    out.push_back(hex[(h >> shift) & 0xFU]);
  }
  return out;
}

Result<std::string> write_push_record(std::string_view server_key, std::string_view remote_dir, const PathSet& paths)
{
  if (server_key.find('\0') != std::string_view::npos || remote_dir.find('\0') != std::string_view::npos) {
    return fail(Errc::invalid_input, "push record: a server name or directory with a NUL");
  }
  if (paths.size() > k_push_record_max_paths) {
    return fail(Errc::invalid_input, "push record: " + std::to_string(paths.size()) + " paths, more than the " +
                                         std::to_string(k_push_record_max_paths) + " gpurent records");
  }
  std::string out;
  for (const auto field : {k_magic, k_version, server_key, remote_dir}) {
    out += field;
    out.push_back('\0');
  }
  out += std::to_string(paths.size());
  out.push_back('\0');
  for (const auto& p : paths) {
    if (!relative_path(p)) {
      return fail(Errc::invalid_input, "push record: '" + p + "' is not a path inside the pushed directory");
    }
    out += p;
    out.push_back('\0');
    if (out.size() > k_push_record_max_bytes) {
      return fail(Errc::invalid_input, "push record: larger than the " + std::to_string(k_push_record_max_bytes >> 20) + " MiB gpurent records");
    }
  }
  out += k_end;
  out.push_back('\0');
  return out;
}

Result<PathSet> read_push_record(std::string_view text, std::string_view server_key, std::string_view remote_dir)
{
  if (text.size() > k_push_record_max_bytes + 4096) {
    return std::unexpected(damaged("too large"));
  }
  std::size_t pos = 0;
  const auto next = [&]() -> std::optional<std::string_view> {
    const auto nul = text.find('\0', pos);
    if (nul == std::string_view::npos) {
      return std::nullopt;
    }
    const auto field = text.substr(pos, nul - pos);
    pos = nul + 1;
    return field;
  };
  const auto magic = next();
  const auto version = next();
  if (!magic || *magic != k_magic) {
    return std::unexpected(damaged("not a push record"));
  }
  if (!version || *version != k_version) {
    return std::unexpected(damaged("unknown version"));
  }
  const auto key = next();
  const auto dir = next();
  const auto count_text = next();
  if (!key || !dir || !count_text) {
    return std::unexpected(damaged("truncated"));
  }
  if (*key != server_key || *dir != remote_dir) {
    return fail(Errc::not_found, "the record is of another server or directory");
  }
  std::size_t count = 0;
  const auto [end, ec] = std::from_chars(count_text->data(), count_text->data() + count_text->size(), count);
  if (count_text->empty() || ec != std::errc{} || end != count_text->data() + count_text->size() || count > k_push_record_max_paths) {
    return std::unexpected(damaged("bad count"));
  }
  PathSet out;
  std::string_view last;
  for (std::size_t i = 0; i < count; ++i) {
    const auto p = next();
    if (!p) {
      return std::unexpected(damaged("truncated"));
    }
    if (!relative_path(*p)) {
      return std::unexpected(damaged("a path outside the directory"));
    }
    if (i > 0 && *p <= last) {
      return std::unexpected(damaged("paths out of order"));
    }
    last = *p;
    out.emplace_hint(out.end(), *p);
  }
  const auto tail = next();
  if (!tail || *tail != k_end || pos != text.size()) {
    return std::unexpected(damaged("truncated or trailing bytes"));
  }
  return out;
}

PathSet next_push_record(const std::vector<LocalEntry>& local, const std::vector<RemoteEntry>& remote,
                         const std::optional<PathSet>& pushed_before, const std::vector<std::string>& deleted)
{
  PathSet out;
  for (const auto& e : local) {
    if (relative_path(e.path)) {
      out.insert(e.path);
    }
  }
  if (pushed_before) {
    const PathSet gone(deleted.begin(), deleted.end());
    for (const auto& r : remote) {
      if (pushed_before->contains(r.path) && relative_path(r.path) && !path_or_ancestor_in(gone, r.path)) {
        out.insert(r.path);
      }
    }
  }
  return out;
}

}  // namespace gpurent
