// SPDX-License-Identifier: MIT
#include "sync/transport.hpp"

namespace gpurent {

std::string to_string(const SshTarget& t)
{
  const bool v6 = t.host.find(':') != std::string::npos;
  std::string out = t.user.empty() ? "" : t.user + "@";
  out += v6 ? "[" + t.host + "]" : t.host;
  if (t.port != 22) {
    out += ":" + std::to_string(t.port);
  }
  return out;
}

}  // namespace gpurent
