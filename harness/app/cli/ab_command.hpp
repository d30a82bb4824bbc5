#pragma once
// accelbench ab (harness/app/cli/ab_command.cpp): what its tests call directly.
#include <string>
#include <vector>

namespace accelbench::cli {

// The words of `text` as a POSIX shell splits them, without any expansion: blanks separate words;
// '...' keeps everything literally; "..." keeps everything but a backslash before \ " $ ` or a
// newline; a backslash elsewhere keeps the next character as it is. `--baseline-args "-- sh -c
// 'exit 3'"` gives {"--", "sh", "-c", "exit 3"}. Throws usage_error naming `option` and the text
// when a quote is not closed or the text ends with a lone backslash.
std::vector<std::string> split_words(const std::string& text, const std::string& option);

} // namespace accelbench::cli
