// harness/core/conditions: the conditions measured around a run and the ruleset's treatment.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness/core/conditions.hpp"

using namespace accelbench;

namespace {
run with_samples(std::vector<double> v) {
  run r;
  for (size_t i = 0; i < v.size(); ++i)
    r.samples.push_back(sample{(int64_t)i, v[i], 1});
  return r;
}
machine_state state(double wall, double busy, double own, int cores = 2) {
  machine_state m;
  m.wall_s = wall;
  m.busy_cpu_s = busy;
  m.own_cpu_s = own;
  m.cores = cores;
  m.load1 = 1;
  return m;
}
bool has_warning(const run& r, const std::string& word) {
  for (const auto& w : run_warnings(r))
    if (w.find(word) != std::string::npos)
      return true;
  return false;
}
} // namespace

TEST_CASE("conditions: other processes' CPU excludes our own", "[conditions]") {
  // 10 s of wall on 2 cores: 16 s busy, 12 of them ours -> others used 4 s = 20% of the cores.
  CHECK(other_load(state(0, 0, 0), state(10, 16, 12)) == Approx(0.2));
  CHECK(other_load(state(0, 0, 0), state(10, 12, 12)) == Approx(0.0));
  CHECK(other_load(state(0, 0, 0), state(0.01, 1, 0)) == 0); // too short to tell
}

TEST_CASE("conditions: high CV, a loaded machine and the governor are warnings or INVALID",
          "[conditions]") {
  condition_rules rules;
  run noisy = with_samples({1.0, 1.3, 0.7, 1.2, 0.8});
  judge_conditions(noisy, rules, state(0, 0, 0), state(10, 10, 10));
  CHECK(noisy.valid);
  CHECK(has_warning(noisy, "coefficient of variation"));
  CHECK(noisy.extra["conditions"]["cv"].get<double>() > 0.05);

  run quiet = with_samples({1.0, 1.001, 0.999, 1.0, 1.0});
  machine_state loaded = state(10, 20, 5); // others used 15 s of 20
  loaded.governor = "powersave";
  loaded.turbo = "on";
  judge_conditions(quiet, rules, state(0, 0, 0), loaded);
  CHECK_FALSE(has_warning(quiet, "coefficient of variation"));
  CHECK(has_warning(quiet, "other processes used 75%"));
  CHECK(has_warning(quiet, "powersave"));
  CHECK(has_warning(quiet, "turbo"));

  rules.on_high_cv = "invalid";
  rules.on_loaded = "ignore";
  run strict = with_samples({1.0, 1.3, 0.7, 1.2, 0.8});
  judge_conditions(strict, rules, state(0, 0, 0), state(10, 20, 5));
  CHECK_FALSE(strict.valid);
  REQUIRE(strict.invalid_reasons.size() == 1);
  CHECK(strict.invalid_reasons[0].find("coefficient of variation") != std::string::npos);
  CHECK_FALSE(has_warning(strict, "other processes"));
}

TEST_CASE("conditions: imported results from a debug library build are flagged", "[conditions]") {
  run r = with_samples({1.0, 1.0, 1.0});
  r.extra["library_build_type"] = "debug";
  judge_imported_conditions(r, condition_rules{});
  CHECK(has_warning(r, "debug build"));
  condition_rules strict;
  strict.on_debug_library = "invalid";
  run s = with_samples({1.0, 1.0, 1.0});
  s.extra["library_build_type"] = "debug";
  judge_imported_conditions(s, strict);
  CHECK_FALSE(s.valid);
}

TEST_CASE("conditions: a process spinning beside us is measured as load", "[conditions][timing]") {
  int started[2];
  REQUIRE(pipe(started) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) { // say so, then spin on one core until the parent kills it
    close(started[0]);
    const char go = 1;
    (void)!write(started[1], &go, 1);
    close(started[1]);
    // Hang guard only: a child whose parent died before killing it ends by itself.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    volatile unsigned long x = 0;
    while (std::chrono::steady_clock::now() < end)
      x = x + 1;
    _exit(0);
  }
  close(started[1]);
  char go = 0;
  const bool spinning = read(started[0], &go, 1) == 1; // the child runs from here on
  close(started[0]);
  // The whole window lies inside the child's spin: it ends only when the child is killed, after
  // the second reading.
  const machine_state before = read_machine_state();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const machine_state after = read_machine_state();
  kill(child, SIGKILL);
  int st = 0;
  waitpid(child, &st, 0);
  REQUIRE(spinning);
  REQUIRE(before.cores > 0);
  // One core busy out of `cores`, less whatever the scheduler did not give the child; anything
  // else running on the machine only adds to it.
  CHECK(other_load(before, after) > 0.5 / before.cores);
}
