// The table of bad input: every tests/harness/app/cli/bad_input/<area>.cases file is one test case,
// "bad input: <area>", registered when this program starts from the files present then (CTest
// sees one test per file; tests/harness/app/cli/CMakeLists.txt rebuilds this test when a file is
// added). A case line is
//
//     EXIT | WORD | ARGS [| SETUP]
//
// and runs `sh -c "\"$AB\" ARGS" </dev/null` in a fresh temp folder holding t.db, a copy of a
// database seeded with the published reference runs. It passes when the exit code is EXIT, WORD
// is in stderr (any case), stderr never says "internal error" unless EXIT is 3, and, for bad input
// (EXIT 2), the message is one line and nothing in the folder changed: no byte of any file (the
// database included), no file created (SQLite's -wal and -shm too) and none removed.
#include <catch2/catch.hpp>

#include "tests/support/cli_helpers.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <variant>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const fs::path k_source = ACCELBENCH_SOURCE_DIR;
const fs::path k_cases_dir = k_source / "tests" / "harness" / "app" / "cli" / "bad_input";
constexpr auto k_case_limit = 60s; // a case that hangs is killed and fails
constexpr size_t k_max_error_lines = 3;

// ---------------------------------------------------------------------------------------------
// Reading the table.
struct bad_case {
  std::string where; // file:line, for the report
  int exit = -1;
  std::string word, args, setup;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t bar; (bar = line.find(" | ", start)) != std::string::npos; start = bar + 3)
    out.push_back(trim(line.substr(start, bar - start)));
  out.push_back(trim(line.substr(start)));
  return out;
}

// The case on one line, or why the line is not one.
std::variant<bad_case, std::string> parse_case(const std::string& line, const std::string& where) {
  auto f = fields_of(line);
  if (f.size() < 3 || f.size() > 4)
    return where + ": expected 'EXIT | WORD | ARGS [| SETUP]', got " + std::to_string(f.size()) +
           " fields";
  bad_case c;
  c.where = where;
  try {
    size_t used = 0;
    c.exit = std::stoi(f[0], &used);
    if (used != f[0].size())
      throw std::invalid_argument(f[0]);
  } catch (const std::exception&) {
    return where + ": EXIT '" + f[0] + "' is not a number";
  }
  c.word = f[1];
  c.args = f[2];
  if (f.size() == 4)
    c.setup = f[3];
  if (c.word.empty() || c.args.empty())
    return where + ": WORD and ARGS must not be empty";
  if (f.size() == 4 && c.setup.empty())
    return where + ": SETUP is empty (leave the field out)";
  return c;
}

// ---------------------------------------------------------------------------------------------
// What a folder holds: each entry's type, size and content hash.
struct entry {
  char type = '?'; // f file, d directory, l link, o other
  uintmax_t size = 0;
  uint64_t hash = 0;
  bool operator==(const entry&) const = default;
};
using snapshot = std::map<std::string, entry>;

uint64_t fnv1a(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  uint64_t h = 1469598103934665603ull;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i)
      h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
    if (!in)
      break;
  }
  return h;
}

// Links are recorded, never followed: a case may make one that loops or points at /dev/zero.
entry entry_of(const fs::path& p) {
  entry e;
  auto st = fs::symlink_status(p);
  if (fs::is_symlink(st)) {
    e.type = 'l';
    auto target = fs::read_symlink(p).string();
    e.size = target.size();
    e.hash = std::hash<std::string>{}(target);
  } else if (fs::is_directory(st)) {
    e.type = 'd';
  } else if (fs::is_regular_file(st)) {
    e.type = 'f';
    e.size = fs::file_size(p);
    e.hash = fnv1a(p);
  } else {
    e.type = 'o';
  }
  return e;
}

void add_folder(const fs::path& dir, const fs::path& root, snapshot& s) {
  for (const auto& d : fs::directory_iterator(dir)) {
    entry e = entry_of(d.path());
    s[d.path().lexically_relative(root).string()] = e;
    if (e.type == 'd')
      add_folder(d.path(), root, s);
  }
}

snapshot take_snapshot(const fs::path& dir) {
  snapshot s;
  add_folder(dir, dir, s);
  return s;
}

// "created x, removed y, changed z (10 -> 12 bytes)", or "" when nothing differs.
std::string differences(const snapshot& before, const snapshot& after) {
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
  for (const auto& [path, e] : after) {
    auto b = before.find(path);
    if (b == before.end())
      add("created " + path);
    else if (!(b->second == e))
      add("changed " + path + " (" + std::to_string(b->second.size) + " -> " +
          std::to_string(e.size) + " bytes)");
  }
  for (const auto& [path, e] : before)
    if (!after.count(path))
      add("removed " + path);
  return out;
}

// The default database in the source tree, which a case that forgot --db would write: its
// presence, size and modification time (not its hash: it can be large).
std::string default_db_state() {
  std::string out;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::path p = k_source / "results" / (std::string("accelbench.db") + suffix);
    std::error_code ec;
    if (!fs::exists(p, ec))
      continue;
    out += p.string() + ":" + std::to_string(fs::file_size(p, ec)) + ":" +
           std::to_string(fs::last_write_time(p, ec).time_since_epoch().count()) + ";";
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Where cases run: one folder per process, removed at exit, holding the seeded database, the
// captured output and one folder per case.
struct workspace {
  fs::path root = fs::temp_directory_path() / ("ab-bad-input-" + std::to_string(getpid()));
  fs::path seed = root / "seed.db";
  fs::path out = root / "stdout", err = root / "stderr";
  int cases = 0;
  std::string seed_problem;

  workspace() {
    fs::remove_all(root);
    fs::create_directories(root);
    build_seed();
  }
  ~workspace() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }

  // The published reference runs imported once; each case gets its own copy.
  void build_seed() {
    for (const char* file : {"kernels.json", "training.json"}) {
      fs::path in = k_source / "results" / "published" / file;
      test_cli::spawn_options o;
      o.err = err;
      o.unset_env = {"ACCELBENCH_DB"};
      auto st = test_cli::wait_for(
          test_cli::spawn_sh(
              "'" ACCELBENCH_EXE "' import '" + in.string() + "' --db '" + seed.string() + "'", o),
          std::chrono::milliseconds(300s));
      if (st.rc != 0) {
        seed_problem = "seeding the database from " + in.string() + " failed (exit " +
                       std::to_string(st.rc) + "): " + test_cli::slurp(err);
        return;
      }
    }
  }

  fs::path new_case_folder() {
    fs::path dir = root / ("case-" + std::to_string(++cases));
    fs::create_directories(dir);
    fs::copy_file(seed, dir / "t.db");
    return dir;
  }
};

workspace& the_workspace() {
  static workspace w;
  return w;
}

test_cli::spawn_options case_options(const fs::path& dir, const workspace& w) {
  test_cli::spawn_options o;
  o.cwd = dir;
  o.out = w.out;
  o.err = w.err;
  o.env = {{"AB", ACCELBENCH_EXE},     {"DB", (dir / "t.db").string()},
           {"TMP", dir.string()},      {"FIX", (k_cases_dir / "fixtures").string()},
           {"SRC", k_source.string()}, {"HOME", dir.string()}};
  o.unset_env = {"ACCELBENCH_DB"};
  return o;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return (char)std::tolower(c); });
  return s;
}

std::vector<std::string> non_empty_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!trim(l).empty())
      out.push_back(l);
  return out;
}

// What is wrong with the outcome of a case ("" when nothing).
std::string judge(const bad_case& c, const test_cli::exit_status& st, const std::string& err,
                  const std::string& changed) {
  std::string out;
  auto add = [&](const std::string& what) { out += "  - " + what + "\n"; };
  if (st.timed_out)
    add("killed after " + std::to_string(k_case_limit.count()) + " s");
  if (st.rc != c.exit)
    add("exit code " + std::to_string(st.rc) + ", expected " + std::to_string(c.exit));
  std::string word = lower(c.word);
  if (lower(err).find(word) == std::string::npos)
    add("stderr does not contain '" + c.word + "'");
  if (c.exit != 3 && lower(err).find("internal error") != std::string::npos)
    add("stderr reports an internal error");
  if (c.exit == 2) {
    auto lines = non_empty_lines(err);
    if (lines.size() > k_max_error_lines)
      add("stderr has " + std::to_string(lines.size()) +
          " lines; bad input gets a one-line message");
    bool one_line = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return lower(l).find(word) != std::string::npos;
    });
    if (!one_line && lower(err).find(word) != std::string::npos)
      add("'" + c.word + "' is split over several lines");
    if (!changed.empty())
      add("bad input changed files: " + changed);
  }
  return out;
}

// Runs one case; returns its failure report, or "" when it passed.
std::string run_case(const bad_case& c) {
  workspace& w = the_workspace();
  if (!w.seed_problem.empty())
    return c.where + ": " + w.seed_problem;
  fs::path dir = w.new_case_folder();
  auto opts = case_options(dir, w);
  std::string report_head = c.where + ": accelbench " + c.args +
                            (c.setup.empty() ? "" : "   (setup: " + c.setup + ")") + "\n";
  if (!c.setup.empty()) {
    auto st = test_cli::wait_for(test_cli::spawn_sh(c.setup, opts), k_case_limit);
    if (st.rc != 0)
      return report_head + "  - SETUP failed with exit " + std::to_string(st.rc) + ":\n" +
             test_cli::slurp(w.err);
  }
  snapshot before = take_snapshot(dir);
  std::string default_before = default_db_state();
  auto st = test_cli::wait_for(test_cli::spawn_sh("\"$AB\" " + c.args, opts), k_case_limit);
  std::string err = test_cli::slurp(w.err);
  std::string changed = differences(before, take_snapshot(dir));
  std::string problems = judge(c, st, err, changed);
  if (default_db_state() != default_before)
    problems += "  - changed the default database " +
                (k_source / "results" / "accelbench.db").string() + " (a case must pass --db)\n";
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (problems.empty())
    return "";
  // Changes are a failure only for bad input, but worth seeing whenever a case fails.
  if (c.exit != 2 && !changed.empty())
    problems += "  changed files: " + changed + "\n";
  return report_head + problems + "  exit code: " + std::to_string(st.rc) + "\n  stderr:\n" + err;
}

// ---------------------------------------------------------------------------------------------
// One test case per .cases file.
void run_cases_file(const fs::path& file) {
  std::ifstream in(file);
  REQUIRE(in.good());
  int line_no = 0, cases = 0, failed = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    std::string where = file.filename().string() + ":" + std::to_string(line_no);
    auto parsed = parse_case(t, where);
    if (auto* why = std::get_if<std::string>(&parsed)) {
      FAIL_CHECK(*why);
      ++failed;
      continue;
    }
    ++cases;
    std::string report = run_case(std::get<bad_case>(parsed));
    if (!report.empty()) {
      FAIL_CHECK(report);
      ++failed;
    }
  }
  CHECK(cases > 0); // an area file without cases is a mistake
  std::cout << file.filename().string() << ": " << cases << " cases, " << failed << " failed\n";
}

class cases_file_test : public Catch::ITestInvoker {
public:
  explicit cases_file_test(fs::path file) : m_file(std::move(file)) {}
  void invoke() const override { run_cases_file(m_file); }

private:
  fs::path m_file;
};

// Registers "bad input: <area>" for every <area>.cases file present when the program starts.
struct register_cases_files {
  std::deque<std::string> names; // Catch keeps pointers into the source file names
  register_cases_files() {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(k_cases_dir, ec))
      if (e.path().extension() == ".cases")
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const std::string& file = names.emplace_back(f.string());
      Catch::AutoReg(new cases_file_test(f), Catch::SourceLineInfo(file.c_str(), 1),
                     Catch::StringRef(),
                     Catch::NameAndTags{"bad input: " + f.stem().string(), "[cli][bad-input]"});
    }
  }
};
const register_cases_files k_registered;

} // namespace

TEST_CASE("bad input: every .cases file has its test", "[cli][bad-input]") {
  // CTest lists the test cases this program had when it was built; the areas it was built with
  // come from CMake's glob of the same folder. A file added since is run only after CMake has
  // run again (any build does that), and a missing folder would otherwise pass with no cases.
  std::vector<std::string> present;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(k_cases_dir, ec))
    if (e.path().extension() == ".cases")
      present.push_back(e.path().stem().string());
  std::sort(present.begin(), present.end());
  std::vector<std::string> built;
  std::istringstream in(ACCELBENCH_BAD_INPUT_AREAS);
  for (std::string a; std::getline(in, a, ',');)
    built.push_back(a);
  std::sort(built.begin(), built.end());
  CHECK_FALSE(present.empty());
  INFO("the areas present differ from those this test was built with: rebuild it");
  CHECK(present == built);
}
