#pragma once
// Outside text at the boundary: JSON parsed with a bounded nesting depth and size, UTF-8 checked
// or repaired, JSON written without ever throwing on stored text, and names made safe to print on
// a terminal. Every parser of outside input goes through parse_json_input(); every writer of JSON
// output goes through dump_json(). One home for these rules, so that no importer forgets one.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace accelbench {

using json = nlohmann::json;

// Deepest nesting of arrays and objects accepted in any JSON input. Our own documents nest fewer
// than 16 levels; a hostile file of 100,000 levels would otherwise exhaust the stack.
inline constexpr std::size_t k_max_json_depth = 256;

// Largest nesting depth of `text` (brackets outside strings), stopping early past `limit`.
std::size_t json_nesting_depth(std::string_view text, std::size_t limit = k_max_json_depth);

// Parses `text` as JSON. Throws input_error naming `what` ("nesting too deep" past max_depth, or
// "not valid JSON" with the parser's position). Never recurses beyond max_depth.
json parse_json_input(std::string_view text, const std::string& what,
                      std::size_t max_depth = k_max_json_depth);

// Like parse_json_input, but returns a discarded value (is_discarded()) instead of throwing, for
// callers that treat a malformed file as a diagnostic rather than an error.
json parse_json_lenient(std::string_view text, std::size_t max_depth = k_max_json_depth);

// Largest file or HTTP body read as input (256 MiB): our largest real documents are a few MiB, and
// an endless source (/dev/zero, a FIFO, a runaway server) must end in an error, not in the OOM
// killer.
inline constexpr std::size_t k_max_input_bytes = std::size_t{256} << 20;

// Reads a whole file of outside input. Throws input_error naming `what` and the path: "is a
// directory", "cannot read" with the system's reason, or "larger than 256 MiB" (checked while
// reading, so a device or FIFO without a size is bounded too).
std::string read_input_file(const std::filesystem::path& path, const std::string& what,
                            std::size_t max_bytes = k_max_input_bytes);

// read_input_file then parse_json_input: errors name "WHAT 'PATH'".
json read_json_file(const std::filesystem::path& path, const std::string& what);

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s);

// Offset of the first byte of `s` that is not part of well-formed UTF-8, or npos (for messages
// that say where the bad byte is).
std::size_t first_invalid_utf8(std::string_view s);

// `s` with every invalid UTF-8 sequence replaced by U+FFFD; `replaced` (if given) gets the count.
std::string repair_utf8(std::string_view s, std::size_t* replaced = nullptr);

// j.dump(indent) that cannot throw: invalid UTF-8 in stored strings is written as U+FFFD.
std::string dump_json(const json& j, int indent = -1);

// `s` made safe to print on a terminal: control characters (C0, DEL, C1 incl. ESC/CSI/OSC
// introducers) and bidirectional overrides become visible escapes (\n, \x1b, \u202e), and invalid
// UTF-8 becomes U+FFFD.
std::string printable(std::string_view s);

} // namespace accelbench
