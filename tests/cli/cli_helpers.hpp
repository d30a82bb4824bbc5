#pragma once
// Runs the accelbench executable as a user would, capturing exit code, stdout and stderr.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace test_cli {

struct result {
  int rc = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline result ab(const std::string& args, const std::string& env = "") {
  static int n = 0;
  auto dir = std::filesystem::temp_directory_path();
  auto o = dir / ("ab-cli-out-" + std::to_string(getpid()) + "-" + std::to_string(n));
  auto e = dir / ("ab-cli-err-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  std::string cmd = env + " " ACCELBENCH_EXE " " + args + " >" + o.string() + " 2>" + e.string() + " </dev/null";
  int st = std::system(cmd.c_str());
  result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  std::filesystem::remove(o);
  std::filesystem::remove(e);
  return r;
}

struct temp_dir {
  std::filesystem::path path;
  temp_dir() {
    path = std::filesystem::temp_directory_path() / ("ab-cli-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
    std::filesystem::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string db() const { return (path / "t.db").string(); }
};

} // namespace test_cli
