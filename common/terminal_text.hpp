// SPDX-License-Identifier: MIT
#pragma once
// Text that came from elsewhere (a provider's or the Hub's answer, a server's stderr) made safe to
// print on a terminal: control characters are written out as escapes, so an answer cannot move
// the cursor, recolour, retitle or clear the user's terminal. Pure.
#include <string>
#include <string_view>

namespace gpurent {

// C0 controls (ESC, CR, BEL, …; newline and tab too unless `keep_newline_tab`) and DEL as \xNN,
// C1 controls (U+0080..U+009F) as \u00NN, and bytes that are not UTF-8 as \xNN; the rest as is.
[[nodiscard]] std::string escape_controls(std::string_view text, bool keep_newline_tab = true);

}  // namespace gpurent
