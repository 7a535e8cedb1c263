// The Python module `roofline` (its C++ part, roofline._roofline): runs a command of the CLI in
// the calling process and returns its JSON report as dicts and lists. Each call is the command
// line itself, built from keyword arguments: the command's own CLI11 flags parse and check them
// (same defaults, same errors) and its own callback runs, with the report taken by a
// ReportCapture (src/cli/common.hpp) instead of printed.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "commands/commands.hpp"
#include "common.hpp"
#include "model_options.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/input_file.hpp"
#include "roofline/core/version.hpp"
#include "roofline/report/report.hpp"

namespace py = pybind11;

namespace {

py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return py::float_(value.get<double>());
    case nlohmann::json::value_t::string: return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list(value.size());
      for (std::size_t i = 0; i < value.size(); ++i) list[i] = to_python(value[i]);
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = to_python(item);
      return dict;
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  throw std::logic_error("a report holds a JSON value of no Python type");
}

// A report as Python objects, made directly rather than through to_json (which cost about a fifth
// of a small call): the same dicts and lists, keys in the same (sorted) order, as to_json's.

py::object cell_to_python(const roofline::Cell& cell) {
  return std::visit(
      [](const auto& value) -> py::object {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, bool>) {
          return py::bool_(value);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return py::int_(value);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(value);
        } else {
          return py::str(value);
        }
      },
      cell);
}

// A table's rows as a list of dicts. to_json writes a row as a JSON object: its keys sorted, and a
// key that two columns share holds the later column's cell. The key strings are made once a table.
py::list rows_to_python(const roofline::Table& table) {
  std::vector<std::size_t> order(table.columns.size());
  for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return table.columns[a].key < table.columns[b].key; });
  std::vector<std::pair<std::size_t, py::str>> keys;  // column index, its key; sorted, one per key
  for (std::size_t i = 0; i < order.size(); ++i) {
    const bool shadowed = i + 1 < order.size() && table.columns[order[i + 1]].key == table.columns[order[i]].key;
    if (!shadowed) keys.emplace_back(order[i], py::str(std::string(table.columns[order[i]].key)));
  }
  py::list rows(table.rows.size());
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<roofline::Cell>& cells = table.rows[r];
    py::dict row;
    for (const auto& [column, key] : keys) {
      if (column < cells.size()) row[key] = cell_to_python(cells[column]);
    }
    rows[r] = std::move(row);
  }
  return rows;
}

py::dict report_to_python(const roofline::Report& report) {
  // results: each table by name, then the extra results over them, in key order.
  std::map<std::string, py::object> results;
  for (const roofline::Table& table : report.tables) results[table.name] = rows_to_python(table);
  for (const auto& [key, value] : report.extra_results.items()) results[key] = to_python(value);
  py::dict results_dict;
  for (const auto& [key, value] : results) results_dict[py::str(key)] = value;

  py::list hardware(report.hardware.size());
  for (std::size_t i = 0; i < report.hardware.size(); ++i) {
    py::dict origin;
    origin["file"] = report.hardware[i].origin;
    origin["id"] = report.hardware[i].id;
    hardware[i] = std::move(origin);
  }
  py::list notes(report.notes.size());
  for (std::size_t i = 0; i < report.notes.size(); ++i) notes[i] = py::str(report.notes[i]);

  static const nlohmann::json build = roofline::tool_build();
  py::dict out;
  out["hardware"] = std::move(hardware);
  out["inputs"] = to_python(report.inputs);
  out["notes"] = std::move(notes);
  out["results"] = std::move(results_dict);
  out["schema"] = report.schema();
  out["tool_build"] = to_python(build);
  out["tool_version"] = std::string_view(roofline::tool_version);
  return out;
}

// A keyword argument's flag: m -> --m, kv_heads -> --kv-heads.
std::string flag_of(std::string keyword) {
  std::replace(keyword.begin(), keyword.end(), '_', '-');
  return "--" + keyword;
}

// A value as the command line writes it: Python's str() (shortest round trip for a float).
std::string text_of(const py::handle& value) {
  return py::str(value).cast<std::string>();
}

// The command line of one call. A None value is a flag not given; True a flag given, False one
// not given; a list or tuple is one value per repetition of a flag that repeats (--set) and a
// comma-separated list otherwise (--batch 1,8,64).
std::vector<std::string> command_line(CLI::App& leaf, const std::vector<std::string>& path,
                                      const std::vector<std::string>& positionals, const py::dict& flags) {
  std::vector<std::string> words = path;
  for (const auto& [key, value] : flags) {
    const std::string keyword = key.cast<std::string>();
    const std::string flag = flag_of(keyword);
    const CLI::Option* option = leaf.get_option_no_throw(flag);
    if (keyword == "format" || (option != nullptr && option->check_sname("o"))) {
      throw roofline::InputError(
          fmt::format("{}: the module returns the report itself; --format and -o do not apply", flag));
    }
    if (value.is_none()) continue;
    if (py::isinstance<py::bool_>(value)) {
      if (value.cast<bool>()) words.push_back(flag);
      continue;
    }
    if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      const bool repeats = option != nullptr && option->get_expected_max() > 1;
      std::string joined;
      for (const py::handle item : value) {
        if (repeats) {
          words.push_back(flag);
          words.push_back(text_of(item));
        } else {
          joined += (joined.empty() ? "" : ",") + text_of(item);
        }
      }
      if (!repeats) {
        words.push_back(flag);
        words.push_back(joined);
      }
      continue;
    }
    words.push_back(flag);
    words.push_back(text_of(value));
  }
  words.insert(words.end(), positionals.begin(), positionals.end());
  return words;
}

// A command's CLI11 definition, set up once per command path and set of flags given, since setting
// one up costs more than most commands' work. Reusing one is exact because a parse writes only the
// variables of the flags given: when every call gives the same flags, each overwrites all that the
// one before wrote, and the other variables keep the defaults of the setup. (A flag given before
// but not now would keep its old value: hence the flags given are part of the key.)
struct Definition {
  CLI::App app{"roofline", "roofline"};
  CLI::App* leaf = &app;  // the innermost command named, whose flags the keyword arguments are
};

// How many definitions are kept before all are dropped (a loop over one command needs one).
constexpr std::size_t max_definitions = 64;

Definition& definition_for(const std::vector<std::string>& path, std::size_t positionals, const py::dict& flags) {
  static std::map<std::string, std::unique_ptr<Definition>> definitions;
  std::vector<std::string> given;
  for (const auto& [key, value] : flags) {
    if (value.is_none() || (py::isinstance<py::bool_>(value) && !value.cast<bool>())) continue;
    given.push_back(key.cast<std::string>());
  }
  std::sort(given.begin(), given.end());
  const std::string key = fmt::format("{}|{}|{}", fmt::join(path, " "), positionals, fmt::join(given, " "));
  if (const auto found = definitions.find(key); found != definitions.end()) return *found->second;

  const auto* command =
      std::find_if(roofline::cli::command_setups.begin(), roofline::cli::command_setups.end(),
                   [&](const roofline::cli::CommandSetup& c) { return !path.empty() && c.name == path.front(); });
  if (command == roofline::cli::command_setups.end()) {
    throw roofline::InputError(fmt::format("no command '{}'", path.empty() ? "" : path.front()));
  }
  auto made = std::make_unique<Definition>();
  made->app.require_subcommand(1);
  command->setup(made->app);
  // A misspelt kind stops the walk and is left to the parse to report as the CLI does.
  for (const std::string& name : path) {
    const std::vector<CLI::App*> found =
        made->leaf->get_subcommands([&](const CLI::App* sub) { return sub->get_name() == name; });
    if (found.empty()) break;
    made->leaf = found.front();
  }
  if (definitions.size() >= max_definitions) definitions.clear();
  return *definitions.emplace(key, std::move(made)).first->second;
}

// Runs `roofline PATH... POSITIONALS... --FLAG VALUE...` and returns its JSON report.
py::object run(const std::vector<std::string>& path, const std::vector<std::string>& positionals,
               const py::dict& flags) {
  roofline::forget_inputs();  // each call is a run of its own: its outputs may replace an earlier call's inputs
  Definition& definition = definition_for(path, positionals.size(), flags);
  std::vector<std::string> words = command_line(*definition.leaf, path, positionals, flags);
  words.insert(words.end(), {"--format", "json"});
  std::reverse(words.begin(), words.end());  // CLI11 takes the words last first

  py::object result;
  const roofline::cli::ReportCapture capture(
      [&result](const roofline::Report& report) { result = report_to_python(report); });
  try {
    definition.app.parse(words);
  } catch (const CLI::ParseError& e) {
    // The CLI's one line for a flag error (src/cli/main.cpp), less its "roofline: " prefix.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    throw roofline::InputError(message + " (see --help)");
  }
  if (!result) throw std::logic_error(fmt::format("roofline {} emitted no report", fmt::join(path, " ")));
  return result;
}

// Every model preset (and --models-dir file), as the reports' inputs describe a model.
py::object models(const std::vector<std::string>& models_dirs) {
  roofline::cli::ModelOptions options;
  options.models_dirs = models_dirs;
  const roofline::ModelRegistry& registry = roofline::cli::load_models(options);
  nlohmann::json list = nlohmann::json::array();
  for (const roofline::ModelSpec& model : registry.all()) list.push_back(roofline::cli::model_summary(model));
  return to_python(list);
}

}  // namespace

PYBIND11_MODULE(_roofline, module) {
  module.doc() = "The roofline library's commands, called in process (see the package roofline)";
  module.attr("tool_version") = std::string(roofline::tool_version);

  static py::exception<roofline::Error> error(module, "Error");
  static py::exception<roofline::InputError> input_error(module, "InputError", error.ptr());
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const roofline::InputError& e) {
      input_error(e.what());
    } catch (const roofline::Error& e) {
      error(e.what());
    }
  });

  module.def("run", &run, py::arg("path"), py::arg("positionals"), py::arg("flags"),
             "Runs `roofline PATH... POSITIONALS... --FLAG VALUE...` and returns its JSON report");
  module.def("models", &models, py::arg("models_dirs"), "Every model preset, as a report's inputs describe it");
}
