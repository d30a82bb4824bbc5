// The values of `accelbench run`'s options, planned as a real run would: --set KEY=VALUE,
// --sweep KEY=V1,V2,..., --rule KEY=VALUE, and the workload, backend and --rules they go with.
// Input: one option per line, "OPTION ARGUMENT":
//   workload gemm | backend cpu | set M=1024 | sweep N=1,2 | rule repetitions=3 | rules kernel-v1
// Lines with another first word are ignored. --force is not offered: without it the 10,000-config
// bound must hold, whatever the sweeps multiply to. Property: planned, or refused with an exit-2
// error.
#include <sstream>

#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_plan.hpp"

using namespace accelbench;

namespace {

cli::run_options options_from(std::string_view text) {
  cli::run_options o;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    const std::string opt = line.substr(0, sp);
    const std::string arg = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (opt == "workload")
      o.workload = arg;
    else if (opt == "backend")
      o.backend = arg;
    else if (opt == "set")
      o.sets.push_back(arg);
    else if (opt == "sweep")
      o.sweeps.push_back(arg);
    else if (opt == "rule")
      o.rule_overrides.push_back(arg);
    else if (opt == "rules")
      o.rules = arg;
  }
  return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cli::run_options o = options_from(fuzz::as_text(data, size));
  fuzz::guarded([&] { fuzz::plan(o); });
  return 0;
}
