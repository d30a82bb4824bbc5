#pragma once
// How every reader of an MLPerf folder walks it and reads its files (import's ingest, the power
// logs, check-package, package's update of an existing package): one home.
//
// Below the folder the user named, nothing is followed through a symbolic link, to a file or to a
// folder: `result_10.txt -> /proc/self/environ` would otherwise put the importing process's
// environment (its tokens) into a stored run's MLPerf log, from where export, publish and the
// server serve it, and `-> /etc/shadow` the same when run as root. A link is listed as a link and
// never opened: the walk names it and its target and skips it (import: a diagnostic, the rest
// imported, exit 1, as for every other entry that cannot be read, so that one stray link does not
// block the import of a whole round; check-package: a reason, INVALID). Following only the links
// that stay inside the folder would need a proof that they do (.., links to links, a folder
// changed meanwhile); no published submission needs one. A file is read by read_found_file: never
// through a link, never a FIFO, device or socket, at most k_max_log_bytes. The folder the user
// named may itself be a link: naming it is the user's choice.
//
// What this leaves open: a folder above a file swapped for a link between its listing and the
// opening of the file (a folder changed while it is read); the file itself is opened with
// O_NOFOLLOW and checked on its descriptor.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/mllog.hpp"

namespace accelbench::mlperf {

enum class entry_kind { folder, file, link, other, missing };

struct folder_entry {
  std::filesystem::path path;
  entry_kind kind = entry_kind::missing;
};

// The kind of `p` itself: a link is a link, never what it points to; "other" is a FIFO, device
// or socket; "missing" also when it cannot be read.
entry_kind kind_of(const std::filesystem::path& p);

// Whether `p` is a folder, not a link to one (false when it cannot be read: whoever reads the
// entry says why).
bool is_dir(const std::filesystem::path& p);

// The entries of `dir`, sorted by path, each with its own kind. Never throws: a folder that
// cannot be listed gives what could be listed. List only a folder the user named or one whose
// kind was seen to be a folder.
std::vector<folder_entry> list_folder(const std::filesystem::path& dir);

// "a symbolic link to 'TARGET': not followed", the words of a link the walk skipped (after its
// path, in a diagnostic or reason).
std::string link_refusal(const std::filesystem::path& link);

// A file of the folder, as read_found_file reads it, at most k_max_log_bytes (64 MiB). Throws
// input_error naming `what` and the path.
std::string read_folder_file(const std::filesystem::path& p, const std::string& what);

// A JSON file of the folder (a system description, scaling.json) parsed as MLCommons' tools
// read it with Python's json.load: a key twice in one object keeps its last value, and a
// diagnostic naming `file` says so (published descriptions have them, and MLCommons accepts
// them). Every other refusal of parse_json_checked (too deep, a NUL byte, not JSON, a number
// out of range) throws input_error "WHAT: WHY".
json parse_folder_json(std::string_view text, const std::string& file, const std::string& what,
                       std::vector<mllog::diagnostic>& diags);

} // namespace accelbench::mlperf
