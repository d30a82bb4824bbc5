#pragma once
// For the targets that go through `accelbench run`'s planning (suites, shape catalogues,
// --set/--sweep/--rule values): the real registry, and cmd_run stopped after planning, so every
// config is resolved and checked as a real run would be, without running or storing anything.
#include "harness/app/cli/commands.hpp"
#include "harness/app/cli/register_all.hpp"

namespace accelbench::fuzz {

inline const registry& workloads() {
  static const registry reg = [] {
    registry r;
    cli::register_all(r);
    return r;
  }();
  return reg;
}

inline void plan(cli::run_options o) {
  o.plan_only = true;
  o.quiet = true;
  cli::cmd_run(workloads(), o);
}

} // namespace accelbench::fuzz
