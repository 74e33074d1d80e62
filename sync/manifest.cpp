// SPDX-License-Identifier: MIT
#include "sync/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sync/sha256.hpp"

namespace gpurent {
namespace {

std::string_view kind_name(EntryKind k)
{
  switch (k) {
  case EntryKind::file: return "file";
  case EntryKind::directory: return "dir";
  case EntryKind::symlink: return "symlink";
  case EntryKind::other: return "other";
  }
  return "other";
}

std::optional<std::string> from_hex(std::string_view h)
{
  if (h.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string out;
  for (std::size_t i = 0; i < h.size(); i += 2) {
    int v = 0;
    for (std::size_t k = 0; k < 2; ++k) {
      const char c = h[i + k];
      int d = 0;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else {
        return std::nullopt;
      }
      v = v * 16 + d;
    }
    out.push_back(static_cast<char>(v));
  }
  return out;
}

void put_text(nlohmann::json& j, const char* key, const std::string& value)
{
  if (is_valid_utf8(value)) {
    j[key] = value;
  } else {
    j[std::string(key) + "_hex"] = to_hex(reinterpret_cast<const std::uint8_t*>(value.data()), value.size());
  }
}

std::optional<std::string> get_text(const nlohmann::json& j, const char* key)
{
  if (j.contains(key)) {
    return j.at(key).get<std::string>();
  }
  const std::string hex_key = std::string(key) + "_hex";
  if (j.contains(hex_key)) {
    return from_hex(j.at(hex_key).get<std::string>());
  }
  return std::nullopt;
}

// A whole number stored under `key`: nlohmann would convert a float with a cast, undefined
// behaviour when it is out of range. nullopt when absent or not an integer.
template <class T>
std::optional<T> whole_number(const nlohmann::json& j, const char* key)
{
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    return std::nullopt;
  }
  return it->get<T>();
}

Result<void> errno_fail(const std::string& what)
{
  return fail(Errc::internal, what + ": " + std::strerror(errno) + "; check the destination directory");
}

}  // namespace

bool is_valid_utf8(std::string_view s) noexcept
{
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (i + len > s.size()) {
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    const std::uint32_t min = len == 2 ? 0x80u : (len == 3 ? 0x800u : 0x10000u);
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string render_manifest(const Manifest& m)
{
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [path, e] : m.entries) {
    nlohmann::json j;
    put_text(j, "path", path);
    j["type"] = kind_name(e.kind);
    j["size"] = e.size;
    j["mtime_ns"] = e.mtime_ns;
    j["mode"] = e.mode;
    if (e.kind == EntryKind::file) {
      j["sha256"] = e.sha256;
    }
    if (e.kind == EntryKind::symlink) {
      put_text(j, "link", e.link_target);
    }
    files.push_back(std::move(j));
  }
  nlohmann::json root;
  root["version"] = 1;
  put_text(root, "host", m.host);
  root["finished_unix"] = m.finished_unix;
  root["files"] = std::move(files);
  return root.dump(1) + "\n";
}

Result<Manifest> parse_manifest(std::string_view json_text)
{
  try {
    const auto root = nlohmann::json::parse(json_text);
    if (!root.is_object() || whole_number<std::int64_t>(root, "version") != 1 || !root.contains("files") ||
        !root.at("files").is_array() || (root.contains("finished_unix") && !whole_number<std::int64_t>(root, "finished_unix"))) {
      return fail(Errc::invalid_input, "backup manifest: not a version 1 gpurent manifest; move it away to start afresh");
    }
    Manifest m;
    m.host = get_text(root, "host").value_or("");
    m.finished_unix = whole_number<std::int64_t>(root, "finished_unix").value_or(0);
    for (const auto& j : root.at("files")) {
      const auto path = get_text(j, "path");
      if (!path) {
        return fail(Errc::invalid_input, "backup manifest: an entry has no valid path; move the manifest away to start afresh");
      }
      ManifestEntry e;
      const std::string type = j.at("type").get<std::string>();
      if (type == "file") {
        e.kind = EntryKind::file;
      } else if (type == "dir") {
        e.kind = EntryKind::directory;
      } else if (type == "symlink") {
        e.kind = EntryKind::symlink;
      } else {
        e.kind = EntryKind::other;
      }
      const auto size = whole_number<std::uint64_t>(j, "size");
      const auto mtime_ns = whole_number<std::int64_t>(j, "mtime_ns");
      const auto mode = whole_number<std::uint32_t>(j, "mode");
      if (!size || !mtime_ns || !mode) {
        return fail(Errc::invalid_input, "backup manifest: an entry's size, mtime_ns or mode is not a whole number; move "
                                         "the manifest away to start afresh");
      }
      e.size = *size;
      e.mtime_ns = *mtime_ns;
      e.mode = *mode;
      e.sha256 = j.value("sha256", std::string{});
      e.link_target = get_text(j, "link").value_or("");
      m.entries[*path] = std::move(e);
    }
    return m;
  } catch (const nlohmann::json::exception& ex) {
    return fail(Errc::invalid_input, std::string("backup manifest: ") + ex.what() + "; move it away to start afresh");
  }
}

Result<Manifest> load_manifest(const std::filesystem::path& file)
{
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) {
      return Manifest{};
    }
    return fail(Errc::internal, "cannot read " + file.string() + ": " + std::strerror(errno) + "; check its permissions");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str());
}

Result<void> save_manifest(const std::filesystem::path& file, const Manifest& m)
{
  const std::string text = render_manifest(m);
  const std::filesystem::path tmp = file.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return errno_fail("cannot write " + tmp.string());
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      return errno_fail("cannot write the backup manifest " + tmp.string());
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    return errno_fail("cannot sync the backup manifest " + tmp.string());
  }
  ::close(fd);
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return errno_fail("cannot replace " + file.string());
  }
  const int dir = ::open(file.parent_path().empty() ? "." : file.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace gpurent
