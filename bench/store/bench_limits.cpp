// Time against size for the tags, metrics and samples of one run, through the paths each one
// takes, at n = 10^4, 10^5 and 10^6 (harness/core/limits.hpp: at most 10,000 tags, 10,000 metrics
// and 100,000 samples a run; tags and metrics also at 10^3, since they are refused past 10^4):
//   metrics   an external program's protocol text (a sample, then n metric lines) parsed, and each
//             metric found and set on the run by name, as external's add_metrics does; past the
//             limit the parser refuses the line of the 9,985th name: the time to refuse. And the
//             run's metric index alone (add_metric, find_metric), beyond the limit, beside a bare
//             std::unordered_map of the same names (what hashing costs here as n outgrows the
//             caches).
//   tags      an export document of one run with n tags imported: read (read_results_document)
//             and stored in one transaction; past the limit, the time to refuse the document.
//   samples   one run of n samples stored, read back whole (show), exported (read, document,
//             text) and its export document imported; past the limit, the import's time to
//             refuse the document.
// Each line prints the seconds (the median of --reps) and t(n) / t(10^4) / (n / 10^4): 1.0 is
// linear, 10 at n = 10^5 would be quadratic; a refusal's ratio compares its time with the
// accepted 10^4 figure (for a program's metrics, 9,984, the most it may report).
//
//   ./bench/store/accelbench_bench_limits [--reps R]
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/limits.hpp"
#include "harness/core/results_document.hpp"
#include "harness/core/stats.hpp"
#include "harness/core/text_input.hpp"
#include "harness/store/store.hpp"
#include "tests/support/synthetic_run.hpp"
#include "workloads/external/protocol.hpp"

using namespace accelbench;
using clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_sizes[] = {10'000, 100'000, 1'000'000};
// Tags and metrics are refused past 10^4: 10^3 shows how their accepted path grows.
constexpr std::size_t k_sizes_from_1e3[] = {1'000, 10'000, 100'000, 1'000'000};

// The median seconds of `reps` calls of `f`.
double seconds_of(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  t.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    const auto t0 = clk::now();
    f();
    t.push_back(std::chrono::duration<double>(clk::now() - t0).count());
  }
  return stats::median(t);
}

// One measured size of a path: n, its seconds, and a note (refused).
struct point {
  std::size_t n;
  double seconds;
  std::string note;
};

// A path's lines: its seconds at each n and t(n) / t(b) / (n / b), its linearity against the
// figure at n = b (10^4, or the limit where that is below 10^4).
void print(const std::string& path, const std::vector<point>& points, std::size_t b = 10'000) {
  double at_b = 0;
  for (const auto& p : points)
    at_b = p.n == b ? p.seconds : at_b;
  for (const auto& p : points)
    std::cout << fmt::format("{:<44} n={:>8}  {:9.4f} s  ratio {:6.2f}{}\n", path, p.n, p.seconds,
                             p.seconds / at_b / (double(p.n) / double(b)), p.note);
}

run base_run() {
  run r = test_support::gemm_run({{"M", "64"}}, "bench");
  r.uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  r.started_at = r.finished_at = "2026-10-01T02:00:00.000Z";
  r.samples = {{0, 1e-3, 1, json::object()}};
  return r;
}

// ---------------------------------------------------------------------------------------------
// metrics

std::string metric_lines(std::size_t n) {
  std::string text;
  text.reserve(n * 80);
  text += "{\"sample\": {\"seconds\": 0.5}}\n";
  for (std::size_t i = 0; i < n; ++i)
    text += fmt::format(
        "{{\"metric\": {{\"name\": \"m{}\", \"value\": 1, \"unit\": \"\", \"direction\": "
        "\"lower\"}}}}\n",
        i);
  return text;
}

// The protocol parsed, then each metric looked up and set by name on the run, as add_metrics.
void protocol_and_add_metrics(const std::string& text) {
  const external::protocol_result p = external::parse_protocol(text);
  run out;
  out.add_metric("time", 0.5, "s", direction::lower_is_better);
  for (const auto& m : p.metrics)
    if (!out.find_metric(m.name))
      out.add_metric(m.name, m.value, m.unit, direction_from_string(m.direction));
  if (p.ok() != (p.metrics.size() <= limits::k_max_program_metrics)) {
    std::cerr << "unexpected protocol outcome: " << p.error << "\n";
    std::exit(1);
  }
}

void metric_index(std::size_t n) {
  run r;
  for (std::size_t i = 0; i < n; ++i)
    r.add_metric(fmt::format("m{}", i), 1, "", direction::lower_is_better);
  for (std::size_t i = 0; i < n; ++i)
    if (!r.find_metric(fmt::format("m{}", i)))
      std::exit(1);
}

// The same names in a bare std::unordered_map, inserted and found: what hashing n strings costs on
// this machine (past its caches, more per name as n grows), beside the run's index.
void bare_hash_map(std::size_t n) {
  std::unordered_map<std::string, std::size_t> m;
  for (std::size_t i = 0; i < n; ++i)
    m.try_emplace(fmt::format("m{}", i), i);
  for (std::size_t i = 0; i < n; ++i)
    if (!m.count(fmt::format("m{}", i)))
      std::exit(1);
}

void bench_metrics(int reps) {
  std::vector<point> parsed, index;
  // A program may report 9,984 metrics of its own (16 of a run's 10,000 are accelbench's): the
  // limit stands for 10^4.
  constexpr std::size_t b = limits::k_max_program_metrics;
  for (std::size_t n : {std::size_t{1'000}, b, std::size_t{100'000}, std::size_t{1'000'000}}) {
    const std::string text = metric_lines(n);
    parsed.push_back({n, seconds_of(reps, [&] { protocol_and_add_metrics(text); }),
                      n > b ? "  (refused at line 9,986)" : ""});
  }
  print("metrics: protocol parse + add_metrics", parsed, b);
  for (std::size_t n : k_sizes)
    index.push_back({n, seconds_of(reps, [&] { metric_index(n); }), ""});
  print("metrics: the run's index alone, add + find", index);
  std::vector<point> bare;
  for (std::size_t n : k_sizes)
    bare.push_back({n, seconds_of(reps, [&] { bare_hash_map(n); }), ""});
  print("metrics: a bare std::unordered_map, the same", bare);
}

// ---------------------------------------------------------------------------------------------
// tags

std::string tagged_document(std::size_t n) {
  run r = base_run();
  r.tags.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    r.tags.push_back(fmt::format("tag-{}", i));
  return dump_json(results_document({r}, json::array(), json::array()));
}

// What `import` does with an export document: read and checked, then stored in one transaction.
// False when the document was refused.
bool import_document(const std::string& text, const fs::path& db_file) {
  std::vector<run> runs;
  try {
    runs = read_results_document(text, "bench.json");
  } catch (const input_error&) {
    return false;
  }
  fs::remove(db_file);
  auto db = store::store::open(db_file);
  db.insert_runs(runs);
  return true;
}

void bench_tags(int reps, const fs::path& dir) {
  std::vector<point> imported;
  for (std::size_t n : k_sizes_from_1e3) {
    const std::string text = tagged_document(n);
    bool stored = false;
    const double s = seconds_of(reps, [&] { stored = import_document(text, dir / "tags.db"); });
    imported.push_back({n, s, stored ? "" : "  (refused)"});
  }
  print("tags: import of an export document", imported);
}

// ---------------------------------------------------------------------------------------------
// samples

run sampled_run(std::size_t n) {
  run r = base_run();
  r.samples.clear();
  r.samples.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    r.samples.push_back({(int64_t)i, 1e-3 * (1 + (double)(i % 7) / 100), 10, json::object()});
  r.add_metric("time", 1e-3, "s", direction::lower_is_better);
  return r;
}

void bench_samples(int reps, const fs::path& dir) {
  std::vector<point> inserted, shown, exported, imported;
  const fs::path db_file = dir / "samples.db";
  for (std::size_t n : k_sizes) {
    const run r = sampled_run(n);
    const std::string doc = dump_json(results_document({r}, json::array(), json::array()));
    if (n > limits::k_max_samples) {
      imported.push_back({n,
                          seconds_of(reps,
                                     [&] {
                                       if (import_document(doc, dir / "import.db"))
                                         std::exit(1);
                                     }),
                          "  (refused)"});
      continue;
    }
    int64_t id = 0;
    inserted.push_back({n,
                        seconds_of(reps,
                                   [&] {
                                     fs::remove(db_file);
                                     auto db = store::store::open(db_file);
                                     run copy = r;
                                     db.insert_run(copy);
                                     id = copy.id;
                                   }),
                        ""});
    auto db = store::store::open(db_file, store::access::read_only);
    shown.push_back({n, seconds_of(reps, [&] { (void)db.get_run(id); }), ""});
    exported.push_back({n,
                        seconds_of(reps,
                                   [&] {
                                     const std::vector<run> runs = {*db.get_run(id)};
                                     (void)dump_json(
                                         results_document(runs, json::array(), json::array()), 2);
                                   }),
                        ""});
    imported.push_back({n, seconds_of(reps, [&] { import_document(doc, dir / "import.db"); }), ""});
  }
  print("samples: store insert", inserted);
  print("samples: show (the run read back whole)", shown);
  print("samples: export (read + document + text)", exported);
  print("samples: import of an export document", imported);
}

} // namespace

int main(int argc, char** argv) {
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--reps"))
      reps = std::max(1, std::atoi(argv[i + 1]));
  try {
    const fs::path dir =
        fs::temp_directory_path() / fmt::format("accelbench-bench-limits-{}", getpid());
    fs::create_directories(dir);
    std::cout << fmt::format("limits: {} tags, {} metrics, {} samples a run; median of {} reps\n",
                             limits::k_max_tags, limits::k_max_metrics, limits::k_max_samples,
                             reps);
    bench_metrics(reps);
    bench_tags(reps, dir);
    bench_samples(reps, dir);
    fs::remove_all(dir);
  } catch (const std::exception& e) {
    std::cerr << "accelbench_bench_limits: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
