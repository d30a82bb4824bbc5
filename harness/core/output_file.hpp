#pragma once
// Output files written by commands (export, report, compare -o): every path is checked before the
// command does any work, and each file is written through a temporary file in the same folder and
// a rename, so that a failure leaves no half-written file and no stray output behind. One home for
// these rules, so that every command that writes a file keeps the README's "nothing half-written".
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace accelbench {

// Checks that `path` can be written as an output file: not empty, not a folder, its folder exists
// and is writable, an existing file is writable, and it is none of `protect` (the database or
// files a command reads, which an output must never replace). Throws input_error naming `what` (the
// option, e.g. "--html") and the path, with the system's reason. Call before doing the work.
void check_output_path(const std::filesystem::path& path, const std::string& what,
                       const std::vector<std::filesystem::path>& protect = {});

// Writes `text` to `path` atomically: a temporary file beside it, then a rename. On failure the
// temporary file is removed, `path` is as it was, and input_error gives the real reason ("is a
// directory", "No space left on device"). A character device or FIFO (/dev/stdout, /dev/null, a
// pipe) is written directly: it cannot be renamed over and holds no half-written state.
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

// Several outputs of one command, all or nothing: every temporary file is written first, and the
// renames happen only when all of them succeeded. On failure no output is created (a file that
// was replaced before a later rename failed cannot be restored; renames in one folder do not fail
// once the temporary files exist, short of the folder changing under us).
void write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files);

} // namespace accelbench
