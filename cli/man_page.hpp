// SPDX-License-Identifier: MIT
#pragma once
// The manual page, gpurent(1), in roff (man(7) macros), generated from the same command
// description as help and completion, plus the config key table and the exit codes.
#include <string>
#include <string_view>

#include "cli/command_spec.hpp"

namespace gpurent {

// `version` and `date` ("2026-01-31") go into the .TH line.
[[nodiscard]] std::string man_page(const CommandSpec& app, std::string_view version, std::string_view date);

}  // namespace gpurent
