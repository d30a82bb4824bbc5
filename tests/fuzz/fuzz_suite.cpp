// Suites (`accelbench run --suite FILE`): the suite document, its entries' sets, sweeps, shapes
// and rules, planned as a real run would. Property: planned, or refused with an exit-2 error.
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/fuzz/fuzz_plan.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = fuzz::scratch_dir() / "suite.json";
  fuzz::write_file(file, fuzz::as_text(data, size));
  fuzz::guarded([&] {
    cli::run_options o;
    o.suite = file.string();
    fuzz::plan(o);
  });
  return 0;
}
