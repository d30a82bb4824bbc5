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

// Why a JSON text was refused (json_problem::none: it was not).
enum class json_problem { none, too_deep, nul_byte, duplicate_key, not_json, out_of_range };

// The one home of the rules every reader of outside JSON shares (files, URLs, the external
// protocol, MLLOG lines, the server's POST bodies), so that no reader forgets one:
//  - at most `max_depth` levels of nesting (the parser recurses when it builds the value);
//  - no NUL byte: JSON never holds a raw one, and nlohmann's lexer takes it for the end of the
//    input, so `{"a":1}\0anything` would be read as `{"a":1}` with the rest ignored;
//  - no key twice in one object: RFC 8259 leaves the value undefined (nlohmann and Python keep
//    the last, other readers the first), so a reviewer and accelbench could read two different
//    documents from one file. Refused for every reader, not only the protocol: a results document
//    with "valid" twice is as ambiguous as a protocol line with "seconds" twice.
// Returns the value, or a discarded one (is_discarded()) with `problem` set and `why` saying it
// in one line without a prefix: "JSON nesting too deep (more than 256 levels)", "not valid JSON
// (a NUL byte at offset 7)", "duplicate key 'valid' in one object (...)", "not valid JSON (the
// parser's position and reason)", "number out of range (...)". Linear in the text; never throws.
json parse_json_checked(std::string_view text, json_problem& problem, std::string& why,
                        std::size_t max_depth = k_max_json_depth);

// parse_json_checked that throws input_error "WHAT: WHY" for a refused text.
json parse_json_input(std::string_view text, const std::string& what,
                      std::size_t max_depth = k_max_json_depth);

// parse_json_checked without the reason: a discarded value for a refused text, for callers that
// treat a malformed file as a diagnostic rather than an error.
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

// "a symbolic link to 'TARGET'": the words of every refusal of a link met in a folder walk, so
// that the user sees where the link leads (and that it was not read).
std::string link_words(const std::filesystem::path& link);

// Reads a file found by walking a folder of outside input (an MLPerf results folder, a program's
// output in accelbench's own temporary folder), where nothing the user said asks for a link or a
// device to be read, unlike read_input_file's path, which the user named. The file is opened
// without following a symbolic link (O_NOFOLLOW: `result_10.txt -> /proc/self/environ` must never
// put this process's environment into a stored run) and without blocking (O_NONBLOCK: a FIFO
// would otherwise wait for a writer forever), and it is read only when the opened descriptor is a
// regular file (fstat: no check-then-open race). Throws input_error naming `what` and the path:
// "is a symbolic link to 'TARGET': not followed", "is a directory, not a file", "is not a regular
// file (a FIFO)", "is larger than N", or "cannot read" with the system's reason.
std::string read_found_file(const std::filesystem::path& path, const std::string& what,
                            std::size_t max_bytes);

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

// The entity that markup (XML and HTML alike) writes for c when c is one of & < > " ', the
// apostrophe spelled `apos` (XML's &apos;, which HTML 4 lacks, or &#39;); nullptr for any other
// character. The one table of both escapes; each language keeps its own rules for the rest.
const char* markup_entity(char c, const char* apos);

// `s` as XML 1.0 character data or attribute value (UTF-8): & < > " ' escaped, invalid UTF-8 and
// U+FFFE/U+FFFF as U+FFFD, control characters other than tab, LF and CR (which XML forbids even
// escaped) as '?'. The one XML escape (compare's JUnit; HTML pages may share it).
std::string xml_escape(std::string_view s);

// One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or a leading or
// trailing space, quotes doubled.
std::string csv_field(const std::string& value);

// A CSV field of stored text (a system, tag or config anyone could have written): as csv_field,
// except that text starting with =, +, -, @, a tab or a carriage return, which a spreadsheet would
// run as a formula, gets a leading single quote and is quoted (OWASP's CSV injection guidance).
std::string csv_text_field(const std::string& value);

// `s` with its ASCII letters in lower case (names, units and ids compared without case).
std::string ascii_lower(std::string_view s);

} // namespace accelbench
