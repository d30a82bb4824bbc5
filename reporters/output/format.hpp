#pragma once
// An output format of a result model, as Google Benchmark's reporters and nvbench's printers are:
// a name the command line (--format NAME) and the server (?format=NAME) choose it by, the media
// type the server answers with, a file extension, and a pure write function over the model (the
// comparison, compare::set_comparison, or the report, report::report_model). The one table of
// each model's formats is harness/app/query/formats.hpp; adding a format is one new file beside
// the others (reporters/compare/csv.cpp) and one row of that table.
#include <span>
#include <string>
#include <string_view>

namespace accelbench::output {

// What a writer may be told beyond the model. Never guessed by a writer: the caller knows
// whether the text goes to a terminal.
struct write_options {
  bool color = false; // ANSI colours on verdict words (the terminal table only)
};

template <class Model> struct format {
  std::string_view name;       // "markdown"
  std::string_view media_type; // "text/markdown; charset=utf-8"
  std::string_view extension;  // "md"
  std::string (*write)(const Model&, const write_options&);
};

template <class Model> using format_table = std::span<const format<Model>>;

// The format called `name`, or nullptr.
template <class Model>
const format<Model>* find_format(format_table<Model> table, std::string_view name) {
  for (const auto& f : table)
    if (f.name == name)
      return &f;
  return nullptr;
}

// The names of a table in its order, for the one-line error of an unknown name: "table, markdown,
// junit, json, bmf, csv".
template <class Model>
std::string format_names(format_table<Model> table, std::string_view separator = ", ") {
  std::string out;
  for (const auto& f : table) {
    if (!out.empty())
      out += separator;
    out += f.name;
  }
  return out;
}

} // namespace accelbench::output
