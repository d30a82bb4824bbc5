// Rulesets (harness/core/ruleset: `--rules FILE`): loaded and schema-checked from a file, every
// setting read the way the measurement, correctness and comparison code reads it, then a run
// planned under it. Property: loaded and usable, or refused with an exit-2 error.
#include "harness/core/ruleset.hpp"
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_plan.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = fuzz::scratch_dir() / "ruleset.json";
  fuzz::write_file(file, fuzz::as_text(data, size));
  fuzz::guarded([&] {
    ruleset r = load_ruleset(file.string());
    r.measurement();
    r.correctness_samples();
    r.min_effect_pct();
    r.alpha();
    for (const char* dtype : {"fp32", "bf16"}) {
      try {
        r.tolerance(dtype);
      } catch (const input_error&) {
        // no tolerance for this dtype: a documented answer, the next one may have one
      }
    }
    // A run of the first registered workload the ruleset applies to, with a --rule override.
    std::string name;
    for (const auto& a : r.applies_to)
      for (const workload* w : fuzz::workloads().all())
        if (name.empty() && (a == w->spec().name || a == w->spec().family || a == "*"))
          name = w->spec().name;
    if (name.empty())
      return;
    cli::run_options o;
    o.workload = name;
    o.rules = file.string();
    o.rule_overrides = {"repetitions=3"};
    try {
      fuzz::plan(o);
    } catch (const input_error&) {
      // e.g. the ruleset does not let repetitions be overridden: plan without the override
      o.rule_overrides.clear();
      fuzz::plan(o);
    }
  });
  return 0;
}
