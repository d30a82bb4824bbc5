#include "importers/mlperf/package_params.hpp"

#include <optional>
#include <string>

#include "harness/core/error.hpp"
#include "importers/mlperf/folder.hpp"

namespace accelbench::mlperf {

namespace {

// The text of FOLDER/package_checker_params; nullopt when it is missing, a link or unreadable.
std::optional<std::string> params_text(const std::filesystem::path& folder) {
  const std::filesystem::path p = folder / k_params_file;
  if (kind_of(p) != entry_kind::file)
    return std::nullopt;
  try {
    return read_folder_file(p, "package checker parameters");
  } catch (const input_error&) {
    return std::nullopt;
  }
}

} // namespace

bool package_param(const std::filesystem::path& folder, std::string_view param) {
  const std::optional<std::string> read = params_text(folder);
  if (!read)
    return false;
  const std::string& text = *read;
  // Every line but the last ends in a line break and so is never equal to the word: only the
  // text after the last break can be.
  const size_t last_break = text.find_last_of("\r\n");
  const std::string_view last_line = last_break == std::string::npos
                                         ? std::string_view(text)
                                         : std::string_view(text).substr(last_break + 1);
  return last_line == param;
}

bool package_param_line_with_break(const std::filesystem::path& folder, std::string_view param) {
  const std::optional<std::string> read = params_text(folder);
  if (!read)
    return false;
  const std::string& text = *read;
  for (size_t at = text.find(param); at != std::string::npos; at = text.find(param, at + 1)) {
    const bool line_start = at == 0 || text[at - 1] == '\n' || text[at - 1] == '\r';
    const size_t end = at + param.size();
    if (line_start && end < text.size() && (text[end] == '\n' || text[end] == '\r'))
      return true;
  }
  return false;
}

} // namespace accelbench::mlperf
