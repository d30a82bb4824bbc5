// Our export format (harness/core/results_document: `accelbench import FILE`, `import URL`,
// selector files). Property: any input is either refused with an exit-2 error, or accepted; what
// was accepted can be exported again without error and the export reads back (an import never
// stores something our own export then rejects).
#include "harness/core/results_document.hpp"
#include "harness/core/text_input.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace accelbench;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  fuzz::guarded([&] {
    json systems;
    std::vector<run> runs = read_results_document(text, "fuzz.json", &systems);
    std::string again;
    fuzz::must_succeed("export of an accepted document", [&] {
      again = dump_json(results_document(runs, systems, json::array()), 2);
    });
    fuzz::must_succeed("re-import of our own export",
                       [&] { read_results_document(again, "re-export.json", nullptr); });
  });
  return 0;
}
