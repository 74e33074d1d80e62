// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent --version` reports. Defined in build_info.cpp, which the build writes into the
// build directory (cmake/BuildInfo.cmake) and rewrites only when the commit or the date changes,
// so that nothing else is rebuilt and ccache keeps hitting.
#include <string_view>

namespace gpurent {

struct BuildInfo {
  std::string_view version;  // the project version, "0.1.0"
  std::string_view commit;   // "1a2b3c4d5e6f", "1a2b3c4d5e6f-dirty", or "unknown" without git
  std::string_view date;     // build day, UTC ("2026-01-31"); SOURCE_DATE_EPOCH when set
};

[[nodiscard]] BuildInfo build_info() noexcept;

}  // namespace gpurent
