#pragma once
// package_checker_params: the file MLCommons' package checker reads in a system folder and in a
// benchmark folder of results/ (package_checker.py) to bypass its RCP check ("rcp-bypass") or its
// seed checker ("seed-checker-bypass") there. The one reader of it for every stage that honours it.
#include <filesystem>
#include <string_view>

namespace accelbench::mlperf {

inline constexpr std::string_view k_params_file = "package_checker_params";
inline constexpr std::string_view k_rcp_bypass_param = "rcp-bypass";
inline constexpr std::string_view k_seed_checker_bypass_param = "seed-checker-bypass";

// Whether FOLDER/package_checker_params holds a line that is exactly `param`, as the package
// checker reads it: readlines() keeps each line's end, and the comparison is with the bare word,
// so only a last line without a newline matches ("seed-checker-bypass\n" never does; Python's
// universal newlines end a line at "\r\n" and at a lone '\r' too). A file that is missing, a
// link (never followed: folder.hpp, the walk names it), or cannot be read holds none.
bool package_param(const std::filesystem::path& folder, std::string_view param);

// Whether FOLDER/package_checker_params holds `param` as a whole line that ends in a line break:
// the line a user meant as a bypass and the package checker does not take (said in a warning).
bool package_param_line_with_break(const std::filesystem::path& folder, std::string_view param);

} // namespace accelbench::mlperf
