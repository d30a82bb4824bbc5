#pragma once
// Text a person typed that is stored or matched against stored text: KEY=VALUE assignments
// (--set, --rule, --sweep, a history query's set=) and labels (--system, --tag). One home for the
// runner, the command line and the server.
#include <string>
#include <utility>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/text_input.hpp"

namespace accelbench {

// Parses KEY=VALUE; throws usage_error naming the option and the argument.
inline std::pair<std::string, std::string> split_assignment(const std::string& arg,
                                                            const std::string& option) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw usage_error(fmt::format("{} expects KEY=VALUE, got '{}'", option, arg));
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// Throws usage_error naming the option when the value is not UTF-8, or empty where a value is
// needed (stored text that is not UTF-8 would make every JSON output of the database fail).
inline void require_text(const std::string& value, const std::string& option,
                         bool allow_empty = true) {
  if (!allow_empty && value.empty())
    throw usage_error(fmt::format("{} must not be empty", option));
  if (!valid_utf8(value))
    throw usage_error(fmt::format("{} '{}' is not valid UTF-8 (invalid bytes shown as U+FFFD)",
                                  option, printable(value)));
}

} // namespace accelbench
