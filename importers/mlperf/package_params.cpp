#include "importers/mlperf/package_params.hpp"

#include <string>

#include "harness/core/error.hpp"
#include "importers/mlperf/folder.hpp"

namespace accelbench::mlperf {

bool package_param(const std::filesystem::path& folder, std::string_view param) {
  const std::filesystem::path p = folder / k_params_file;
  if (kind_of(p) != entry_kind::file)
    return false;
  std::string text;
  try {
    text = read_folder_file(p, "package checker parameters");
  } catch (const input_error&) {
    return false;
  }
  // Every line but the last ends in a line break and so is never equal to the word: only the
  // text after the last break can be.
  const size_t last_break = text.find_last_of("\r\n");
  const std::string_view last_line = last_break == std::string::npos
                                         ? std::string_view(text)
                                         : std::string_view(text).substr(last_break + 1);
  return last_line == param;
}

} // namespace accelbench::mlperf
