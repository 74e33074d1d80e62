// SPDX-License-Identifier: MIT
#include "cli/app.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <ostream>

#include "cli/commands.hpp"
#include "cli/services.hpp"

namespace gpurent {

int run_app(const std::vector<std::string>& args, Services& s)
{
  CLI::App app{"gpurent: size GPU jobs, model the bill, rent, back up and release GPU servers", "gpurent"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", "gpurent 0.1.0");
  app.add_flag("--json", s.global.json, "print exactly one JSON document on stdout");
  app.add_flag("--no-color", s.global.no_color, "never colour the output");
  app.add_flag("-y,--yes", s.global.yes, "skip confirmations");
  app.add_flag("-v,--verbose", s.global.verbose, "log more on stderr (never secrets)");

  // The first word that is not an option names the command; only that one is built. Without
  // one (`gpurent --help`, `gpurent --version`), all are, so the help lists them.
  const auto first = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.empty() || a[0] != '-'; });
  if (first == args.end()) {
    add_all_commands(app, s);
  } else if (!add_command(app, s, *first)) {
    // An unknown first word is a mistyped command: name it instead of CLI11's "subcommand required".
    std::string names;
    for (const auto name : command_names()) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    return report_error(s, Error{Errc::usage, "unknown command '" + *first + "'; commands: " + names});
  }

  // CLI11 wants argv in reverse order when given a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    s.out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    s.out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    s.out << e.what() << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    return report_error(s, Error{Errc::usage, what + "; see `gpurent --help`"});
  }
  return s.exit_code;
}

}  // namespace gpurent
