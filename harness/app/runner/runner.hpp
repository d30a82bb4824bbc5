#pragma once
// The runner: what `accelbench run` does between its options and its output, as a library with no
// command-line or terminal knowledge (the shape of Google Benchmark's BenchmarkRunner: the caller
// owns the loop, the store and the printing; the runner plans and runs one config at a time).
//
//   plan(registry, request)          every config of the request resolved, checked and given its
//                                    rules; bad input throws before anything runs, and across
//                                    ranks every rank agrees on the plan or all stop
//   describe_job(request, plan)      what every run of the job shares: environment, fingerprint,
//                                    system, tags, rounds, job id
//   job_order(plan, rounds)          the order of the job's runs (interleaved rounds)
//   run_one(planned, environment)    one config of one round measured (or recorded as skipped)
//                                    into a run record; a failure inside is data, never a throw,
//                                    and a value that is no finite number never a VALID result
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/model.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/workload.hpp"

namespace accelbench::runner {

// What to run, as given: KEY=VALUE text is parsed and checked by plan().
struct request {
  std::string workload;
  std::string backend = "cpu";
  std::vector<std::string> sets;           // KEY=VALUE
  std::vector<std::string> sweeps;         // KEY=V1,V2,...
  std::string shapes;                      // catalogue name or file
  std::string rules;                       // ruleset id or file
  std::vector<std::string> rule_overrides; // KEY=VALUE
  std::string system;                      // "": the host name
  std::vector<std::string> tags;
  std::string suite;
  bool force = false; // plan sweeps over 10,000 configs
  uint64_t seed = 0;
  int64_t rounds = 0; // runs of each config, interleaved; 0: the suite's, else the rules'
};

// One config, resolved and checked, with its effective rules.
struct planned {
  const workload* w = nullptr;
  config cfg;
  ruleset rules;
  json user = json::object();
  std::string label;       // catalogue entry name
  std::string skip_reason; // non-empty: stored as skipped
};

// Every config of a request, and what a suite says of the job as a whole.
struct job_plan {
  std::vector<planned> configs;
  std::string suite;        // the suite's name ("" for a workload): the runs' suite: tag
  int64_t suite_rounds = 0; // 0: the suite does not say
};

// Plans the request (bad input: input_error or usage_error, before anything runs). Across ranks,
// each rank plans; a failure on any rank, or a rank whose plan differs from rank 0's, is the same
// error (agreed_error, with the exit code) on every rank.
job_plan plan(const registry& reg, const request& r);

// The workload plugins a suite names (its "plugins": paths as written), for the front end to load
// before planning; none for an empty `suite`. Throws input_error like plan() for a suite that
// cannot be found, read or validated.
std::vector<std::string> suite_plugins(const std::string& suite);

// What every run of a job shares. clang-tidy 14 reads its implicit moves as throwing (a json
// member): they are noexcept.
struct environment { // NOLINT(bugprone-exception-escape)
  json env;
  std::string fingerprint, system;
  std::vector<std::string> tags;
  int64_t rounds = 1;
  std::string job_id;          // one uuid for the job: its rounds are one point of a history
  uint64_t seed = 0;           // the request's seed (0: each workload draws one)
  std::ostream* log = nullptr; // the workloads' progress and logs; never results
  bool interactive = false;    // log is a terminal: a live progress line is welcome
  const std::atomic<bool>* cancel = nullptr; // set on Ctrl-C (run_context::cancel)
};

// Captures the environment and fingerprint, names the system and tags, and fixes the rounds:
// the request's, else the suite's, else the largest measurement.rounds of the plan's rules.
environment describe_job(const request& r, const job_plan& p);

// The job's order as (round, index into plan.configs): round by round, every config in each
// (asv's interleaved rounds), so that a drift of the machine over the job lands in the spread
// between a config's runs instead of between two configs. A skipped config is recorded once.
std::vector<std::pair<int64_t, size_t>> job_order(const std::vector<planned>& plan, int64_t rounds);

// One config of one round (0-based) into a run record: labelled, measured through the workload's
// execute (or marked skipped), its conditions judged, and across ranks a failure or INVALID
// reason of any rank told to all. Never throws for a failure inside the workload.
run run_one(const planned& p, const environment& env, int64_t round = 0);

// The rule that every number a run stores is finite, applied by run_one to every run after its
// workload ran: a metric, a number in run.extra or a sample's extra that is not finite, and a
// sample that is not a finite number > 0 (import's rule for samples), is dropped and the run made
// INVALID with a reason naming it and its value ("metric tflops is inf (not a finite number): not
// stored"), so that no such value is ever a VALID result and every stored run exports and imports.
void drop_impossible_values(run& r);

} // namespace accelbench::runner
