// SPDX-License-Identifier: MIT
#include "providers/hf_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>

#include "common/text.hpp"
#include "providers/hf_resolve_detail.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {
namespace {

namespace fs = std::filesystem;
using hf_detail::write_atomically;

constexpr std::uint64_t k_max_listing_bytes = 64ULL * 1024 * 1024;
constexpr std::size_t k_max_files = 100'000;

Result<std::string> read_file_range(const fs::path& path, std::uint64_t begin, std::uint64_t length)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Errc::not_found, path.string() + ": cannot open it; check the path and permissions");
  }
  in.seekg(static_cast<std::streamoff>(std::min<std::uint64_t>(begin, INT64_MAX)));
  std::string out(static_cast<std::size_t>(length), '\0');
  in.read(out.data(), static_cast<std::streamsize>(length));
  out.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return out;
}

Result<std::string> read_whole(const fs::path& path, std::uint64_t limit)
{
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    return fail(Errc::not_found, path.string() + ": " + ec.message());
  }
  if (size > limit) {
    return fail(Errc::invalid_input, path.string() + ": " + std::to_string(size) + " bytes, over the " +
                                         std::to_string(limit) + "-byte limit for this file");
  }
  return read_file_range(path, 0, size);
}

Result<void> check_path(std::string_view file)
{
  if (!safe_repo_path(file)) {
    return fail(Errc::invalid_input, "repository file \"" + std::string(file.substr(0, 200)) +
                                         "\": not a plain relative path; refusing it");
  }
  return {};
}

std::string listing_json(const std::vector<RepoFile>& files)
{
  nlohmann::json j = nlohmann::json::array();
  for (const auto& f : files) {
    j.push_back(f.size ? nlohmann::json{{"path", f.path}, {"size", *f.size}} : nlohmann::json{{"path", f.path}});
  }
  return j.dump(1) + "\n";
}

// Our cached listing, or the Hub API's siblings ({"rfilename", "size", "lfs": {"size"}}); each path once.
Result<std::vector<RepoFile>> parse_listing(std::string_view text, std::string_view what)
{
  const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const nlohmann::json* items = nullptr;
  if (!j.is_discarded() && j.is_array()) {
    items = &j;
  } else if (!j.is_discarded() && j.is_object() && j.contains("siblings") && j["siblings"].is_array()) {
    items = &j["siblings"];
  }
  if (items == nullptr) {
    return fail(Errc::invalid_input, std::string(what) + ": no file list (\"siblings\") in the answer");
  }
  std::vector<RepoFile> out;
  std::set<std::string, std::less<>> seen;
  for (const auto& s : *items) {
    if (!s.is_object() || out.size() >= k_max_files) {
      continue;
    }
    const auto name = s.contains("rfilename") ? s["rfilename"] : s.value("path", nlohmann::json());
    if (!name.is_string() || !safe_repo_path(name.get<std::string>())) {
      continue;  // a name we would not dare to use as a path is not a weights file of ours
    }
    if (!seen.insert(name.get<std::string>()).second) {
      continue;  // a file named twice is one file: its weights are counted once (the first entry's size)
    }
    RepoFile f{name.get<std::string>(), std::nullopt};
    if (s.contains("lfs") && s["lfs"].is_object() && s["lfs"].contains("size") && s["lfs"]["size"].is_number_unsigned()) {
      f.size = s["lfs"]["size"].get<std::uint64_t>();
    } else if (s.contains("size") && s["size"].is_number_unsigned()) {
      f.size = s["size"].get<std::uint64_t>();
    }
    out.push_back(std::move(f));
  }
  return out;
}

// Ranges over HTTP: 206 with Content-Range; a 200 (range ignored) is accepted while it fits.
Result<Chunk> http_range(HttpClient& http, const ResolveOptions& o, const std::string& url, bool send_token,
                         std::uint64_t begin, std::uint64_t length, std::string_view id)
{
  HttpRequest req;
  req.url = url;
  req.timeout = o.timeout;
  req.max_response_bytes = length + 4096;
  req.headers.emplace_back("Range", "bytes=" + std::to_string(begin) + "-" + std::to_string(begin + length - 1));
  if (send_token && o.token) {
    req.headers.emplace_back("Authorization", "Bearer " + *o.token);
  }
  auto resp = http.send(req);
  if (!resp) {
    Error e = resp.error();
    if (e.code == Errc::invalid_input) {
      e.message += " (the server ignored the range request)";
    }
    return std::unexpected(e);
  }
  Chunk c;
  if (resp->status == 206) {
    c.file_size = content_range_total(resp->header("content-range").value_or(""));
    c.bytes = std::move(resp->body);
    if (c.bytes.size() > length) {
      c.bytes.resize(static_cast<std::size_t>(length));
    }
    return c;
  }
  if (resp->status == 200) {
    c.file_size = resp->body.size();
    c.bytes = begin < resp->body.size() ? resp->body.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(length))
                                        : std::string();
    return c;
  }
  if (resp->status == 416) {
    c.file_size = content_range_total(resp->header("content-range").value_or(""));
    return c;
  }
  return std::unexpected(hub_status_error(*resp, id, o));
}

class HubRepoFiles final : public RepoFiles {
public:
  HubRepoFiles(HttpProvider http, ResolveOptions o, std::string id, fs::path cache)
      : m_http(std::move(http)), m_o(std::move(o)), m_id(std::move(id)), m_cache(std::move(cache))
  {
  }

  Result<std::vector<RepoFile>> listing() override
  {
    const fs::path cached = m_cache.empty() ? fs::path() : m_cache / "files.json";
    std::error_code ec;
    if (!cached.empty() && fs::exists(cached, ec)) {
      TRY_ASSIGN(const std::string text, read_whole(cached, k_max_listing_bytes));
      return parse_listing(text, cached.string());
    }
    TRY_ASSIGN(HttpClient * http, client("the file list of " + m_id));
    HttpRequest req;
    req.url = m_o.endpoint + "/api/models/" + m_id + "?blobs=true";
    req.timeout = m_o.timeout;
    req.max_response_bytes = k_max_listing_bytes;
    req.headers.emplace_back("Accept", "application/json");
    if (m_o.token) {
      req.headers.emplace_back("Authorization", "Bearer " + *m_o.token);
    }
    TRY_ASSIGN(const HttpResponse resp, http->send(req));
    if (resp.status != 200) {
      return std::unexpected(hub_status_error(resp, m_id, m_o));
    }
    TRY_ASSIGN(std::vector<RepoFile> files, parse_listing(resp.body, req.url));
    if (!cached.empty()) {
      static_cast<void>(write_atomically(cached, listing_json(files)));
    }
    return files;
  }

  Result<std::string> text(std::string_view file, std::uint64_t limit) override
  {
    TRY(check_path(file));
    const fs::path cached = m_cache.empty() ? fs::path() : m_cache / "files" / std::string(file);
    std::error_code ec;
    if (!cached.empty() && fs::exists(cached, ec)) {
      return read_whole(cached, limit);
    }
    TRY_ASSIGN(HttpClient * http, client(std::string(file) + " of " + m_id));
    HttpRequest req;
    req.url = where(file);
    req.timeout = m_o.timeout;
    req.max_response_bytes = limit;
    if (m_o.token) {
      req.headers.emplace_back("Authorization", "Bearer " + *m_o.token);
    }
    TRY_ASSIGN(HttpResponse resp, http->send(req));
    if (resp.status != 200) {
      return std::unexpected(hub_status_error(resp, m_id, m_o));
    }
    if (!cached.empty()) {
      static_cast<void>(write_atomically(cached, resp.body));
    }
    return std::move(resp.body);
  }

  // The cache keeps each file's prefix (the header) as read; later reads within it are local.
  Result<Chunk> range(std::string_view file, std::uint64_t begin, std::uint64_t length) override
  {
    TRY(check_path(file));
    const fs::path cached = m_cache.empty() ? fs::path() : m_cache / "headers" / std::string(file);
    std::error_code ec;
    std::uint64_t have = 0;
    if (!cached.empty()) {
      have = fs::exists(cached, ec) ? fs::file_size(cached, ec) : 0;
      if (ec) {
        have = 0;
      }
    }
    if (length == 0 || begin + length <= have) {
      TRY_ASSIGN(std::string bytes, read_file_range(cached, begin, length));
      return Chunk{std::move(bytes), std::nullopt};
    }
    TRY_ASSIGN(HttpClient * http, client("the header of " + std::string(file) + " in " + m_id));
    TRY_ASSIGN(Chunk c, http_range(*http, m_o, where(file), true, begin, length, m_id));
    if (!cached.empty() && begin <= have && begin + c.bytes.size() > have) {
      std::string prefix;
      if (begin > 0) {
        TRY_ASSIGN(prefix, read_file_range(cached, 0, begin));
      }
      static_cast<void>(write_atomically(cached, prefix + c.bytes));
    }
    return c;
  }

  std::string where(std::string_view file) const override
  {
    return m_o.endpoint + "/" + m_id + "/resolve/main/" + std::string(file);
  }

private:
  Result<HttpClient*> client(const std::string& what)
  {
    if (m_o.offline) {
      return fail(Errc::not_found, what + " is not in the cache (" +
                                       (m_cache.empty() ? std::string("no cache directory") : m_cache.string()) +
                                       ") and --offline forbids fetching it; run once without --offline");
    }
    if (!m_http) {
      return fail(Errc::internal, what + ": no HTTP client to fetch it from the Hub");
    }
    TRY_ASSIGN(HttpClient * c, m_http());
    if (c == nullptr) {
      return fail(Errc::internal, what + ": no HTTP client to fetch it from the Hub");
    }
    return c;
  }

  HttpProvider m_http;
  ResolveOptions m_o;
  std::string m_id;
  fs::path m_cache;
};

class LocalRepoFiles final : public RepoFiles {
public:
  explicit LocalRepoFiles(fs::path dir) : m_dir(std::move(dir)) {}

  Result<std::vector<RepoFile>> listing() override
  {
    std::vector<RepoFile> out;
    std::error_code ec;
    fs::recursive_directory_iterator it(m_dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      return fail(Errc::not_found, m_dir.string() + ": " + ec.message());
    }
    for (; it != fs::recursive_directory_iterator() && out.size() < k_max_files; it.increment(ec)) {
      if (ec) {
        break;
      }
      const std::string name = it->path().filename().string();
      if (it->is_directory(ec)) {
        if (name.starts_with(".") || it.depth() >= 1) {
          it.disable_recursion_pending();  // two levels: <dir>/<file> and <dir>/<sub>/<file>
        }
        continue;
      }
      if (!it->is_regular_file(ec) || name.starts_with(".")) {
        continue;
      }
      const std::string rel = fs::relative(it->path(), m_dir, ec).generic_string();
      if (!ec && safe_repo_path(rel)) {
        const auto size = it->file_size(ec);
        out.push_back(RepoFile{rel, ec ? std::nullopt : std::optional<std::uint64_t>(size)});
      }
    }
    std::sort(out.begin(), out.end(), [](const RepoFile& a, const RepoFile& b) { return a.path < b.path; });
    return out;
  }

  Result<std::string> text(std::string_view file, std::uint64_t limit) override
  {
    TRY(check_path(file));
    return read_whole(m_dir / std::string(file), limit);
  }

  Result<Chunk> range(std::string_view file, std::uint64_t begin, std::uint64_t length) override
  {
    TRY(check_path(file));
    const fs::path path = m_dir / std::string(file);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) {
      return fail(Errc::not_found, path.string() + ": " + ec.message());
    }
    const std::uint64_t n = begin >= size ? 0 : std::min(length, size - begin);
    TRY_ASSIGN(std::string bytes, read_file_range(path, begin, n));
    return Chunk{std::move(bytes), size};
  }

  std::string where(std::string_view file) const override { return (m_dir / std::string(file)).string(); }

private:
  fs::path m_dir;
};

class UrlFile final : public RepoFiles {
public:
  UrlFile(HttpProvider http, ResolveOptions o, std::string url) : m_http(std::move(http)), m_o(std::move(o)), m_url(std::move(url))
  {
    const auto q = m_url.find_first_of("?#");
    const std::string path = m_url.substr(0, q);
    m_name = path.substr(path.rfind('/') + 1);
  }

  Result<std::vector<RepoFile>> listing() override { return std::vector<RepoFile>{{m_name, std::nullopt}}; }

  Result<std::string> text(std::string_view file, std::uint64_t) override
  {
    return fail(Errc::not_found, std::string(file) + " is not at " + m_url);
  }

  Result<Chunk> range(std::string_view, std::uint64_t begin, std::uint64_t length) override
  {
    if (m_o.offline) {
      return fail(Errc::not_found, m_url + ": --offline forbids fetching it; pass a local .gguf file instead");
    }
    if (!m_http) {
      return fail(Errc::internal, m_url + ": no HTTP client");
    }
    TRY_ASSIGN(HttpClient * http, m_http());
    if (http == nullptr) {
      return fail(Errc::internal, m_url + ": no HTTP client");
    }
    // The token is for the Hub; a URL elsewhere never gets it.
    const bool hub = m_url.starts_with(m_o.endpoint + "/");
    return http_range(*http, m_o, m_url, hub, begin, length, m_url);
  }

  std::string where(std::string_view) const override
  {
    const auto q = m_url.find_first_of("?#");
    return q == std::string::npos ? m_url : m_url.substr(0, q);
  }

private:
  HttpProvider m_http;
  ResolveOptions m_o;
  std::string m_url;
  std::string m_name;
};

}  // namespace

std::optional<std::uint64_t> content_range_total(std::string_view h) noexcept
{
  const auto slash = h.rfind('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;
  }
  return parse_u64(trim(h.substr(slash + 1)));
}

std::unique_ptr<RepoFiles> hub_repo_files(const HttpProvider& http, const ResolveOptions& o, std::string id,
                                          fs::path cache_dir)
{
  return std::make_unique<HubRepoFiles>(http, o, std::move(id), std::move(cache_dir));
}

std::unique_ptr<RepoFiles> local_repo_files(fs::path dir) { return std::make_unique<LocalRepoFiles>(std::move(dir)); }

std::unique_ptr<RepoFiles> url_file(const HttpProvider& http, const ResolveOptions& o, std::string url)
{
  return std::make_unique<UrlFile>(http, o, std::move(url));
}

}  // namespace gpurent
