// The plugin worker (workloads/plugin/plugin_worker.hpp) with measurements of the test's own, in a
// real forked worker: what a worker measures comes back whole, and the ends the hostile plugin
// cannot reach from the command line (a malformed message, an exception, a cancel) fail the run.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <csignal>

#include "harness/core/text_input.hpp"
#include "workloads/plugin/plugin_worker.hpp"

using namespace accelbench;

namespace {

run fresh_run() {
  run r;
  r.uuid = new_uuid();
  r.cfg.workload = "test.worker";
  r.cfg.backend = "cpu";
  r.cfg.values["n"] = "1";
  return r;
}

// What a measurement writes: samples, metrics, validity, extra, settings applied.
void measured(run& r) {
  for (int i = 0; i < 3; ++i)
    r.samples.push_back({i, 1e-3 * (i + 1), 10, json{{"clock", i}}});
  r.add_metric("tflops", 1.5, "TFLOP/s", direction::higher_is_better);
  r.add_metric("odd", std::nan(""), "", direction::higher_is_better);
  r.mark_invalid("a reason of the measurement");
  r.extra["implementation"] = "test";
  r.effective_settings["measurement_applied"] = {{"repetitions", 3}};
}

} // namespace

TEST_CASE("what the worker measured comes back whole, the run's identity untouched") {
  run r = fresh_run();
  r.system = "here";
  plugin::run_in_worker(r,
                        [](run& w) {
                          measured(w);
                          w.system = "changed in the worker";
                        },
                        {});
  INFO(to_json(r).dump());
  CHECK(r.status == run_status::ok);
  REQUIRE(r.samples.size() == 3);
  CHECK(r.samples[2].value == 3e-3);
  CHECK(r.samples[2].iterations == 10);
  CHECK(r.samples[2].extra["clock"] == 2);
  REQUIRE(r.metrics.size() == 2);
  CHECK(r.find_metric("tflops")->value == 1.5);
  CHECK(std::isnan(r.find_metric("odd")->value)); // non-finite stays non-finite, for the rules
  CHECK_FALSE(r.valid);
  CHECK(r.invalid_reasons == std::vector<std::string>{"a reason of the measurement"});
  CHECK(r.extra["implementation"] == "test");
  CHECK(r.effective_settings["measurement_applied"]["repetitions"] == 3);
  CHECK(r.system == "here");
}

TEST_CASE("a worker killed by a signal, or exiting, fails the run naming it") {
  run r = fresh_run();
  plugin::run_in_worker(r, [](run&) { std::raise(SIGBUS); }, {});
  CHECK(r.status == run_status::failed);
  CHECK(r.status_reason == "the plugin's worker was killed by SIGBUS");
  run e = fresh_run();
  plugin::run_in_worker(e, [](run&) { std::exit(0); }, {});
  CHECK(e.status_reason.find("exited with code 0 before sending its run") != std::string::npos);
}

TEST_CASE("an exception in the worker's measurement fails the run with its message") {
  run r = fresh_run();
  plugin::run_in_worker(r, [](run&) { throw std::runtime_error("device lost"); }, {});
  CHECK(r.status == run_status::failed);
  CHECK(r.status_reason == "device lost");
}

TEST_CASE("a cancel (Ctrl-C) kills the worker at once, whatever its timeout") {
  std::atomic<bool> cancel{true};
  run r = fresh_run();
  plugin::run_in_worker(r,
                        [](run&) {
                          for (volatile int spin = 1; spin;) {
                          }
                        },
                        {0, &cancel});
  CHECK(r.status == run_status::failed);
  CHECK(r.status_reason == "interrupted (Ctrl-C): the plugin's worker was killed");
}

TEST_CASE("a message that is not this run is refused, and nothing of it is taken") {
  run r = fresh_run();
  CHECK_THAT(plugin::take_worker_run(r, "garbage"), Catch::Contains("not valid JSON"));
  CHECK_THAT(plugin::take_worker_run(r, R"({"uuid": "x"})"), Catch::Contains("malformed run"));
  CHECK_THAT(plugin::take_worker_run(r, "[1]"), Catch::Contains("not a JSON object"));
  run other = fresh_run();
  measured(other);
  const std::string other_text = dump_json(to_json(other));
  CHECK_THAT(plugin::take_worker_run(r, other_text), Catch::Contains("not " + r.uuid));
  CHECK_THAT(plugin::take_worker_run(r, other_text.substr(0, other_text.size() / 2)),
             Catch::Contains("not valid JSON"));
  CHECK(r.samples.empty());
  CHECK(r.metrics.empty());
  CHECK(r.valid);
}

namespace {

// Threads of one OpenMP parallel region of two.
int openmp_threads() {
  int n = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp atomic
    n += 1;
  }
  return n;
}

} // namespace

TEST_CASE("a worker can use OpenMP after this process did (GNU OpenMP's threads do not survive a "
          "fork)") {
  REQUIRE(openmp_threads() == 2); // the runtime's threads started in this process
  run r = fresh_run();
  // Without the threads ended before the fork, the worker's region waits for them until killed.
  plugin::run_in_worker(r, [](run& w) { w.extra["threads"] = openmp_threads(); }, {30, nullptr});
  INFO(r.status_reason);
  CHECK(r.status == run_status::ok);
  CHECK(r.extra["threads"] == 2);
  CHECK(openmp_threads() == 2); // and this process goes on using it
}
