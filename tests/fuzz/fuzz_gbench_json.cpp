// Google Benchmark JSON (`accelbench import --format gbench`, and the format guess of `import`).
// Property: refused with an exit-2 error, or accepted into runs that our own export writes and
// reads back.
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "importers/gbench/gbench_import.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  fuzz::guarded([&] {
    importers::looks_like_gbench_json(text);
    std::vector<run> runs = importers::runs_from_gbench_json(text, "fuzz.json", "");
    std::string doc;
    fuzz::must_succeed("export of imported gbench runs", [&] {
      doc = dump_json(results_document(runs, json::array(), json::array()), 2);
    });
    fuzz::must_succeed("re-import of our own export",
                       [&] { read_results_document(doc, "re-export.json", nullptr); });
  });
  return 0;
}
