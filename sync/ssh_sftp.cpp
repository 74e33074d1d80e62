// SPDX-License-Identifier: MIT
// SFTP on the libssh2 session (sync/ssh_detail.hpp): stat, reads of 2 MiB (libssh2 keeps up to
// 8 MiB of 30,000-byte requests in flight and grows the window), and the recursive SFTP walk
// that list_tree falls back to when the server has no GNU find.
#include <string>
#include <vector>

#include "sync/remote_listing.hpp"
#include "sync/ssh_detail.hpp"

namespace gpurent::ssh_detail {
namespace {

std::string sftp_path(const std::string& path)
{
  if (path.empty() || path == "~" || path == "~/") {
    return ".";
  }
  return path.starts_with("~/") ? path.substr(2) : path;
}

RemoteEntry from_attrs(const LIBSSH2_SFTP_ATTRIBUTES& a)
{
  RemoteEntry e;
  const unsigned long type = a.permissions & LIBSSH2_SFTP_S_IFMT;
  e.kind = type == LIBSSH2_SFTP_S_IFREG ? EntryKind::file
           : type == LIBSSH2_SFTP_S_IFDIR ? EntryKind::directory
           : type == LIBSSH2_SFTP_S_IFLNK ? EntryKind::symlink
                                          : EntryKind::other;
  e.size = a.filesize;
  e.mtime_ns = static_cast<std::int64_t>(a.mtime) * 1'000'000'000LL;
  e.mode = static_cast<std::uint32_t>(a.permissions & 07777);
  return e;
}

}  // namespace

Result<std::vector<RemoteEntry>> LibsshSession::list_tree(const std::string& root)
{
  TRY_ASSIGN(const auto r, exec_with_limit(find_listing_command(root), {}, k_tree_output_limit));
  if (r.exit_status == 0 || (r.exit_status == 1 && !r.out.empty())) {
    auto parsed = parse_find_listing(r.out);
    if (parsed) {
      return parsed;
    }
  }
  if (r.err.find("No such file") != std::string::npos) {
    return fail(Errc::not_found, "remote path " + root + " does not exist on " + to_string(m_target) + "; check the path");
  }
  return list_tree_sftp(root);  // no GNU find: one SFTP walk
}

Result<RemoteEntry> LibsshSession::stat(const std::string& path)
{
  TRY(ensure_sftp());
  const std::string p = sftp_path(path);
  LIBSSH2_SFTP_ATTRIBUTES a{};
  libssh2_session_set_blocking(m_session, 1);
  if (libssh2_sftp_stat_ex(m_sftp, p.c_str(), static_cast<unsigned>(p.size()), LIBSSH2_SFTP_LSTAT, &a) != 0) {
    return std::unexpected(sftp_error("stat " + path));
  }
  RemoteEntry e = from_attrs(a);
  e.path = path;
  return e;
}

Result<std::uint64_t> LibsshSession::read_file(const std::string& path, std::uint64_t offset, const DataSink& sink)
{
  TRY(ensure_sftp());
  const std::string p = sftp_path(path);
  libssh2_session_set_blocking(m_session, 1);
  LIBSSH2_SFTP_HANDLE* h = libssh2_sftp_open_ex(m_sftp, p.c_str(), static_cast<unsigned>(p.size()), LIBSSH2_FXF_READ, 0,
                                                LIBSSH2_SFTP_OPENFILE);
  if (h == nullptr) {
    return std::unexpected(sftp_error("open " + path));
  }
  libssh2_sftp_seek64(h, offset);
  std::vector<char> buf(k_read_chunk);
  std::uint64_t total = 0;
  Result<std::uint64_t> out = total;
  while (true) {
    const auto n = libssh2_sftp_read(h, buf.data(), buf.size());
    if (n == 0) {
      break;
    }
    if (n < 0) {
      out = std::unexpected(sftp_error("read " + path));
      break;
    }
    if (auto r = sink(buf.data(), static_cast<std::size_t>(n)); !r) {
      out = std::unexpected(r.error());
      break;
    }
    total += static_cast<std::uint64_t>(n);
  }
  libssh2_sftp_close_handle(h);
  if (out) {
    out = total;
  }
  return out;
}

Result<void> LibsshSession::ensure_sftp()
{
  if (m_sftp == nullptr) {
    libssh2_session_set_blocking(m_session, 1);
    m_sftp = libssh2_sftp_init(m_session);
    if (m_sftp == nullptr) {
      return std::unexpected(session_error(m_session, to_string(m_target), "start SFTP"));
    }
  }
  return {};
}

Error LibsshSession::sftp_error(const std::string& what) const
{
  if (m_sftp != nullptr && libssh2_session_last_errno(m_session) == LIBSSH2_ERROR_SFTP_PROTOCOL) {
    const auto code = libssh2_sftp_last_error(m_sftp);
    if (code == LIBSSH2_FX_NO_SUCH_FILE || code == LIBSSH2_FX_NO_SUCH_PATH) {
      return Error{Errc::not_found, what + " on " + to_string(m_target) + ": no such file; it was removed on the server"};
    }
    if (code == LIBSSH2_FX_PERMISSION_DENIED) {
      return Error{Errc::unauthorized, what + " on " + to_string(m_target) + ": permission denied; check the file's mode"};
    }
  }
  return session_error(m_session, to_string(m_target), what);
}

Result<std::vector<RemoteEntry>> LibsshSession::list_tree_sftp(const std::string& root)
{
  TRY(ensure_sftp());
  std::vector<RemoteEntry> out;
  std::vector<std::string> dirs{""};
  const std::string base = sftp_path(root);
  while (!dirs.empty()) {
    const std::string rel = dirs.back();
    dirs.pop_back();
    const std::string full = rel.empty() ? base : base + "/" + rel;
    LIBSSH2_SFTP_HANDLE* h = libssh2_sftp_open_ex(m_sftp, full.c_str(), static_cast<unsigned>(full.size()), 0, 0, LIBSSH2_SFTP_OPENDIR);
    if (h == nullptr) {
      if (rel.empty()) {
        return std::unexpected(sftp_error("list " + root));
      }
      continue;
    }
    std::vector<char> name(4096);
    while (true) {
      LIBSSH2_SFTP_ATTRIBUTES a{};
      const int n = libssh2_sftp_readdir_ex(h, name.data(), name.size(), nullptr, 0, &a);
      if (n <= 0) {
        break;
      }
      const std::string entry(name.data(), static_cast<std::size_t>(n));
      if (entry == "." || entry == "..") {
        continue;
      }
      RemoteEntry e = from_attrs(a);
      e.path = rel.empty() ? entry : rel + "/" + entry;
      if (e.kind == EntryKind::symlink) {
        const std::string lp = full + "/" + entry;
        const int m = libssh2_sftp_symlink_ex(m_sftp, lp.c_str(), static_cast<unsigned>(lp.size()), name.data(),
                                              static_cast<unsigned>(name.size()), LIBSSH2_SFTP_READLINK);
        e.link_target = m > 0 ? std::string(name.data(), static_cast<std::size_t>(m)) : std::string{};
      }
      if (e.kind == EntryKind::directory) {
        dirs.push_back(e.path);
      }
      out.push_back(std::move(e));
    }
    libssh2_sftp_close_handle(h);
  }
  return out;
}

}  // namespace gpurent::ssh_detail
