// SPDX-License-Identifier: MIT
#pragma once
// Replacing a small local file so that a reader sees the old text or the new, never half of one.
#include <string>

#include "common/result.hpp"

namespace gpurent {

// Writes `text` to PATH.gpurent-tmp (created with `mode`, O_EXCL|O_NOFOLLOW, then fchmod'ed to
// `mode` so the umask cannot narrow it below what was asked nor anything widen it), fsyncs it and
// renames it over `path`. On any failure the temporary file is removed and `path` is unchanged;
// the error (Errc::internal) names the file and ends with "; nothing was changed".
[[nodiscard]] Result<void> write_file_atomically(const std::string& path, const std::string& text, unsigned mode);

}  // namespace gpurent
