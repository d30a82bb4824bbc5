// The runner's execution: one planned config into a run record, and what every run of a job
// shares. A failure inside a workload is data (the run is failed), never a crash of the caller.
#include <algorithm>
#include <new>

#include <fmt/format.h>

#include "harness/app/runner/runner.hpp"
#include "harness/core/conditions.hpp"
#include "harness/core/environment.hpp"
#include "harness/core/error.hpp"
#include "harness/core/ranks.hpp"
#include "harness/dist/dist.hpp"

namespace accelbench::runner {

namespace {

// A failure or INVALID reason of another rank, told to rank 0 (which stores the run).
void agree_on_outcome(run& r) {
  if (!dist::distributed())
    return;
  const std::string failed = dist::first_nonempty(
      r.status == run_status::failed ? fmt::format("rank {}: {}", dist::rank(), r.status_reason)
                                     : "");
  if (!failed.empty() && r.status != run_status::failed)
    r.mark_failed(failed);
  std::string invalid;
  if (!r.valid)
    invalid = fmt::format("rank {}: {}", dist::rank(), fmt::join(r.invalid_reasons, "; "));
  const std::string first_invalid = dist::first_nonempty(invalid);
  if (!first_invalid.empty() && r.valid)
    r.mark_invalid(first_invalid);
  if (json ranks = summarize_rank_times(r.samples); !ranks.is_null())
    r.extra["ranks"] = ranks;
}

// Runs one planned config into r: a failure inside the workload is data (the run is failed), not
// a crash of the whole job; the machine's conditions around it are judged. The workload is not
// changed by running: execute gets the run it fills and its context, nothing else.
void execute_one(const planned& p, run& r, const environment& env) {
  run_context ctx;
  ctx.rules = &p.rules;
  ctx.log = env.log;
  ctx.interactive = env.interactive;
  ctx.seed = env.seed;
  ctx.cancel = env.cancel;
  const machine_state before = read_machine_state();
  try {
    p.w->execute(p.cfg, r, ctx);
  } catch (const error& e) {
    r.mark_failed(e.what());
  } catch (const std::bad_alloc&) {
    r.mark_failed("out of memory");
  }
  judge_conditions(r, conditions_of(p.rules), before, read_machine_state());
}

// The run record of one config before it runs: its config, system, rules, environment and labels.
run labelled(const planned& p, const environment& env, int64_t round) {
  run r;
  r.uuid = new_uuid();
  r.cfg = p.cfg;
  r.system = env.system;
  r.ruleset = p.rules.id.empty() ? "none" : p.rules.id;
  r.user_settings = p.user;
  r.effective_settings = {{"ruleset", p.rules.doc}};
  r.environment = env.env;
  r.fingerprint = env.fingerprint;
  r.tags = env.tags;
  if (!p.label.empty())
    r.extra["catalogue_entry"] = p.label;
  r.extra["job_id"] = env.job_id; // selectors name a job by it (job=latest, job=previous)
  if (env.rounds > 1) {
    r.extra["job_round"] = round + 1;
    r.extra["job_rounds"] = env.rounds;
  }
  return r;
}

} // namespace

environment describe_job(const request& o, const job_plan& plan) {
  environment j;
  j.env = capture_environment();
  if (json topo = dist::topology(); !topo.is_null())
    j.env["distributed"] = topo; // collective
  j.fingerprint = environment_fingerprint(j.env);
  j.job_id = new_uuid();
  j.system = o.system.empty() ? j.env.value("hostname", "localhost") : o.system;
  j.tags = o.tags;
  if (!plan.suite.empty())
    j.tags.push_back("suite:" + plan.suite);
  // --rounds, else the suite's rounds, else the largest measurement.rounds of the job's rules.
  j.rounds = o.rounds > 0 ? o.rounds : plan.suite_rounds;
  if (j.rounds <= 0) {
    j.rounds = 1;
    for (const auto& p : plan.configs)
      j.rounds = std::max(j.rounds, p.rules.measurement().rounds);
  }
  j.seed = o.seed;
  return j;
}

std::vector<std::pair<int64_t, size_t>> job_order(const std::vector<planned>& plan,
                                                  int64_t rounds) {
  std::vector<std::pair<int64_t, size_t>> order;
  for (int64_t round = 0; round < rounds; ++round)
    for (size_t i = 0; i < plan.size(); ++i)
      if (round == 0 || plan[i].skip_reason.empty())
        order.emplace_back(round, i);
  return order;
}

run run_one(const planned& p, const environment& env, int64_t round) {
  run r = labelled(p, env, round);
  r.started_at = now_iso8601();
  if (!p.skip_reason.empty())
    r.mark_skipped(p.skip_reason);
  else
    execute_one(p, r, env);
  drop_impossible_values(r); // before the ranks agree: rank 0's INVALID reason is every rank's
  agree_on_outcome(r);
  r.finished_at = now_iso8601();
  return r;
}

} // namespace accelbench::runner
