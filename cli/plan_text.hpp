// SPDX-License-Identifier: MIT
#pragma once
// The text view of `gpurent plan`: summary line, memory bar chart against the card, the choice,
// the alternatives, the fixes and the launch line, within 80 columns.
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan_report.hpp"

namespace gpurent {

// `utf8`: block bars; otherwise plain ASCII ('#', '.') for a non-UTF-8 locale.
[[nodiscard]] std::string render_plan_text(const PlanReport& report, bool color, bool utf8 = true);

// Helpers shared with `gpurent fits`.
// Word-wraps `text` to `width` columns: the first line starts with `first`, the rest with `rest`.
[[nodiscard]] std::vector<std::string> wrap_words(std::string_view text, std::size_t width, std::string_view first,
                                                  std::string_view rest);
// "1 h", "1.5 h", "0.25 h", "36 h": seconds as hours, at most two decimals.
[[nodiscard]] std::string hours_label(std::chrono::seconds runtime);
// Columns a UTF-8 string takes (one per code point).
[[nodiscard]] std::size_t display_width(std::string_view s) noexcept;

}  // namespace gpurent
