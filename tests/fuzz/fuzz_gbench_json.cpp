// Google Benchmark JSON (`accelbench import --format gbench`, and the format guess of `import`).
// Property: refused with an exit-2 error, or accepted into runs that our own export writes and
// reads back.
#include "harness/core/text_input.hpp"
#include "reporters/gbench/gbench_import.hpp"
#include "reporters/json/json_export.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  fuzz::guarded([&] {
    reporters::looks_like_gbench_json(text);
    std::vector<run> runs = reporters::runs_from_gbench_json(text, "fuzz.json", "");
    std::string doc;
    fuzz::must_succeed("export of imported gbench runs", [&] {
      doc = dump_json(reporters::results_document(runs, json::array(), json::array()), 2);
    });
    fuzz::must_succeed("re-import of our own export",
                       [&] { reporters::read_results_document(doc, "re-export.json", nullptr); });
  });
  return 0;
}
