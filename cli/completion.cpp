// SPDX-License-Identifier: MIT
#include "cli/completion.hpp"

#include <map>
#include <vector>

#include "cli/command_table.hpp"
#include "cli/completion_detail.hpp"

namespace gpurent {
namespace completion_detail {
namespace {

// Every command below the top, depth first ("plan", "config", "config show", …).
void collect(const CommandSpec& c, std::vector<const CommandSpec*>& out)
{
  for (const auto& sub : c.subcommands) {
    out.push_back(&sub);
    collect(sub, out);
  }
}

}  // namespace

std::vector<const CommandSpec*> all_commands(const CommandSpec& app)
{
  std::vector<const CommandSpec*> out{&app};
  collect(app, out);
  return out;
}

std::string join(const std::vector<std::string>& words, std::string_view sep)
{
  std::string out;
  for (const auto& w : words) {
    out += (out.empty() ? "" : std::string(sep)) + w;
  }
  return out;
}

std::vector<std::string> subcommand_names(const CommandSpec& c)
{
  std::vector<std::string> out;
  for (const auto& s : c.subcommands) {
    out.push_back(s.name);
  }
  return out;
}

std::vector<const OptionSpec*> positionals(const CommandSpec& c)
{
  std::vector<const OptionSpec*> out;
  for (const auto& o : c.options) {
    if (o.positional) {
      out.push_back(&o);
    }
  }
  return out;
}

// One line: completion descriptions are short.
std::string first_sentence(const std::string& text)
{
  std::string out = text.substr(0, text.find('\n'));
  if (out.size() > 90) {
    out.resize(87);  // not substr() + "...": GCC 12 warns falsely about that (cmake/Warnings.cmake)
    out += "...";
  }
  return out;
}

}  // namespace completion_detail

// ---------------------------------------------------------------- bash

namespace {

using completion_detail::all_commands;
using completion_detail::join;
using completion_detail::positionals;
using completion_detail::subcommand_names;

// Words in a single-quoted shell string.
std::string single_quoted(std::string_view text)
{
  std::string out = "'";
  for (const char ch : text) {
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  }
  return out + "'";
}

std::string bash_value_case(const std::vector<const CommandSpec*>& commands, std::map<std::string, std::string>& sets)
{
  std::string out;
  for (const CommandSpec* c : commands) {
    for (const auto& o : c->options) {
      if (!o.takes_value && !o.positional) {
        continue;
      }
      const ValueSet v = option_values(c->path, o.names.front());
      std::string action;
      if (v.kind == ValueKind::word) {
        const std::string list = join(v.words);
        auto [it, added] = sets.emplace(list, "_gpurent_values_" + std::to_string(sets.size()));
        action = "COMPREPLY=($(compgen -W \"$" + it->second + "\" -- \"$3\"))";
      } else if (v.kind == ValueKind::file) {
        action = "COMPREPLY=($(compgen -f -- \"$3\"))";
      } else if (v.kind == ValueKind::directory) {
        action = "COMPREPLY=($(compgen -d -- \"$3\"))";
      } else if (v.kind == ValueKind::server) {
        // The first positional word only (backup, logs and push take more after NAME).
        action = "[[ $4 == 0 ]] && COMPREPLY=($(compgen -W \"$(gpurent completion servers 2>/dev/null)\" -- \"$3\"))";
      } else {
        continue;
      }
      std::string patterns;
      for (const auto& n : o.names) {
        patterns += (patterns.empty() ? "" : "|") + ("\"" + c->path + ":" + n + "\"");
      }
      out += "        " + patterns + ") " + action + " ;;\n";
    }
  }
  return out;
}

}  // namespace

std::string bash_completion(const CommandSpec& app)
{
  const auto commands = all_commands(app);
  std::string takes_value;
  std::string options;
  std::string subcommands;
  std::string positional;
  for (const CommandSpec* c : commands) {
    std::vector<std::string> names{"--help"};
    std::string valued;
    for (const auto& o : c->options) {
      if (o.positional) {
        continue;
      }
      for (const auto& n : o.names) {
        names.push_back(n);
        if (o.takes_value) {
          valued += (valued.empty() ? "" : "|") + ("\"" + c->path + ":" + n + "\"");
        }
      }
    }
    if (!c->path.empty()) {
      names.insert(names.end(), {"--json", "--no-color", "--yes", "--verbose", "--insecure-http"});
    }
    if (!valued.empty()) {
      takes_value += "        " + valued + ") return 0 ;;\n";
    }
    options += "        \"" + c->path + "\") echo " + single_quoted(join(names)) + " ;;\n";
    if (!c->subcommands.empty()) {
      subcommands += "        \"" + c->path + "\") echo " + single_quoted(join(subcommand_names(*c))) + " ;;\n";
    }
    const auto pos = positionals(*c);
    for (std::size_t i = 0; i < pos.size(); ++i) {
      positional += "        \"" + c->path + ":" + std::to_string(i) + "\") echo " + pos[i]->names.front() + " ;;\n";
    }
    if (!pos.empty() && pos.back()->repeatable) {
      positional += "        \"" + c->path + ":\"*) echo " + pos.back()->names.front() + " ;;\n";
    }
  }
  std::map<std::string, std::string> sets;
  const std::string values = bash_value_case(commands, sets);

  std::string out;
  out += "# bash completion for gpurent, generated by `gpurent completion bash`.\n"
         "# Install: gpurent completion bash > ~/.local/share/bash-completion/completions/gpurent\n"
         "# or add to ~/.bashrc: source <(gpurent completion bash)\n\n";
  for (const auto& [list, name] : sets) {
    out += name + "=" + single_quoted(list) + "\n";
  }
  out += "\n# _gpurent_takes_value PATH OPTION: whether OPTION of the command PATH takes a value.\n"
         "_gpurent_takes_value()\n{\n    case \"$1:$2\" in\n" +
         takes_value + "    esac\n    return 1\n}\n\n";
  out += "_gpurent_options()\n{\n    case \"$1\" in\n" + options + "    esac\n}\n\n";
  out += "_gpurent_subcommands()\n{\n    case \"$1\" in\n" + subcommands + "    esac\n}\n\n";
  out += "# _gpurent_positional PATH N: the name of the command's Nth positional argument.\n"
         "_gpurent_positional()\n{\n    case \"$1:$2\" in\n" +
         positional + "    esac\n}\n\n";
  out += "# _gpurent_value PATH NAME CUR [N]: the values of an option or of the Nth positional NAME.\n"
         "_gpurent_value()\n{\n    case \"$1:$2\" in\n" +
         values + "    esac\n}\n\n";
  out += R"BASH(_gpurent()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev="" path="" npos=0 expect=0 i w subs
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        [[ $w == "=" ]] && continue
        if ((expect)); then
            expect=0
            continue
        fi
        [[ $w == "--" ]] && return 0
        if [[ $w == -* ]]; then
            if [[ $w != *=* ]] && _gpurent_takes_value "$path" "$w"; then
                expect=1
            fi
            continue
        fi
        subs=" $(_gpurent_subcommands "$path") "
        if [[ $npos == 0 && $subs == *" $w "* ]]; then
            path=${path:+$path }$w
        else
            npos=$((npos + 1))
        fi
    done
    if ((COMP_CWORD > 0)); then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        if [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
            prev=${COMP_WORDS[COMP_CWORD - 2]}
        fi
    fi
    COMPREPLY=()
    if [[ $prev == -* ]] && _gpurent_takes_value "$path" "$prev"; then
        _gpurent_value "$path" "$prev" "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_gpurent_options "$path")" -- "$cur"))
        return 0
    fi
    subs=$(_gpurent_subcommands "$path")
    if [[ -n $subs && $npos == 0 ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return 0
    fi
    local name
    name=$(_gpurent_positional "$path" "$npos")
    if [[ -n $name ]]; then
        _gpurent_value "$path" "$name" "$cur" "$npos"
    fi
    return 0
}
complete -F _gpurent gpurent
)BASH";
  return out;
}

}  // namespace gpurent
