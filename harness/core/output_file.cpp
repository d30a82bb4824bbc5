#include "harness/core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/core/error.hpp"

namespace accelbench {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& what, const fs::path& path, const std::string& why) {
  throw input_error(
      fmt::format("cannot write {}'{}': {}", what.empty() ? "" : what + " ", path.string(), why));
}

fs::path folder_of(const fs::path& p) {
  fs::path d = p.parent_path();
  return d.empty() ? fs::path(".") : d;
}

// An output named by a symbolic link updates the file the link points to, as a shell redirection
// would, instead of replacing the link by a file.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(p, ec)))
    return p;
  fs::path target = fs::weakly_canonical(p, ec);
  return ec ? p : target;
}

// Devices and pipes are written in place: a rename cannot replace them, and they keep no file.
bool is_stream(const fs::path& p) {
  std::error_code ec;
  auto st = fs::status(p, ec);
  return !ec && (fs::is_character_file(st) || fs::is_fifo(st));
}

// The mode a new output gets: what the user's umask gives any new file (mkstemp makes 0600), or
// the mode of the file it replaces.
mode_t mode_for(const fs::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0)
    return st.st_mode & 07777;
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

// Writes all of `text` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

struct staged {
  fs::path shown;  // the path as the user gave it, for messages
  fs::path target; // where the output goes (links resolved)
  fs::path temp;   // the written temporary file; empty once renamed
  bool existed = false;
};

// Writes `text` to a fresh temporary file beside `target`; returns 0 or the errno of the failure
// (the temporary file removed).
int stage(staged& s, std::string_view text) {
  std::string leaf = "."; // hidden, beside the target: same file system, so rename is atomic
  leaf += s.target.filename().string();
  leaf += ".tmp-XXXXXX";
  std::string name = (folder_of(s.target) / leaf).string();
  int fd = ::mkstemp(name.data());
  if (fd < 0)
    return errno;
  int err = ::fchmod(fd, mode_for(s.target)) == 0 ? 0 : errno;
  if (!err)
    err = write_all(fd, text);
  if (!err && ::fsync(fd) != 0)
    err = errno;
  if (::close(fd) != 0 && !err)
    err = errno;
  if (err) {
    ::unlink(name.c_str());
    return err;
  }
  s.temp = name;
  return 0;
}

int write_in_place(const fs::path& target, std::string_view text) {
  int fd = ::open(target.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    return errno;
  int err = write_all(fd, text);
  if (::close(fd) != 0 && !err)
    err = errno;
  return err;
}

} // namespace

void check_output_path(const fs::path& path, const std::string& what,
                       const std::vector<fs::path>& protect) {
  if (path.empty())
    throw input_error(fmt::format("{} needs a file name", what.empty() ? "an output" : what));
  const fs::path p = resolved(path);
  std::error_code ec;
  const auto st = fs::status(p, ec);
  if (fs::is_directory(st))
    refuse(what, path, "it is a directory");
  if (fs::exists(st)) {
    if (!fs::is_regular_file(st) && !fs::is_character_file(st) && !fs::is_fifo(st))
      refuse(what, path, "it is not a regular file");
    if (::access(p.c_str(), W_OK) != 0)
      refuse(what, path, std::strerror(errno));
    for (const auto& q : protect)
      if (!q.empty() && fs::equivalent(p, q, ec))
        refuse(what, path, "it is an input of this command (the database or a results file)");
    if (!fs::is_regular_file(st))
      return; // a device or pipe: written in place
  }
  const fs::path dir = folder_of(p);
  const auto ds = fs::status(dir, ec);
  if (!fs::exists(ds))
    refuse(what, path, fmt::format("folder '{}' does not exist", dir.string()));
  if (!fs::is_directory(ds))
    refuse(what, path, fmt::format("'{}' is not a folder", dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    refuse(what, path, fmt::format("folder '{}': {}", dir.string(), std::strerror(errno)));
}

void write_file_atomic(const fs::path& path, std::string_view text) {
  write_files_atomic({{path, std::string(text)}});
}

void write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files) {
  std::vector<staged> all;
  std::vector<std::pair<fs::path, std::string_view>> streams;
  auto discard = [&] {
    for (const auto& s : all)
      if (!s.temp.empty())
        ::unlink(s.temp.c_str());
  };
  for (const auto& [path, text] : files) {
    fs::path target = resolved(path);
    if (is_stream(target)) {
      streams.emplace_back(path, text);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(target, ec)) {
      discard();
      refuse("", path, "it is a directory");
    }
    staged s{path, target, {}, fs::exists(target, ec)};
    if (int err = stage(s, text)) {
      discard();
      refuse("", path, std::strerror(err));
    }
    all.push_back(std::move(s));
  }
  for (const auto& [path, text] : streams)
    if (int err = write_in_place(resolved(path), text)) {
      discard();
      refuse("", path, std::strerror(err));
    }
  for (size_t i = 0; i < all.size(); ++i) {
    if (::rename(all[i].temp.c_str(), all[i].target.c_str()) == 0) {
      all[i].temp.clear();
      continue;
    }
    int err = errno;
    discard();
    // Outputs this call created are removed again: all or nothing.
    for (size_t j = 0; j < i; ++j)
      if (!all[j].existed)
        ::unlink(all[j].target.c_str());
    refuse("", all[i].shown, std::strerror(err));
  }
}

} // namespace accelbench
