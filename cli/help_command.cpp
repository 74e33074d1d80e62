// SPDX-License-Identifier: MIT
// `gpurent help [COMMAND...]`, `gpurent completion bash|zsh|fish` and `gpurent man`: built from
// the CLI11 definitions of every command (only when asked: start-up builds one command).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <ostream>

#include "cli/app.hpp"
#include "cli/build_info.hpp"
#include "cli/commands.hpp"
#include "cli/completion.hpp"
#include "cli/help_format.hpp"
#include "cli/man_page.hpp"
#include "cli/parse_errors.hpp"
#include "cli/services.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
namespace {

void print_document(Services& s, std::string_view key, const std::string& text)
{
  if (s.global.json) {
    s.out << nlohmann::json{{key, text}}.dump(2) << '\n';
  } else {
    s.out << text;
  }
}

std::vector<std::string> subcommand_names(const CLI::App& app)
{
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out.push_back(sub->get_name());
  }
  return out;
}

Result<std::string> help_text(Services& s, const std::vector<std::string>& words)
{
  CLI::App full;
  configure_app(full, s);
  if (words.empty()) {
    add_all_commands(full, s);
    return full.help();
  }
  if (!add_command(full, s, words.front())) {
    std::vector<std::string> all;
    for (const auto n : command_names()) {
      all.emplace_back(n);
    }
    const std::string near = closest_word(words.front(), all);
    return fail(Errc::usage, "help: no command '" + words.front() + "'" + (near.empty() ? "" : " (did you mean `" + near + "`?)") +
                                 "; `gpurent help` lists the commands");
  }
  CLI::App* at = full.get_subcommand(words.front());
  std::string prefix = "gpurent";
  for (std::size_t i = 1; i < words.size(); ++i) {
    CLI::App* next = find_subcommand(*at, words[i]);
    if (next == nullptr) {
      const std::string near = closest_word(words[i], subcommand_names(*at));
      return fail(Errc::usage, "help: `gpurent " + command_path(*at) + "` has no subcommand '" + words[i] + "'" +
                                   (near.empty() ? "" : " (did you mean `" + near + "`?)") + "; see `gpurent help " +
                                   command_path(*at) + "`");
    }
    prefix += " " + at->get_name();
    at = next;
  }
  return at->help(prefix);
}

CommandSpec every_command(Services& s)
{
  CLI::App full;
  configure_app(full, s);
  add_all_commands(full, s);
  return describe_app(full);
}

}  // namespace

void add_help_command(CLI::App& app, Services& s)
{
  auto words = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand("help", "show a command's help: what it does, its options and examples");
  sub->add_option("command", *words, "the command, and its subcommand (e.g. plan, config set)");
  sub->callback([&s, words] {
    auto text = help_text(s, *words);
    if (!text) {
      s.exit_code = report_error(s, text.error());
      return;
    }
    print_document(s, "help", *text);
  });
}

namespace {

void print_server_names(Services& s)
{
  const auto dir = state_dir([&](const std::string& k) { return s.getenv(k); });
  std::error_code ec;
  if (!dir || !std::filesystem::exists(*dir / "state.db", ec)) {
    return;
  }
  auto store = s.state();
  if (!store) {
    return;
  }
  auto servers = (*store)->list_servers(false);
  if (!servers) {
    return;
  }
  for (const auto& r : *servers) {
    // A name a shell would split or glob is left out rather than offered wrong.
    if (r.name.find_first_of(" \t\n*?[]'\"\\$`") == std::string::npos) {
      s.out << r.name << '\n';
    }
  }
}

}  // namespace

void add_completion_command(CLI::App& app, Services& s)
{
  auto shell = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("completion", "print a shell completion script (bash, zsh or fish)");
  sub->add_option("shell", *shell, "bash, zsh or fish (servers: the tracked servers' names, which the scripts read)")->required();
  sub->callback([&s, shell] {
    std::string script;
    if (*shell == "bash") {
      script = bash_completion(every_command(s));
    } else if (*shell == "zsh") {
      script = zsh_completion(every_command(s));
    } else if (*shell == "fish") {
      script = fish_completion(every_command(s));
    } else if (*shell == "servers") {
      // For the scripts above: the open tracked servers, one name a line; nothing (and no
      // database created) where gpurent has no state yet, and never an error on stderr.
      print_server_names(s);
      return;
    } else {
      s.exit_code = report_error(s, Error{Errc::usage, "completion: no script for the shell '" + shell->substr(0, 40) +
                                                           "'; give bash, zsh or fish"});
      return;
    }
    print_document(s, "script", script);
  });
}

void add_man_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("man", "print the manual page gpurent(1) in roff (installed by cmake --install)");
  sub->callback([&s] {
    const BuildInfo b = build_info();
    print_document(s, "man", man_page(every_command(s), b.version, b.date));
  });
}

}  // namespace gpurent
