// SPDX-License-Identifier: MIT
#pragma once
// Tar archives for tests, written by gpurent's own TarStreamWriter (libarchive, sync/tar_stream.hpp):
// whole archives padded to GNU tar's record size, as `tar -cf -` and push send them.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sync/tar_stream.hpp"

namespace gpurent::testing {

inline std::string tar_archive(const std::vector<std::pair<TarMember, std::string>>& members)
{
  const auto writer = tar_engine().make_writer();
  std::string out;
  const auto check = [](const Result<void>& r) {
    if (!r) {
      throw std::runtime_error(r.error().message);
    }
  };
  for (const auto& [m, data] : members) {
    check(writer->begin_member(m, out));
    check(writer->member_data(data.data(), data.size()));
    out += data;
    check(writer->end_member(out));
  }
  check(writer->finish(out));
  return out;
}

// Regular files only (mode 0644, time 0).
inline std::string make_tar(const std::vector<std::pair<std::string, std::string>>& files)
{
  std::vector<std::pair<TarMember, std::string>> members;
  for (const auto& [name, data] : files) {
    members.emplace_back(TarMember{name, EntryKind::file, data.size(), 0, 0644, {}}, data);
  }
  return tar_archive(members);
}

}  // namespace gpurent::testing
