#include "importers/mlperf/folder.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/mllog.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench::mlperf {

namespace fs = std::filesystem;

namespace {

entry_kind kind_of_status(const fs::file_status& st) {
  if (fs::is_symlink(st))
    return entry_kind::link;
  if (fs::is_directory(st))
    return entry_kind::folder;
  if (fs::is_regular_file(st))
    return entry_kind::file;
  return fs::exists(st) ? entry_kind::other : entry_kind::missing;
}

} // namespace

entry_kind kind_of(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);
  return ec ? entry_kind::missing : kind_of_status(st);
}

bool is_dir(const fs::path& p) { return kind_of(p) == entry_kind::folder; }

std::vector<folder_entry> list_folder(const fs::path& dir) {
  std::vector<folder_entry> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    const fs::file_status st = it->symlink_status(sec);
    out.push_back({it->path(), sec ? entry_kind::missing : kind_of_status(st)});
  }
  std::sort(out.begin(), out.end(),
            [](const folder_entry& a, const folder_entry& b) { return a.path < b.path; });
  return out;
}

std::string link_refusal(const fs::path& link) { return link_words(link) + ": not followed"; }

std::string read_folder_file(const fs::path& p, const std::string& what) {
  return read_found_file(p, what, mllog::k_max_log_bytes);
}

json parse_folder_json(std::string_view text, const std::string& file, const std::string& what,
                       std::vector<mllog::diagnostic>& diags) {
  json_problem problem = json_problem::none;
  std::string why;
  json value = parse_json_checked(text, problem, why);
  if (problem == json_problem::none)
    return value;
  if (problem != json_problem::duplicate_key)
    throw input_error(fmt::format("{}: {}", what, why));
  // The depth and NUL checks passed before the duplicate was seen; nlohmann's DOM parser keeps
  // the last value of a repeated key, as Python does. A syntax error after the duplicate is
  // still refused.
  try {
    value = json::parse(text);
  } catch (const json::exception& e) {
    throw input_error(fmt::format("{}: not valid JSON ({})", what, e.what()));
  }
  diags.push_back({file, 0,
                   fmt::format("{}: {}; the last value is used, as MLCommons' tools (Python's "
                               "json) use it",
                               what, why)});
  return value;
}

} // namespace accelbench::mlperf
