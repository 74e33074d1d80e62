// SPDX-License-Identifier: MIT
#include "cli/help_format.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <sstream>

#include "cli/command_table.hpp"
#include "cli/price_lookup.hpp"

namespace gpurent {
namespace {

constexpr std::size_t k_name_column = 30;
constexpr std::size_t k_command_column = 14;  // the list of commands: short names

std::string help_upper(std::string s)
{
  for (char& c : s) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

// Wraps each paragraph of `text` to `width` columns (continuation lines without indent: CLI11
// indents them to the description column).
std::string help_wrap(const std::string& text, std::size_t width)
{
  std::string out;
  std::istringstream in(text);
  std::string paragraph;
  while (std::getline(in, paragraph)) {
    out += (out.empty() ? "" : "\n") + wrap_text(paragraph, width, "");
  }
  return out;
}

bool option_takes_value(const CLI::Option* opt) { return opt->get_expected_max() != 0; }

class HelpFormatter final : public CLI::Formatter {
public:
  HelpFormatter() { column_width(k_name_column); }

  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override
  {
    return is_positional ? help_upper(opt->get_name(true, false)) : opt->get_name(false, true);
  }
  std::string make_option_opts(const CLI::Option* opt) const override
  {
    if (!option_takes_value(opt) || opt->get_positional()) {
      return opt->get_positional() && opt->get_required() ? " (required)" : "";
    }
    std::string out = " " + option_metavar(opt->get_lnames().empty() ? opt->get_name() : "--" + opt->get_lnames().front());
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) {
      out += " ...";
    }
    return out + (opt->get_required() ? " (required)" : "");
  }
  std::string make_option_desc(const CLI::Option* opt) const override
  {
    return help_wrap(opt->get_description(), k_help_width - k_name_column);
  }
  std::string make_subcommand(const CLI::App* sub) const override
  {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(), help_wrap(sub->get_description(), k_help_width - k_command_column),
                             k_command_column);
    return out.str();
  }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override
  {
    std::string text = CLI::Formatter::make_help(app, std::move(name), mode);
    const auto replace = [&](std::string_view from, std::string_view to) {
      if (const auto at = text.find(from); at != std::string::npos) {
        text.replace(at, from.size(), to);
      }
    };
    replace("\nSubcommands:\n", app->get_parent() == nullptr ? "\nCommands:\n" : "\nSubcommands:\n");
    if (app->get_parent() == nullptr) {
      replace("[OPTIONS] SUBCOMMAND", "[OPTIONS] COMMAND [ARGS]");
    }
    return text;
  }
  std::string make_description(const CLI::App* app) const override
  {
    const std::string d = app->get_description();
    return d.empty() ? std::string() : help_wrap(d, k_help_width) + "\n";
  }
  std::string make_footer(const CLI::App* app) const override
  {
    const std::string path = command_path(*app);
    std::string out;
    if (path.empty()) {
      out += help_wrap("Run `gpurent help COMMAND` (or `gpurent COMMAND --help`) for a command's options and examples, "
                  "and `man gpurent` for the whole manual.",
                  k_help_width) +
             "\n";
    } else {
      out += "Global options, anywhere on the line: --json, --no-color, -y/--yes, -v/--verbose, --insecure-http\n";
    }
    const auto examples = command_examples(path);
    if (!examples.empty()) {
      out += "\nExamples:\n";
      for (const auto e : examples) {
        out += "  " + std::string(e) + "\n";
      }
    }
    return out;
  }
};

OptionSpec describe_option(const CLI::Option* opt)
{
  OptionSpec o;
  o.positional = opt->get_positional();
  if (o.positional) {
    o.names.push_back(opt->get_name(true, false));
  } else {
    for (const auto& l : opt->get_lnames()) {
      o.names.push_back("--" + l);
    }
    for (const auto& s : opt->get_snames()) {
      o.names.push_back("-" + s);
    }
  }
  o.takes_value = option_takes_value(opt);
  o.repeatable = opt->get_expected_max() == CLI::detail::expected_max_vector_size;
  o.required = opt->get_required();
  o.metavar = o.positional ? help_upper(o.names.front()) : (o.takes_value ? option_metavar(o.names.front()) : std::string());
  o.description = opt->get_description();
  return o;
}

}  // namespace

void use_gpurent_help(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>()); }

CLI::App* find_subcommand(CLI::App& app, const std::string& name)
{
  const auto subs = app.get_subcommands([&](const CLI::App* sub) { return sub->get_name() == name; });
  return subs.empty() ? nullptr : subs.front();
}

std::string command_path(const CLI::App& app)
{
  std::string path;
  for (const CLI::App* a = &app; a != nullptr && a->get_parent() != nullptr; a = a->get_parent()) {
    path = a->get_name() + (path.empty() ? "" : " " + path);
  }
  return path;
}

CommandSpec describe_app(const CLI::App& app)
{
  CommandSpec c;
  c.path = command_path(app);
  c.name = c.path.empty() ? "gpurent" : app.get_name();
  c.description = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt != app.get_help_ptr() && opt != app.get_help_all_ptr()) {
      c.options.push_back(describe_option(opt));
    }
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    c.subcommands.push_back(describe_app(*sub));
  }
  for (const auto e : command_examples(c.path)) {
    c.examples.emplace_back(e);
  }
  return c;
}

std::size_t widest_line(const std::string& text)
{
  std::size_t widest = 0;
  std::size_t col = 0;
  for (const char ch : text) {
    if (ch == '\n') {
      widest = std::max(widest, col);
      col = 0;
    } else if ((static_cast<unsigned char>(ch) & 0xC0U) != 0x80U) {
      ++col;
    }
  }
  return std::max(widest, col);
}

}  // namespace gpurent
