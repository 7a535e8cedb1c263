// Shell completion and the man page, generated from CLI11's App tree (cli_tree.hpp).
#include "cli_tree.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "roofline/core/error.hpp"
#include "roofline/core/version.hpp"
#include "roofline/report/output_file.hpp"

namespace roofline::cli {
namespace {

// CLI11 shows a listing validator's values in the type text: "TEXT:{table,json,csv}".
std::vector<std::string> choices_of(const std::string& type_text) {
  const std::size_t open = type_text.find('{');
  const std::size_t close = type_text.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  std::vector<std::string> out;
  std::string piece;
  for (const char ch : type_text.substr(open + 1, close - open - 1)) {
    if (ch == ',') {
      if (!piece.empty()) out.push_back(piece);
      piece.clear();
    } else if (ch != ' ') {
      piece += ch;
    }
  }
  if (!piece.empty()) out.push_back(piece);
  return out;
}

void describe(const CLI::App& app, const std::string& path, std::vector<CommandInfo>& out) {
  CommandInfo info{path, app.get_description(), {}, {}, {}};
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional()) {
      info.positionals.push_back(opt->get_name());
      continue;
    }
    FlagInfo flag;
    for (const std::string& s : opt->get_snames()) flag.names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) flag.names.push_back("--" + l);
    if (opt->get_type_size() != 0) {
      const std::string type = opt->get_type_name();
      flag.value = type.substr(0, type.find(':'));
      if (flag.value.empty()) flag.value = "VALUE";
      flag.choices = choices_of(type);
    }
    flag.description = opt->get_description();
    flag.required = opt->get_required();
    info.flags.push_back(std::move(flag));
  }
  std::vector<const CLI::App*> children;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name().empty()) continue;  // an option group, not a command
    info.subcommands.push_back(sub->get_name());
    children.push_back(sub);
  }
  out.push_back(std::move(info));
  for (const CLI::App* sub : children)
    describe(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string words(const std::vector<std::string>& list) {
  return fmt::format("{}", fmt::join(list, " "));
}

std::string flag_words(const CommandInfo& command) {
  std::vector<std::string> names;
  for (const FlagInfo& flag : command.flags) names.insert(names.end(), flag.names.begin(), flag.names.end());
  return words(names);
}

// "__files" for a flag whose value is free (a file, a number, a name: the shell offers files),
// its choices where it lists them, nothing for a flag that takes no value.
std::string value_words(const FlagInfo& flag) {
  if (flag.value.empty()) return "";
  return flag.choices.empty() ? "__files" : words(flag.choices);
}

// One case table in shell syntax (the same in bash and zsh): `key) action;;` per entry.
template <typename Entry>
std::string case_table(std::string_view function, std::string_view key, const std::vector<CommandInfo>& commands,
                       Entry entry) {
  std::string out = fmt::format("{}() {{\n  case \"{}\" in\n", function, key);
  for (const CommandInfo& command : commands) out += entry(command);
  out += "  esac\n}\n";
  return out;
}

// The three lookup functions of both scripts: a command's subcommands, its flags, and a flag's
// values ("__files" where the shell should offer files). `answer` writes a list of words as the
// shell's function returns it (bash echoes them, zsh sets $reply).
template <typename Answer>
std::string lookup_functions(const std::vector<CommandInfo>& commands, Answer answer) {
  std::string out = case_table("_roofline_commands", "$1", commands, [&](const CommandInfo& c) {
    return fmt::format("    \"{}\") {} ;;\n", c.path, answer(words(c.subcommands)));
  });
  out += case_table("_roofline_flags", "$1", commands, [&](const CommandInfo& c) {
    return fmt::format("    \"{}\") {} ;;\n", c.path, answer(flag_words(c)));
  });
  out += case_table("_roofline_values", "$1 $2", commands, [&](const CommandInfo& c) {
    std::string entries;
    for (const FlagInfo& flag : c.flags) {
      const std::string values = value_words(flag);
      if (values.empty()) continue;
      for (const std::string& name : flag.names)
        entries += fmt::format("    \"{} {}\") {} ;;\n", c.path, name, answer(values));
    }
    return entries;
  });
  return out;
}

// roff text: a backslash is \e, and a line must not start with a control character.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char ch : text) {
    if (line_start && (ch == '.' || ch == '\'')) out += "\\&";
    if (ch == '\\') {
      out += "\\e";
    } else if (ch == '-') {
      out += "\\-";
    } else {
      out += ch;
    }
    line_start = ch == '\n';
  }
  return out;
}

void write_output(const std::optional<std::string>& path, const std::string& text) {
  if (path) {
    write_file_atomically(*path, text);
  } else {
    std::cout << text << std::flush;
  }
}

}  // namespace

std::vector<CommandInfo> describe_commands(const CLI::App& app) {
  std::vector<CommandInfo> out;
  describe(app, "", out);
  return out;
}

std::string bash_completion(const std::vector<CommandInfo>& commands) {
  std::string out =
      "# bash completion for roofline, generated from its command line by `roofline completion bash`.\n"
      "# Install: roofline completion bash > ~/.local/share/bash-completion/completions/roofline\n";
  out += lookup_functions(commands, [](const std::string& list) { return fmt::format("echo \"{}\"", list); });
  out += R"sh(_roofline() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="" word values i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [[ $word != -* && " $(_roofline_commands "$path") " == *" $word "* ]]; then
      path="${path:+$path }$word"
    fi
  done
  ((COMP_CWORD > 1)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  if [[ $prev == -* ]]; then
    values="$(_roofline_values "$path" "$prev")"
    if [[ $values == __files ]]; then
      COMPREPLY=($(compgen -f -- "$cur"))
      return
    elif [[ -n $values ]]; then
      COMPREPLY=($(compgen -W "$values" -- "$cur"))
      return
    fi
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_roofline_flags "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_roofline_commands "$path")" -- "$cur"))
  fi
}
complete -o default -F _roofline roofline
)sh";
  return out;
}

std::string zsh_completion(const std::vector<CommandInfo>& commands) {
  std::string out =
      "#compdef roofline\n"
      "# zsh completion for roofline, generated from its command line by `roofline completion zsh`.\n"
      "# Install: roofline completion zsh > \"${fpath[1]}/_roofline\"\n";
  // zsh's `path` is tied to $PATH, hence `command_path`; functions answer in $reply.
  out += lookup_functions(commands, [](const std::string& list) { return fmt::format("reply=({})", list); });
  out += R"sh(_roofline() {
  local command_path="" word i
  local -a reply
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    reply=()
    _roofline_commands "$command_path"
    if [[ $word != -* && ${reply[(Ie)$word]} -gt 0 ]]; then
      command_path="${command_path:+$command_path }$word"
    fi
  done
  local prev=${words[CURRENT - 1]} cur=${words[CURRENT]}
  if [[ $prev == -* ]]; then
    reply=()
    _roofline_values "$command_path" "$prev"
    if [[ ${reply[1]} == __files ]]; then
      _files
      return
    elif ((${#reply})); then
      compadd -- $reply
      return
    fi
  fi
  reply=()
  if [[ $cur == -* ]]; then
    _roofline_flags "$command_path"
  else
    _roofline_commands "$command_path"
  fi
  compadd -- $reply
}
_roofline "$@"
)sh";
  return out;
}

std::string man_page(const std::vector<CommandInfo>& commands) {
  std::string out = fmt::format(".TH ROOFLINE 1 \"\" \"roofline {}\" \"User Commands\"\n", tool_version);
  out += ".SH NAME\nroofline \\- GPU roofline analysis and performance modelling\n";
  out += ".SH SYNOPSIS\n.B roofline\n\\fICOMMAND\\fR [\\fISUBCOMMAND\\fR] [\\fIOPTIONS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff(commands.front().description) + "\n";
  out +=
      ".PP\nEvery report command takes \\fB\\-\\-format\\fR table|json|csv|markdown|html, \\fB\\-o\\fR "
      "\\fIFILE\\fR and \\fB\\-\\-hardware\\-dir\\fR \\fIDIR\\fR; \\fB\\-\\-config\\fR \\fIFILE\\fR reads "
      "flags from a TOML file that \\fB\\-\\-print\\-config\\fR writes.\n";
  out += ".SH COMMANDS\n";
  for (const CommandInfo& command : commands) {
    if (command.path.empty() || !command.subcommands.empty()) continue;  // the leaves are what a user runs
    out += fmt::format(".SS \"roofline {}\"\n{}\n", roff(command.path), roff(command.description));
    for (const FlagInfo& flag : command.flags) {
      std::vector<std::string> names;
      for (const std::string& name : flag.names) names.push_back("\\fB" + roff(name) + "\\fR");
      out += ".TP\n" + fmt::format("{}", fmt::join(names, ", "));
      if (!flag.value.empty()) out += " \\fI" + roff(flag.value) + "\\fR";
      out += "\n" + roff(flag.description);
      if (!flag.choices.empty()) out += " (" + roff(words(flag.choices)) + ")";
      if (flag.required) out += " Required.";
      out += "\n";
    }
  }
  out +=
      ".SH ENVIRONMENT\n.TP\n.B ROOFLINE_HARDWARE_PATH\nColon-separated directories of GPU spec files, as "
      "\\fB\\-\\-hardware\\-dir\\fR.\n";
  out +=
      ".SH EXIT STATUS\n0 ok; 1 a check failed (hw check, a validate regression or gate); 2 bad input; 3 no GPU "
      "or CUDA where one is needed.\n";
  return out;
}

void setup_completion_commands(CLI::App& app) {
  auto output = std::make_shared<std::optional<std::string>>();
  CLI::App* completion = app.add_subcommand("completion", "Shell completion script (bash or zsh) for roofline");
  auto shell = std::make_shared<std::string>();
  completion->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  completion->add_option("-o,--output", *output, "Write the script to FILE instead of stdout");
  completion->callback([&app, shell, output] {
    const std::vector<CommandInfo> commands = describe_commands(app);
    write_output(*output, *shell == "bash" ? bash_completion(commands) : zsh_completion(commands));
  });
  CLI::App* man = app.add_subcommand("man", "The manual page roofline(1), in roff (man -l FILE shows it)");
  auto man_output = std::make_shared<std::optional<std::string>>();
  man->add_option("-o,--output", *man_output, "Write the page to FILE instead of stdout");
  man->callback([&app, man_output] { write_output(*man_output, man_page(describe_commands(app))); });
}

}  // namespace roofline::cli
