// SPDX-License-Identifier: MIT
#include "providers/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpurent {

Result<void> write_file_atomically(const std::string& path, const std::string& text, unsigned mode)
{
  const std::string tmp = path + ".gpurent-tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    return fail(Errc::internal, "cannot write " + tmp + ": " + std::strerror(errno) +
                                    "; check the directory's permissions; nothing was changed");
  }
  ::fchmod(fd, mode);
  std::size_t done = 0;
  while (done < text.size()) {
    const auto w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) {
      continue;
    }
    if (w < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(Errc::internal, "cannot write " + tmp + ": " + why + "; nothing was changed");
    }
    done += static_cast<std::size_t>(w);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return fail(Errc::internal, "cannot replace " + path + ": " + why + "; nothing was changed");
  }
  return {};
}

}  // namespace gpurent
