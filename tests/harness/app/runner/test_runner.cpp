// The runner (harness/app/runner) driven without the CLI: a registry with a workload of this file,
// planned and run config by config, as a front end other than `accelbench run` would.
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <new>
#include <sstream>

#include <catch2/catch.hpp>

#include "harness/app/runner/runner.hpp"
#include "harness/core/error.hpp"
#include "harness/core/results_document.hpp"

using namespace accelbench;

namespace {

// A kernel workload whose `mode` axis says what its run does; it counts its executions (through
// a counter it was given, since execute cannot change the workload itself).
class probe_workload : public workload {
public:
  explicit probe_workload(std::atomic<int>& calls) : m_calls(calls) {
    m_spec.name = "probe";
    m_spec.family = "kernel";
    m_spec.backends = {"cpu"};
    m_spec.default_ruleset = "kernel-v1";
    m_spec.primary_metric = "tflops";
    m_spec.axes = {{"n", axis_type::integer, "4", {}, 1, "a size"},
                   {"mode",
                    axis_type::string,
                    "ok",
                    {"ok", "fail", "oom", "unavailable", "impossible"},
                    1,
                    "what"}};
  }
  const workload_spec& spec() const override { return m_spec; }
  std::string unavailable_reason(const config& cfg) const override {
    return cfg.at("mode") == "unavailable" ? "not on this machine" : "";
  }
  void execute(const config& cfg, run& out, run_context& ctx) const override {
    ++m_calls;
    if (cfg.at("mode") == "fail")
      throw input_error("the probe failed");
    if (cfg.at("mode") == "oom")
      throw std::bad_alloc();
    if (cfg.at("mode") == "impossible")
      return impossible_values(out);
    *ctx.log << "probe " << cfg.at("n") << " seed " << ctx.seed << "\n";
    for (int64_t i = 0; i < cfg.get_int("n"); ++i)
      out.samples.push_back({i, 1e-3 * double(i + 1), 1, json::object()});
    out.metrics.push_back({"tflops", double(cfg.get_int("n")), "TFLOP/s"});
  }

private:
  // Numbers no comparison can use, where a workload's arithmetic puts them: rates over a time
  // that rounds to 0, a spread of overflowed sums, a FLOP count of inf.
  static void impossible_values(run& out) {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> values = {1e-3, 0, inf, 2e-3, nan, -1};
    for (size_t i = 0; i < values.size(); ++i)
      out.samples.push_back({int64_t(i), values[i], 1, json{{"clock_mhz", i == 3 ? nan : 1500.0}}});
    out.add_metric("time", 1.5e-3, "s", direction::lower_is_better);
    out.add_metric("tflops", inf, "TFLOP/s", direction::higher_is_better);
    out.add_metric("cv", nan, "", direction::lower_is_better);
    out.add_metric("zero", 0, "", direction::lower_is_better);
    out.extra["flops_per_iteration"] = inf;
    out.extra["ranks"] = {{"median_s", {1e-3, -inf, 2e-3}}};
  }
  workload_spec m_spec;
  std::atomic<int>& m_calls;
};

struct fixture {
  std::atomic<int> calls{0};
  registry reg;
  std::ostringstream log;
  fixture() { reg.add(std::make_unique<probe_workload>(calls)); }

  runner::environment environment_of(const runner::request& r, const runner::job_plan& p) {
    runner::environment env = runner::describe_job(r, p);
    env.log = &log;
    return env;
  }
};

runner::request probe_request() {
  runner::request r;
  r.workload = "probe";
  r.system = "bench-01";
  r.tags = {"nightly"};
  r.seed = 42;
  return r;
}

} // namespace

TEST_CASE("plan resolves every config of a sweep with its rules before anything runs") {
  fixture f;
  runner::request r = probe_request();
  r.sweeps = {"n=2,3"};
  r.rule_overrides = {"measurement.repetitions=3"};
  const runner::job_plan p = runner::plan(f.reg, r);
  REQUIRE(p.configs.size() == 2);
  CHECK(p.configs[0].cfg.key() == "probe/cpu/mode=ok,n=2");
  CHECK(p.configs[1].cfg.key() == "probe/cpu/mode=ok,n=3");
  for (const auto& c : p.configs) {
    CHECK(c.rules.id == "kernel-v1");
    CHECK(c.user.dump() == R"({"measurement.repetitions":3})");
    CHECK(c.skip_reason.empty());
  }
  CHECK(f.calls == 0);
}

TEST_CASE("plan refuses bad input with the error a front end reports") {
  fixture f;
  runner::request r = probe_request();
  r.backend = "tpu";
  CHECK_THROWS_AS(runner::plan(f.reg, r), input_error);
  r = probe_request();
  r.sets = {"n"};
  CHECK_THROWS_AS(runner::plan(f.reg, r), usage_error);
  r = probe_request();
  r.sets = {"mode=unavailable"}; // one config: refused, not skipped
  CHECK_THROWS_AS(runner::plan(f.reg, r), input_error);
}

TEST_CASE("run_one measures a planned config into a labelled run record") {
  fixture f;
  const runner::request r = probe_request();
  const runner::job_plan p = runner::plan(f.reg, r);
  const runner::environment env = f.environment_of(r, p);
  REQUIRE(env.rounds >= 1);
  const run out = runner::run_one(p.configs.at(0), env);
  CHECK(f.calls == 1);
  CHECK(out.status == run_status::ok);
  CHECK(out.cfg.key() == p.configs[0].cfg.key());
  CHECK(out.system == "bench-01");
  CHECK(out.tags == std::vector<std::string>{"nightly"});
  CHECK(out.ruleset == "kernel-v1");
  CHECK(out.fingerprint == env.fingerprint);
  CHECK(out.extra.at("job_id") == env.job_id);
  CHECK(out.samples.size() == 4);
  CHECK_FALSE(out.started_at.empty());
  CHECK_FALSE(out.finished_at.empty());
  CHECK(f.log.str() == "probe 4 seed 42\n"); // the workload got the environment's log and seed
}

TEST_CASE("a failure inside a workload is a failed run, never a throw") {
  fixture f;
  runner::request r = probe_request();
  r.sweeps = {"mode=fail,oom"};
  const runner::job_plan p = runner::plan(f.reg, r);
  const runner::environment env = f.environment_of(r, p);
  const run failed = runner::run_one(p.configs.at(0), env);
  CHECK(failed.status == run_status::failed);
  CHECK(failed.status_reason == "the probe failed");
  const run oom = runner::run_one(p.configs.at(1), env);
  CHECK(oom.status == run_status::failed);
  CHECK(oom.status_reason == "out of memory");
}

TEST_CASE("a config that cannot run here is recorded as skipped, once, and never executed") {
  fixture f;
  runner::request r = probe_request();
  r.sweeps = {"mode=ok,unavailable"};
  r.rounds = 2;
  const runner::job_plan p = runner::plan(f.reg, r);
  REQUIRE(p.configs.size() == 2);
  CHECK(p.configs[1].skip_reason == "not on this machine");
  const runner::environment env = f.environment_of(r, p);
  CHECK(env.rounds == 2);
  const auto order = runner::job_order(p.configs, env.rounds);
  using step = std::pair<int64_t, size_t>;
  CHECK(order == std::vector<step>{{0, 0}, {0, 1}, {1, 0}}); // interleaved; the skip once
  const run skipped = runner::run_one(p.configs[1], env, 0);
  CHECK(skipped.status == run_status::skipped);
  CHECK(skipped.status_reason == "not on this machine");
  CHECK(f.calls == 0);
  const run second = runner::run_one(p.configs[0], env, 1);
  CHECK(second.extra.at("job_round") == 2);
  CHECK(second.extra.at("job_rounds") == 2);
  CHECK(f.calls == 1);
}

namespace {

bool has_reason(const run& r, const std::string& text) {
  return std::find(r.invalid_reasons.begin(), r.invalid_reasons.end(), text) !=
         r.invalid_reasons.end();
}

std::string reason_starting(const run& r, const std::string& start) {
  for (const auto& why : r.invalid_reasons)
    if (why.rfind(start, 0) == 0)
      return why;
  return "";
}

} // namespace

TEST_CASE("a number that is not finite is never a VALID result: dropped, named, the run INVALID") {
  fixture f;
  runner::request r = probe_request();
  r.sweeps = {"mode=ok,impossible"};
  const runner::job_plan p = runner::plan(f.reg, r);
  const runner::environment env = f.environment_of(r, p);
  const run ok = runner::run_one(p.configs.at(0), env);
  for (const auto& why : ok.invalid_reasons) // the load may judge it; the rule never does
    CHECK(why.find("not stored") == std::string::npos);
  CHECK(ok.samples.size() == 4);

  const run out = runner::run_one(p.configs.at(1), env);
  INFO(json(out.invalid_reasons).dump());
  CHECK(out.status == run_status::ok);
  CHECK_FALSE(out.valid);
  CHECK(has_reason(out, "metric tflops is inf (not a finite number): not stored"));
  CHECK(has_reason(out, "metric cv is nan (not a finite number): not stored"));
  CHECK(has_reason(out, "sample 1 is 0 s and 3 more (not a finite number > 0): not stored"));
  // One reason for the extra numbers, naming the first by its path (the judged conditions copy
  // the CV's NaN too) and counting the rest.
  const std::string extra = reason_starting(out, "extra.");
  CHECK(extra.find(" more (not a finite number): not stored") != std::string::npos);
  // What is left is what was finite: the two good samples (one without its NaN clock), the
  // finite metrics (0 is a number), the finite ranks.
  REQUIRE(out.samples.size() == 2);
  CHECK(out.samples[0].index == 0);
  CHECK(out.samples[1].index == 3);
  CHECK_FALSE(out.samples[1].extra.contains("clock_mhz"));
  CHECK(out.samples[0].extra.at("clock_mhz") == 1500.0);
  CHECK(out.find_metric("time"));
  CHECK(out.find_metric("zero"));
  CHECK_FALSE(out.find_metric("tflops"));
  CHECK_FALSE(out.find_metric("cv"));
  CHECK_FALSE(out.extra.contains("flops_per_iteration"));
  CHECK(out.extra.at("ranks").at("median_s") == json::array({1e-3, 2e-3}));
  // So the run goes out and comes back as it is: every value survives the results document.
  const run back = run_from_json(json::parse(to_json(out).dump()));
  CHECK(storable_run_problem(back).empty());
  CHECK(to_json(back) == to_json(out));
}
