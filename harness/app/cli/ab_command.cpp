// accelbench ab: a baseline and a candidate measured in one job, interleaved round by round in an
// order drawn at random per round (RMIT, randomized multiple interleaved trials: Abedi & Brecht,
// "Conducting Repeatable Experiments in Highly Variable Cloud Computing Environments", ICPE 2017),
// stored so that the comparison can pair the sides round by round (run.extra.ab), then compared
// as `accelbench compare` compares.
//
// Each side of each round runs in a fresh child process: `<exe> run ... --rounds 1 --db <tmp>`,
// then `<exe> export --db <tmp> -o <tmp>.json`, read back by the one reader of our results
// document. A process's own state (where its memory landed, the clock and caches it started with)
// varies from one process to the next, so one process per side per round samples that variation
// on both sides alike instead of freezing one draw of it into each side; an executable side
// (another build of accelbench) can only be measured that way; and the results document is the
// interface every build keeps, whatever its database's schema. The children run through the
// external runner (workloads/external/process.hpp): their own process group, a timeout, and Ctrl-C
// forwarded as SIGINT so that a child ends its own program's process group before it exits.
#include "harness/app/cli/ab_command.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <random>

#include <fmt/format.h>

#include "harness/app/cli/command.hpp"
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/compare_commands.hpp"
#include "harness/app/cli/options.hpp"
#include "harness/app/cli/sigint_guard.hpp"
#include "harness/compare/compare.hpp"
#include "harness/core/error.hpp"
#include "harness/core/progress.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "workloads/external/process.hpp"

namespace accelbench::cli {

namespace {

// The body of a "..." word from text[i], just after the quote, appended to `word`; returns the
// index of the closing quote, or npos.
size_t double_quoted(const std::string& text, size_t i, std::string& word) {
  for (; i < text.size(); ++i) {
    if (text[i] == '"')
      return i;
    if (text[i] == '\\' && i + 1 < text.size() && std::strchr("\\\"$`\n", text[i + 1]) &&
        text[i + 1] != '\0')
      ++i;
    word += text[i];
  }
  return std::string::npos;
}

} // namespace

std::vector<std::string> split_words(const std::string& text, const std::string& option) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  auto unclosed = [&](char quote, size_t at) {
    return usage_error(fmt::format("{} '{}': the quote {} at character {} is not closed", option,
                                   printable(text), quote, at + 1));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word)
        words.push_back(std::exchange(word, {}));
      in_word = false;
      continue;
    }
    in_word = true;
    size_t end = i;
    if (c == '\'') {
      end = text.find('\'', i + 1);
      if (end != std::string::npos)
        word.append(text, i + 1, end - i - 1);
    } else if (c == '"') {
      end = double_quoted(text, i + 1, word);
    } else if (c == '\\') {
      if (i + 1 == text.size())
        throw usage_error(
            fmt::format("{} '{}' ends with a lone backslash", option, printable(text)));
      word += text[++end];
    } else {
      word += c;
    }
    if (end == std::string::npos)
      throw unclosed(c, i);
    i = end;
  }
  if (in_word)
    words.push_back(word);
  return words;
}

namespace ab {
namespace {

namespace fs = std::filesystem;

// A child asked to stop (SIGINT) gets this long to end its own program (whose grace is 2 s) and
// exit before its group is killed.
constexpr double k_child_grace_s = 10;

// Ctrl-C: the running child is asked to stop, its round is dropped, the rounds stored so far stay.
// Lock-free, so the handler may set them.
std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

void on_interrupt(int) {
  g_stop = true;
  static const char first[] =
      "\naccelbench: ab: interrupted; stopping the running child (its round is not stored)\n";
  static const char again[] = "\naccelbench: ab: still stopping the child (it is killed at most "
                              "10 s after the first Ctrl-C)\n";
  if (g_interrupts.fetch_add(1) == 0)
    (void)!::write(STDERR_FILENO, first, sizeof first - 1);
  else
    (void)!::write(STDERR_FILENO, again, sizeof again - 1);
}

struct ab_options {
  run_options measured;             // the common part: what to measure, as `run` takes it
  std::vector<std::string> plugins; // the common part's --plugin
  std::vector<std::string> baseline_args, candidate_args;
  std::string baseline_exe, candidate_exe;
  int64_t rounds = 10;
  uint64_t seed = 0;
  bool seed_given = false;
  std::vector<std::string> tags;
  std::string db;
  double timeout_s = 0; // one child process; 0: none
  bool quiet = false;
  compare_cli_options compare;
};

struct side {
  std::string name;                 // baseline | candidate
  std::string exe;                  // the accelbench that measures it, as executed
  std::string shown;                // ... and as messages name it
  std::vector<std::string> options; // its own run options (its ARGS before a --)
  std::vector<std::string> command; // its own program (its ARGS after a --), else the common one
};

// The A/B as it will run.
struct job {
  std::array<side, 2> sides;       // baseline, candidate
  std::vector<std::string> common; // the common run options (measured_args)
  std::vector<std::string> command;
  std::string tag;               // T: the sides are T:baseline and T:candidate
  std::vector<std::string> tags; // every --tag (T first)
  std::string id, job_id;        // the A/B's uuid; the one job both sides share
  uint64_t seed = 0;
  int64_t rounds = 0;
  double timeout_s = 0;
  std::string db; // as given (resolved where it is opened)
};

// This accelbench, as a child executes it: /proc/self/exe of the forked child is the image this
// process runs, even after its file was rebuilt or removed during a long A/B.
constexpr const char* k_this_exe = "/proc/self/exe";

// The executable a side runs: this one, or the given path when it is an executable file.
std::string side_executable(const std::string& given, const char* option) {
  if (given.empty())
    return k_this_exe;
  struct stat st {};
  const char* why = nullptr;
  if (::stat(given.c_str(), &st) != 0)
    why = "no such file";
  else if (!S_ISREG(st.st_mode))
    why = "not a file";
  else if (::access(given.c_str(), X_OK) != 0)
    why = "not executable";
  if (why)
    throw input_error(fmt::format("{} '{}': {}", option, printable(given), why));
  return given;
}

// A side's ARGS split into its options and, after a --, its program. --rounds and --db are ab's:
// every child runs one round into a database of its own.
side side_of(const std::string& name, const std::string& exe, const std::vector<std::string>& args,
             const std::string& option) {
  std::error_code ec;
  const fs::path self = fs::read_symlink(k_this_exe, ec);
  side s{name, exe, exe != k_this_exe ? exe : ec ? "accelbench" : self.string(), {}, {}};
  bool program = false;
  for (const auto& text : args)
    for (auto& w : split_words(text, option)) {
      if (!program && w == "--") {
        program = true;
        continue;
      }
      for (const char* owned : {"--rounds", "--db"})
        if (!program && (w == owned || w.rfind(std::string(owned) + "=", 0) == 0))
          throw usage_error(fmt::format("{}: {} is ab's own (each child measures one round into a "
                                        "database of its own); give it to ab",
                                        option, owned));
      (program ? s.command : s.options).push_back(std::move(w));
    }
  if (program && s.command.empty())
    throw usage_error(fmt::format("{}: nothing follows its --", option));
  return s;
}

// The A/B's name: the first --tag, else ab-<UTC time>. A '&' would split the selector
// tag=T:baseline that compares its sides.
std::string ab_tag(const std::vector<std::string>& tags) {
  if (tags.empty()) {
    std::string t = now_iso8601().substr(0, 19); // 2026-12-06T05:25:23
    std::erase(t, ':');
    return "ab-" + t;
  }
  if (tags.front().find('&') != std::string::npos)
    throw usage_error(fmt::format("--tag '{}': the A/B's tag may not hold '&' (it joins the terms "
                                  "of the selector tag=T:baseline that compares its sides)",
                                  printable(tags.front())));
  return tags.front();
}

job plan_job(const ab_options& o) {
  job j;
  j.sides[0] = side_of("baseline", side_executable(o.baseline_exe, "--baseline-exe"),
                       o.baseline_args, "--baseline-args");
  j.sides[1] = side_of("candidate", side_executable(o.candidate_exe, "--candidate-exe"),
                       o.candidate_args, "--candidate-args");
  j.common = measured_args(o.measured, o.plugins);
  j.command = o.measured.command;
  for (const side& s : j.sides)
    if (!s.command.empty() && !j.command.empty())
      throw usage_error(fmt::format("--{}-args gives a program after --, and so does the common "
                                    "part: give the program once, or each side its own",
                                    s.name));
  j.tag = ab_tag(o.tags);
  j.tags = o.tags;
  if (j.tags.empty())
    j.tags.push_back(j.tag);
  j.id = new_uuid();
  j.job_id = new_uuid();
  j.seed = o.seed_given ? o.seed : std::random_device{}();
  j.rounds = o.rounds;
  j.timeout_s = o.timeout_s;
  j.db = o.db;
  return j;
}

std::string side_tag(const job& j, const std::string& side) { return j.tag + ":" + side; }

// The sides' tags must select this A/B's runs alone. Read only: nothing is created or changed
// before the first round is stored.
void check_tag_free(const job& j) {
  const fs::path path = resolve_db_path(j.db);
  if (!store::is_postgres_uri(path.string()) && !fs::exists(path))
    return;
  auto db = store::store::open(path, store::access::read_only);
  for (const auto& t : db.tags())
    if (t == side_tag(j, "baseline") || t == side_tag(j, "candidate"))
      throw input_error(fmt::format("--tag '{}': {} already holds runs tagged {} (an A/B's sides "
                                    "must select its own runs alone); choose another --tag",
                                    printable(j.tag), printable(db.path().string()), printable(t)));
}

// The children's databases and exports, removed on every way out.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "accelbench-ab-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw error(fmt::format("cannot make a temporary folder: {}", std::strerror(errno)));
    path = tmpl;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// ---------------------------------------------------------------------------------------------
// One side of one round: its child `run`, then its child `export`.

struct side_result {
  std::vector<run> runs;
  json systems = json::array();
  double wall_s = 0;    // the children's wall time, spawn to exit
  size_t children = 0;  // processes started
  bool stopped = false; // Ctrl-C: nothing of this round is stored
  std::string warning;  // the child failed after storing runs: they are kept, and this said
};

external::process_outcome run_child(const job& j, std::vector<std::string> argv, side_result& res) {
  external::launch l;
  l.argv = std::move(argv);
  l.substitute = false; // a {K} of the measured program is the child's to fill
  l.cancel = &g_stop;
  l.stop_signal = SIGINT;
  l.kill_grace_s = k_child_grace_s;
  l.timeout_s = j.timeout_s;
  l.max_stdout_bytes = std::size_t{64} << 10; // its result table: not read
  auto out = external::run_process(l);
  res.wall_s += out.wall_seconds;
  ++res.children;
  res.stopped = res.stopped || out.cancelled || g_stop;
  return out;
}

std::vector<std::string> run_argv(const job& j, const side& s, const std::string& db) {
  std::vector<std::string> a = {s.exe, "run"};
  a.insert(a.end(), j.common.begin(), j.common.end());
  a.insert(a.end(), s.options.begin(), s.options.end());
  a.insert(a.end(), {"--rounds", "1", "--quiet", "--tag", side_tag(j, s.name), "--db", db});
  const auto& program = s.command.empty() ? j.command : s.command;
  if (!program.empty()) {
    a.emplace_back("--");
    a.insert(a.end(), program.begin(), program.end());
  }
  return a;
}

std::string where(const side& s, int64_t round) {
  return fmt::format("the {} side, round {}", s.name, round);
}

// The last bytes of a child's stderr, on one line.
std::string stderr_end(const external::process_outcome& o) {
  std::string t = o.stderr_tail;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())))
    t.pop_back();
  if (t.size() > 300)
    t = "..." + t.substr(t.size() - 300);
  return t.empty() ? "(nothing)" : printable(t);
}

// A child `run` ends with 0 (every run VALID) or 1 (a run failed or was INVALID; stored with its
// reason): its runs are the side's round. Any other end (a refused command line, a crash, the
// timeout) keeps what it stored, said once; with nothing stored the side cannot be measured and
// the command stops: exit 2 when the child refused its command line, else 1.
void judge_child(const side& s, int64_t round, const external::process_outcome& ran,
                 side_result& res) {
  const bool normal = ran.signal == 0 && !ran.timed_out &&
                      (ran.exit_code == exit_ok || ran.exit_code == exit_failed);
  const std::string how = ran.failure().empty() ? "exit code 0" : ran.failure();
  if (!res.runs.empty()) {
    if (!normal)
      res.warning = fmt::format("{}: the child ended with {} after storing {} run(s), kept; its "
                                "stderr ends: {}",
                                where(s, round), how, res.runs.size(), stderr_end(ran));
    return;
  }
  const std::string msg =
      fmt::format("{}: the child `{} run` stored nothing ({}); its stderr ends: {}",
                  where(s, round), printable(s.shown), how, stderr_end(ran));
  if (ran.exit_code == exit_usage)
    throw input_error(msg);
  throw program_error(msg);
}

// The runs the child stored, through its own export: the results document every build writes.
void read_export(const job& j, const side& s, int64_t round, const std::string& stem,
                 side_result& res) {
  if (!fs::exists(stem + ".db"))
    return;
  const auto out = run_child(j, {s.exe, "export", "--db", stem + ".db", "-o", stem + ".json"}, res);
  if (res.stopped)
    return;
  if (!out.succeeded())
    throw program_error(fmt::format("{}: the child `{} export` failed ({}); its stderr ends: {}",
                                    where(s, round), printable(s.shown), out.failure(),
                                    stderr_end(out)));
  res.runs = read_results_document(read_input_file(stem + ".json", "the child's export"),
                                   where(s, round) + " (its export)", &res.systems);
}

side_result measure_side(const job& j, const side& s, int64_t round, const fs::path& dir) {
  const std::string stem = (dir / fmt::format("{}-{}", s.name, round)).string();
  side_result res;
  const auto ran = run_child(j, run_argv(j, s, stem + ".db"), res);
  if (!res.stopped)
    read_export(j, s, round, stem, res);
  if (!res.stopped)
    judge_child(s, round, ran, res);
  return res;
}

// The runs of a side made runs of the A/B: its tags, the job both sides share, and where each
// stood (extra.ab; slot: its place in the side's plan, which pairs the sides' configs).
void label_runs(std::vector<run>& runs, const job& j, const side& s, int64_t round, int position) {
  std::vector<std::string> tags = j.tags;
  tags.push_back(side_tag(j, s.name));
  for (size_t slot = 0; slot < runs.size(); ++slot) {
    run& r = runs[slot];
    r.id = 0;
    for (const auto& t : tags)
      if (std::find(r.tags.begin(), r.tags.end(), t) == r.tags.end())
        r.tags.push_back(t);
    r.extra["job_id"] = j.job_id;
    r.extra["ab"] = json{{"id", j.id},           {"round", round}, {"side", s.name},
                         {"position", position}, {"seed", j.seed}, {"slot", slot}};
  }
}

// ---------------------------------------------------------------------------------------------
// The rounds.

struct tally {
  int64_t rounds = 0, baseline_first = 0; // rounds stored, and those the baseline opened
  size_t runs = 0;
  size_t children = 0;
  double child_wall_s = 0; // the children's wall time
  double measured_s = 0;   // what their runs measured: finished_at - started_at
};

double measured_seconds(const std::vector<run>& runs) {
  double s = 0;
  for (const run& r : runs)
    s += compare::seconds_between(r.started_at, r.finished_at);
  return s;
}

void tell_about(const std::vector<run>& runs, progress& bar) {
  for (const run& r : runs) {
    const json& ab = r.extra["ab"];
    const std::string who = fmt::format("accelbench: ab: run {} ({} round {})", r.id,
                                        ab["side"].get<std::string>(), ab["round"].get<int64_t>());
    if (r.status == run_status::failed)
      bar.message(fmt::format("{} failed: {}", who, printable(r.status_reason)));
    for (const auto& why : r.valid ? std::vector<std::string>{} : r.invalid_reasons)
      bar.message(fmt::format("{} INVALID: {}", who, printable(why)));
  }
}

// Both sides' runs of a finished round in one transaction: a round is stored whole or not at all.
void store_round(std::optional<store::store>& db, const job& j, std::vector<run>& runs,
                 const json& systems) {
  if (!db)
    db.emplace(store::store::open(resolve_db_path(j.db), store::access::read_write));
  for (const auto& s : systems)
    db->upsert_system(store::system_from_json(s));
  db->insert_runs(runs);
}

struct round_context {
  const job& j;
  const fs::path& dir;
  std::optional<store::store>& db;
  tally& t;
  progress& bar;
};

// One round: each side once, in the drawn order, then both stored together. False when Ctrl-C
// stopped it: nothing of it is stored.
bool run_round(round_context& c, int64_t round, bool baseline_first) {
  std::vector<run> runs;
  json systems = json::array();
  for (int position = 0; position < 2; ++position) {
    const side& s = c.j.sides[(position == 0) == baseline_first ? 0 : 1];
    if (g_stop)
      return false;
    c.bar.step(static_cast<size_t>(2 * (round - 1) + position),
               fmt::format("round {}/{} {}", round, c.j.rounds, s.name));
    side_result r = measure_side(c.j, s, round, c.dir);
    c.t.children += r.children;
    c.t.child_wall_s += r.wall_s;
    if (r.stopped)
      return false;
    if (!r.warning.empty())
      c.bar.message("accelbench: ab: warning: " + r.warning);
    label_runs(r.runs, c.j, s, round, position);
    c.t.measured_s += measured_seconds(r.runs);
    std::move(r.runs.begin(), r.runs.end(), std::back_inserter(runs));
    systems.insert(systems.end(), r.systems.begin(), r.systems.end());
  }
  store_round(c.db, c.j, runs, systems);
  tell_about(runs, c.bar);
  ++c.t.rounds;
  c.t.baseline_first += baseline_first ? 1 : 0;
  c.t.runs += runs.size();
  return true;
}

// ---------------------------------------------------------------------------------------------
// What is printed at the end (stderr: stdout holds the comparison alone, in its --format).

// A word as a shell reads it back.
std::string shell_word(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._:/=+-,@%", c);
  });
  if (plain)
    return w;
  std::string q = "'";
  for (char c : w)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string summary_line(const job& j, const tally& t) {
  const std::string b = "tag=" + side_tag(j, "baseline"), c = "tag=" + side_tag(j, "candidate");
  auto rounds = [](int64_t n) { return fmt::format("{} round{}", n, n == 1 ? "" : "s"); };
  return fmt::format("ab: {}, order seed {}, baseline first in {}; stored as {} / {} (reproduce "
                     "with: accelbench compare --baseline {} --candidate {}{})",
                     rounds(t.rounds), j.seed, rounds(t.baseline_first), b, c, shell_word(b),
                     shell_word(c), j.db.empty() ? "" : " --db " + shell_word(j.db));
}

std::string overhead_line(const tally& t) {
  return fmt::format("ab: process start/export overhead {:.2f} s of {:.2f} s ({} child processes; "
                     "their runs measured {:.2f} s)",
                     t.child_wall_s - t.measured_s, t.child_wall_s, t.children, t.measured_s);
}

int stopped(const job& j, const tally& t, int64_t round) {
  std::cerr << fmt::format("accelbench: ab: interrupted in round {} of {} (nothing of it is "
                           "stored); {} round(s), {} run(s), stored{}\n",
                           round, j.rounds, t.rounds, t.runs,
                           t.rounds ? " under tag=" + printable(j.tag) : "");
  if (t.rounds > 0)
    std::cerr << summary_line(j, t) << "\n";
  return 130;
}

int compare_sides(const ab_options& o, const job& j, const tally& t) {
  std::cerr << summary_line(j, t) << "\n" << overhead_line(t) << "\n";
  compare_cli_options c = o.compare;
  c.baseline = "tag=" + side_tag(j, "baseline");
  c.candidate = "tag=" + side_tag(j, "candidate");
  c.db = o.db;
  return print_comparison(c);
}

int measure_rounds(const ab_options& o, const job& j) {
  const temp_dir dir;
  std::optional<store::store> db;
  tally t;
  progress bar(static_cast<size_t>(2 * j.rounds), progress::for_stderr(o.quiet));
  round_context c{j, dir.path, db, t, bar};
  std::mt19937_64 order(j.seed); // its output is the same on every platform (the standard's)
  g_stop = false;
  g_interrupts = 0;
  const sigint_guard ctrl_c(on_interrupt, SA_RESTART);
  for (int64_t round = 1; round <= j.rounds; ++round) {
    const bool baseline_first = (order() >> 63) == 0;
    try {
      if (!run_round(c, round, baseline_first)) {
        bar.finish();
        return stopped(j, t, round);
      }
    } catch (const error&) {
      bar.finish();
      if (t.rounds > 0)
        std::cerr << fmt::format("accelbench: ab: {} round(s) before this one are stored under "
                                 "tag={}\n",
                                 t.rounds, printable(j.tag));
      throw;
    }
  }
  bar.finish();
  return compare_sides(o, j, t);
}

int cmd_ab(const ab_options& o) {
  check_compare_options(o.compare); // before anything is measured
  const job j = plan_job(o);
  check_tag_free(j);
  return measure_rounds(o, j);
}

} // namespace
} // namespace ab

command_hook add_ab(CLI::App& app, context&) {
  auto o = std::make_shared<ab::ab_options>();
  auto* cmd = app.add_subcommand(
      "ab", "Measure a baseline and a candidate in one job, round by round in random order, each "
            "side in a fresh process; then compare them (exit codes as compare)");
  add_measured_options(cmd, o->measured, o->plugins);
  cmd->add_option("--baseline-args", o->baseline_args,
                  "The baseline's own run options, split into words as a shell splits them "
                  "(quotes, backslashes; nothing expanded); after a --, its own program "
                  "(repeatable)")
      ->allow_extra_args(false)
      ->check(text_value(true));
  cmd->add_option("--candidate-args", o->candidate_args, "The candidate's (as --baseline-args)")
      ->allow_extra_args(false)
      ->check(text_value(true));
  cmd->add_option("--baseline-exe", o->baseline_exe,
                  "The accelbench that measures the baseline (default: this one); it must take "
                  "run ... --rounds 1 --quiet --tag T --db PATH and export --db PATH -o FILE")
      ->check(text_value(false));
  cmd->add_option("--candidate-exe", o->candidate_exe, "The candidate's (as --baseline-exe)")
      ->check(text_value(false));
  cmd->add_option("--rounds", o->rounds,
                  "Rounds: each side measured once a round, in a fresh process, in an order drawn "
                  "per round (default 10)")
      ->check(integer_in(1, 100000));
  auto* seed = cmd->add_option("--seed", o->seed,
                               "Seed of the order of the sides in each round (default: a fresh "
                               "one, printed and stored)")
                   ->check(integer_in(0, std::numeric_limits<int64_t>::max())); // JSON's int64
  cmd->add_option("--tag", o->tags,
                  "Tag every run (repeatable); the first names the A/B: its sides are T:baseline "
                  "and T:candidate (default: ab-<UTC time>)")
      ->allow_extra_args(false)
      ->check(text_value(false));
  cmd->add_option("--timeout", o->timeout_s,
                  "Seconds one child process may run (default: none); one over it is stopped")
      ->check(number_in(0, 1e9, true, false));
  cmd->add_flag("--quiet", o->quiet, "No progress on stderr");
  add_comparison_options(cmd, o->compare);
  add_db_option(cmd, o->db);
  return {cmd, [o, seed] {
            o->seed_given = seed->count() > 0;
            o->compare.db = o->db;
            return ab::cmd_ab(*o);
          }};
}

} // namespace accelbench::cli
