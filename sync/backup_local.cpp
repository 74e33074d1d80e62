// SPDX-License-Identifier: MIT
// The local side of a backup (sync/backup_detail.hpp): directories and symlinks under dest,
// partial files to resume, and publishing a verified copy with an atomic rename.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "sync/backup_detail.hpp"
#include "sync/range_plan.hpp"

namespace gpurent::backup_detail {

bool is_disk_full(int e)
{
  return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

Error disk_error(const std::filesystem::path& p, int e)
{
  if (is_disk_full(e)) {
    return Error{Errc::internal, "writing " + p.string() + ": the local disk is full (" + std::strerror(e) +
                                    "); free space and re-run: the previous copy and manifest are unchanged, and the copy resumes"};
  }
  return Error{Errc::internal, "writing " + p.string() + ": " + std::strerror(e) + "; check the destination directory"};
}

bool parents_are_dirs(const std::filesystem::path& dest, const std::string& rel)
{
  std::string prefix;
  std::size_t start = 0;
  while (true) {
    const auto slash = rel.find('/', start);
    if (slash == std::string::npos) {
      return true;
    }
    prefix = rel.substr(0, slash);
    struct stat st {};
    if (::lstat((dest / prefix).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return false;
    }
    start = slash + 1;
  }
}

Result<void> ensure_dir(const std::filesystem::path& dest, const std::string& rel)
{
  const auto p = dest / rel;
  if (!parents_are_dirs(dest, rel)) {
    return fail(Errc::refused, "a parent of " + rel + " is not a directory locally; not written");
  }
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return {};
    }
    if (::unlink(p.c_str()) != 0) {  // a file or link where the server now has a directory
      return fail(Errc::internal, "cannot replace " + p.string() + " by a directory: " + std::strerror(errno));
    }
  }
  if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::unexpected(disk_error(p, errno));
  }
  return {};
}

Result<void> make_symlink(const std::filesystem::path& dest, const RemoteEntry& e)
{
  if (!parents_are_dirs(dest, e.path)) {
    return fail(Errc::refused, "a parent is not a directory locally; not written");
  }
  const auto p = dest / e.path;
  struct stat st {};
  if (::lstat(p.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      if (std::filesystem::read_symlink(p, ec).string() == e.link_target && !ec) {
        return {};
      }
    } else if (S_ISDIR(st.st_mode)) {
      return fail(Errc::refused, "a local directory is in the way; not replaced");
    }
  }
  const auto tmp = p.string() + std::string(k_partial_suffix);
  ::unlink(tmp.c_str());
  if (::symlink(e.link_target.c_str(), tmp.c_str()) != 0 || ::rename(tmp.c_str(), p.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return std::unexpected(disk_error(p, err));
  }
  return {};
}

Result<std::string> hash_prefix(int fd, std::uint64_t size, Sha256& h)
{
  std::vector<char> buf(1 << 20);
  std::uint64_t left = size;
  while (left > 0) {
    const auto n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size())));
    if (n <= 0) {
      return fail(Errc::internal, "cannot read back a partial file: " + std::string(n == 0 ? "short" : std::strerror(errno)));
    }
    h.update(buf.data(), static_cast<std::size_t>(n));
    left -= static_cast<std::uint64_t>(n);
  }
  return std::string{};
}

std::uint64_t resumable_bytes(const std::filesystem::path& dest, const RemoteEntry& e)
{
  const std::string partial = (dest / e.path).string() + std::string(k_partial_suffix);
  struct stat st {};
  if (::lstat(partial.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > e.size) {
    return 0;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

std::string ledger_path_of(const std::string& partial)
{
  return partial + std::string(k_range_ledger_suffix);
}

Result<void> publish(const std::filesystem::path& dest, const RemoteEntry& e)
{
  const auto final_path = dest / e.path;
  const std::string partial = final_path.string() + std::string(k_partial_suffix);
  ::chmod(partial.c_str(), e.mode & 07777);
  const timespec times[2] = {{e.mtime_ns / 1'000'000'000LL, e.mtime_ns % 1'000'000'000LL},
                             {e.mtime_ns / 1'000'000'000LL, e.mtime_ns % 1'000'000'000LL}};
  ::utimensat(AT_FDCWD, partial.c_str(), times, AT_SYMLINK_NOFOLLOW);
  if (::rename(partial.c_str(), final_path.c_str()) != 0) {
    return fail(Errc::internal, "cannot rename into place: " + std::string(std::strerror(errno)));
  }
  ::unlink(ledger_path_of(partial).c_str());
  return {};
}

}  // namespace gpurent::backup_detail
