#pragma once
// The most that one run may hold: tags, metrics and samples, and the length of a tag and of a
// metric name. The one home of these figures and of the words that refuse them; every path that
// takes runs in checks them before it reads the rest (the external protocol, the rulesets'
// repetitions, --tag, import, the results server's POST), and the store's insert is the last
// guard. schemas/results.schema.json (maxItems), schemas/ruleset.schema.json (the maximum of
// repetitions), schemas/external-protocol.schema.json (prose), docs/store.md and
// docs/external.md state the same figures; tests/harness/core/test_limits.cpp checks the schemas.
//
// Why these figures (real runs are far below them; each is a hard ceiling, not a target):
//   samples  100,000: a kernel run keeps the ruleset's repetitions (10), a training run one
//            sample per step (500 at most for time to train), an external program what it
//            reports (the PyTorch example 20), a Google Benchmark import its repetitions. At the
//            ceiling a run is about 4 MB in the database and `show`/`export` read it in about a
//            second; the 2.1 million samples one program wrote took 74 s and 680 MB to store.
//   metrics   10,000: a kernel or training run has under 20, a Google Benchmark run its
//            counters (tens); an external program's own figures are the rest.
//   tags      10,000: runs carry a few (--tag, suite:NAME, an A/B's side, import --tag); a tag
//            selects runs (tag=), it is not a place for data.
//   a tag 256 bytes, a metric name 256 bytes: the longest in the repository's data are 18 and
//            28; both are printed in tables and sent in URLs (tag=).
#include <cstddef>
#include <string>
#include <vector>

namespace accelbench {

struct run;

namespace limits {

inline constexpr std::size_t k_max_tags = 10'000;
inline constexpr std::size_t k_max_metrics = 10'000;
inline constexpr std::size_t k_max_samples = 100'000;
inline constexpr std::size_t k_max_tag_bytes = 256;
inline constexpr std::size_t k_max_metric_name_bytes = 256;
// Of a run's metrics, the most a program may report of its own (an external program through the
// results protocol): the rest are kept for the figures accelbench derives beside them (time, cv
// and the rates of an external run: 5 today), so that a program at its limit leaves a run within
// the run's.
inline constexpr std::size_t k_reserved_metrics = 16;
inline constexpr std::size_t k_max_program_metrics = k_max_metrics - k_reserved_metrics;

// Each returns what is over its limit in one line naming the value and the limit ("12000 tags,
// more than the 10000 a run may hold"), or "" when it is within.
std::string tag_count_problem(std::size_t tags);
std::string metric_count_problem(std::size_t metrics);
std::string sample_count_problem(std::size_t samples);
std::string program_metric_count_problem(std::size_t metrics); // k_max_program_metrics
std::string tag_problem(const std::string& tag);
std::string metric_name_problem(const std::string& name);

// The first of the problems above in a run, or "".
std::string run_problem(const run& r);
// The first problem of a list of tags (--tag on a command line): their count, then each one.
std::string tags_problem(const std::vector<std::string>& tags);

// A run over a limit is failed with the reason, and what it holds beyond the limits is dropped
// so that it can still be stored (a workload that wrote 2 million samples is a failed run, not a
// command that dies at the store). Returns true when it was.
bool fail_over_limits(run& r);

} // namespace limits
} // namespace accelbench
