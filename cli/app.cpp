// SPDX-License-Identifier: MIT
#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

#include "cli/build_info.hpp"
#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/errors.hpp"
#include "cli/help_format.hpp"
#include "cli/parse_errors.hpp"
#include "cli/services.hpp"
#include "sizing/model_catalog.hpp"

namespace gpurent {
namespace {

constexpr std::string_view k_global_flags[] = {"--json", "--no-color", "-y", "--yes", "-v", "--verbose", "--insecure-http"};

bool is_global_flag(std::string_view a)
{
  return std::find(std::begin(k_global_flags), std::end(k_global_flags), a) != std::end(k_global_flags);
}

std::string app_joined(const std::vector<std::string>& words)
{
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : ", ") + w;
  }
  return out;
}

std::vector<std::string> app_command_list()
{
  std::vector<std::string> out;
  for (const auto n : command_names()) {
    out.emplace_back(n);
  }
  return out;
}

// The command path the words name: "config set" for `config --json set KEY V`.
std::string named_path(CLI::App& app, const std::string& first, const std::vector<std::string>& args)
{
  CLI::App* sub = find_subcommand(app, first);
  if (sub == nullptr) {
    return first;
  }
  const auto at = std::find(args.begin(), args.end(), first);
  for (auto it = at + 1; it != args.end() && *it != "--"; ++it) {
    if (!it->empty() && (*it)[0] != '-') {
      CLI::App* nested = find_subcommand(*sub, *it);
      return nested != nullptr ? first + " " + *it : first;
    }
  }
  return first;
}

// The deepest subcommand the parser entered.
CLI::App* parsed_command(CLI::App& app)
{
  CLI::App* at = &app;
  while (true) {
    const auto subs = at->get_subcommands();
    if (subs.empty()) {
      return at;
    }
    at = subs.front();
  }
}

// CLI11 names some errors after the app that threw them, so the kind comes from the type.
std::string error_kind(const CLI::ParseError& e)
{
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    return "ExtrasError";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    return "RequiredError";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    return "ArgumentMismatch";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    return "ConversionError";
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    return "ValidationError";
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&e) != nullptr) {
    return "ExcludesError";
  }
  if (dynamic_cast<const CLI::RequiresError*>(&e) != nullptr) {
    return "RequiresError";
  }
  return e.get_name();
}

ParseFailure describe_failure(const CLI::ParseError& e, CLI::App& command, const std::vector<std::string>& args)
{
  ParseFailure f;
  f.kind = error_kind(e);
  f.what = e.what();
  f.command = command_path(command);
  // The command's own options, then the global ones (of the apps above it).
  for (const CLI::App* a = &command; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* opt : a->get_options()) {
      for (const auto& l : opt->get_lnames()) {
        f.options.push_back("--" + l);
        f.value_types.emplace("--" + l, opt->get_expected_max() == 0 ? "" : opt->get_type_name());
      }
      for (const auto& s : opt->get_snames()) {
        f.options.push_back("-" + s);
      }
      if (opt->get_positional()) {
        f.value_types.emplace(opt->get_name(true, false), opt->get_type_name());
      }
    }
  }
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; })) {
    f.subcommands.push_back(sub->get_name());
  }
  const auto examples = command_examples(f.command);
  f.example = examples.empty() ? "" : std::string(examples.front());
  if (!f.subcommands.empty()) {
    // `config bogus`: the word after the command that names none of its subcommands.
    const auto at = std::find(args.begin(), args.end(), command.get_name());
    const auto word = std::find_if(at == args.end() ? at : at + 1, args.end(), [](const std::string& a) { return !a.starts_with("-"); });
    if (word != args.end() && *word != "--") {
      f.stray_word = *word;
    }
  }
  return f;
}

int print_help(Services& s, const std::string& text)
{
  if (s.global.json) {
    s.out << nlohmann::json{{"help", text}}.dump(2) << '\n';
  } else {
    s.out << text;
  }
  return 0;
}

int run_parsed(const std::vector<std::string>& args, Services& s)
{
  CLI::App app;
  configure_app(app, s);

  // The first word that is not an option names the command; only that one is built. Without
  // one (`gpurent --help`, `gpurent --version`), all are, so the help lists them.
  const auto first = std::find_if(args.begin(), args.end(), [](const std::string& a) { return a.empty() || a[0] != '-'; });
  if (first == args.end()) {
    const auto unknown = std::find_if(args.begin(), args.end(), [](const std::string& a) {
      return !is_global_flag(a) && a != "--help" && a != "-h" && a != "--help-all" && a != "--version";
    });
    if (unknown != args.end()) {
      const std::string near = closest_word(*unknown, {"--json", "--no-color", "--yes", "--verbose", "--insecure-http", "--help", "--version"});
      return report_error(s, Error{Errc::usage, "`gpurent` has no option " + *unknown +
                                                    (near.empty() ? "" : " (did you mean " + near + "?)") +
                                                    "; give a command first, e.g. `gpurent plan --help`"});
    }
    if (args.empty() || std::all_of(args.begin(), args.end(), is_global_flag)) {
      return report_error(s, Error{Errc::usage, "no command given; commands: " + app_joined(app_command_list()) +
                                                    "; `gpurent --help` says what each does"});
    }
    add_all_commands(app, s);
  } else if (!add_command(app, s, *first)) {
    // An unknown first word is a mistyped command: name it instead of CLI11's "subcommand required".
    const std::string near = closest_word(*first, app_command_list());
    return report_error(s, Error{Errc::usage, "unknown command '" + *first + "'; commands: " + app_joined(app_command_list()) +
                                                  (near.empty() ? "" : " (did you mean `" + near + "`?)")});
  } else {
    s.command = named_path(app, *first, args);
  }

  // Card and model names resolve while the command parses: the user's [cards.<id>] and
  // [models.<name>] join the catalogues first.
  auto user_tables = config_catalogues(s);
  if (!user_tables) {
    install_user_cards({});
    install_user_models({});
    return report_error(s, user_tables.error());
  }
  install_user_cards(std::move(user_tables->cards));
  install_user_models(std::move(user_tables->models));

  // CLI11 wants argv in reverse order when given a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return print_help(s, app.help());
  } catch (const CLI::CallForAllHelp&) {
    return print_help(s, app.help("", CLI::AppFormatMode::All));
  } catch (const CLI::CallForVersion&) {
    if (s.global.json) {
      const BuildInfo b = build_info();
      s.out << nlohmann::json{{"version", b.version}, {"commit", b.commit}, {"built", b.date}}.dump(2) << '\n';
    } else {
      s.out << version_line() << '\n';
    }
    return 0;
  } catch (const CLI::ParseError& e) {
    return report_error(s, parse_failure_error(describe_failure(e, *parsed_command(app), args)));
  }
  return s.exit_code;
}

}  // namespace

std::string version_line()
{
  const BuildInfo b = build_info();
  return "gpurent " + std::string(b.version) + " (commit " + std::string(b.commit) + ", built " + std::string(b.date) + ")";
}

void configure_app(CLI::App& app, Services& s)
{
  app.name("gpurent");
  app.description("gpurent: size GPU jobs, model the bill, rent, back up and release GPU servers");
  use_gpurent_help(app);
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", "gpurent", "print the version, the commit and the build date");
  app.add_flag("--json", s.global.json, "print exactly one JSON document on stdout (errors too)");
  app.add_flag("--no-color", s.global.no_color, "never colour the output");
  app.add_flag("-y,--yes", s.global.yes, "skip confirmations");
  app.add_flag("-v,--verbose", s.global.verbose, "log more on stderr (never secrets)");
  app.add_flag("--insecure-http", s.global.insecure_http,
               "send API keys and the Hub token over plain http:// to another machine too (warns each time)");
}

int run_app(const std::vector<std::string>& args, Services& s)
{
  if (wants_json(args)) {
    s.global.json = true;
  }
  int code = 1;
  {
    JsonStdout capture(s);
    code = run_parsed(args, s);
  }
  finish_json_output(s);
  return code;
}

}  // namespace gpurent
